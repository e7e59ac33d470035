"""One PettingZoo agent's actions on the bus, for ``pettingzoo.env``.

A Discrete space is played by name (``labels``, else the numbers), and the names legal now come
from the observation's ``action_mask`` where the env has one. Any other space (Box, MultiDiscrete,
MultiBinary, Tuple, Dict) takes a list of numbers checked against the space (``spaces.parse_action``,
as ``gym.env`` does), so a continuous-control world needs no per-game code either.

The idle action is what the world applies for an agent that sent no action or an invalid one, and,
on a realtime clock, on every frame before the agent's first answer. PettingZoo has no general
"do nothing": a Discrete space's idle is the ``idle`` param's name, if given (otherwise a uniform
legal move, and a realtime clock is refused); a vector space's default is its zero vector, clipped
into the space (no force, no motion, for MPE- and pistonball-style controls).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces as gs

from kernel.sdk.plain import plain
from nodes.game.gym import spaces as sp

IdleParam = str | list[float] | list[int] | dict[str, Any] | None
"""The ``idle`` param: one action for every agent, or a mapping agent -> action."""


@dataclass(slots=True)
class Moves:
    """What one agent may send and what the env gets for it."""

    agent: str
    space: gs.Space
    names: list[str] | None
    """A Discrete space's action names (index ``start + i`` is ``names[i]``); None for other spaces."""
    idle: Any
    """The env value applied for no action (None: a uniform legal move, Discrete only)."""
    idle_body: Any
    """The idle action as an agent would send it (``obs["idle"]``); None where there is none."""

    @classmethod
    def make(cls, env: str, agent: str, space: gs.Space, labels: list[str] | None, idle: IdleParam,
             realtime: bool) -> Moves:
        """An agent's moves from the params; a ValueError naming ``params.labels`` or ``params.idle``,
        the agent and what is allowed."""
        if labels is not None and (not isinstance(space, gs.Discrete) or len(labels) != int(space.n)):
            raise ValueError(f"params.labels: {len(labels)} names given, but {env}'s agent {agent} has the action "
                             f"space {space} (labels name a Discrete space's actions, one each)")
        if isinstance(idle, dict):
            if agent not in idle:
                raise ValueError(f"params.idle: no idle action for agent {agent} (the mapping has {sorted(idle)}; "
                                 "give every agent one, or one action for all)")
            idle = idle[agent]
        names = (list(labels) if labels is not None else [str(i + int(space.start)) for i in range(int(space.n))]
                 ) if isinstance(space, gs.Discrete) else None
        if names is not None:
            if idle is not None and idle not in names:
                raise ValueError(f"params.idle: {idle!r} is not an action of {agent} (actions: {names})")
            if idle is None and realtime:
                raise ValueError(f"params.idle: a realtime clock applies each agent's idle action on every frame it "
                                 f"has not answered, and {env} has no known 'do nothing': name one of {agent}'s "
                                 f"actions {names} (e.g. idle: {names[0]!r})")
            value = None if idle is None else names.index(idle) + int(space.start)
            return cls(agent, space, names, value, idle)
        if idle is None:
            return cls(agent, space, None, zero(space), None)
        try:
            return cls(agent, space, None, sp.parse_action(space, idle), plain(idle))
        except (ValueError, TypeError) as exc:
            raise ValueError(f"params.idle: {idle!r} is not an action of {agent}, whose action space is {space} "
                             f"({exc}; give a list of numbers in the space)") from None

    def legal(self, mask: Any) -> list[str]:
        """The names legal now (every name where there is no mask); empty for a vector space."""
        names = self.names or []
        return [n for n, ok in zip(names, mask, strict=False) if ok] if isinstance(mask, list) else list(names)

    def parse(self, body: Any, legal: list[str]) -> tuple[Any, bool]:
        """(the env value for ``body``, or None where there is none; whether ``body`` was invalid)."""
        if body is None:
            return None, False
        if self.names is not None:
            if isinstance(body, str) and body in legal:
                return self.names.index(body) + int(self.space.start), False  # type: ignore[attr-defined]
            return None, True
        try:
            return sp.parse_action(self.space, body), False
        except (ValueError, TypeError):
            return None, True

    def fallback(self, rng: np.random.Generator, legal: list[str]) -> Any:
        """The move for an agent that sent none or an invalid one: its idle action, else (a Discrete
        space with no idle) a uniform legal move, since the world must move on."""
        if self.idle is not None:
            return self.idle
        names = self.names or []
        pool = [names.index(n) for n in legal] or list(range(len(names)))
        return int(rng.choice(pool)) + int(self.space.start)  # type: ignore[attr-defined]


def zero(space: gs.Space) -> Any:
    """A vector space's "do nothing": zeros clipped into the space (a MultiDiscrete's ``start``)."""
    if isinstance(space, gs.Box):
        return np.clip(np.zeros(space.shape, dtype=space.dtype), space.low, space.high).astype(space.dtype)
    if isinstance(space, gs.MultiDiscrete):
        return np.asarray(space.start, dtype=space.dtype).copy()
    if isinstance(space, gs.MultiBinary):
        return np.zeros(space.shape, dtype=space.dtype)
    if isinstance(space, gs.Tuple):
        return tuple(zero(s) for s in space.spaces)
    if isinstance(space, gs.Dict):
        return {k: zero(s) for k, s in space.spaces.items()}
    raise ValueError(f"{type(space).__name__} action spaces are not supported (Discrete, Box, MultiDiscrete, "
                     "MultiBinary, Tuple, Dict are)")
