"""The gymnasium spaces a graph offers its caller for one agent, from what the env node declares.

``kernel.gym`` plays a graph as a Gymnasium or PettingZoo env. Which observation and action spaces
it offers, and how their values cross the bus, is not written per game here: the env node declares
them (its ``spaces`` service, ``kernel.sdk.spaces``), and :class:`AgentSpaces` builds the gymnasium
spaces from that declaration, turns each ``obs`` body into a value of the observation space, and
each action into the body the env expects (a name, or a list of numbers).

An env node without a ``spaces`` service (one not built on ``EnvNode``, or a node in another
language) is taken to declare the default: its text view, and the ``actions`` of its ``describe``.
"""

from __future__ import annotations

from typing import Any

from gymnasium import spaces

import kernel.sdk.spaces as decl
from kernel.sdk.gymspaces import build, conform, to_bus

__all__ = ["AgentSpaces", "from_describe"]


def from_describe(described: dict[str, Any], outputs: list[str]) -> dict[str, decl.ObsSpaces]:
    """The default declaration of an env node that serves ``describe`` but no ``spaces``: each
    output's text view, and the described ``actions`` (none: the observation's ``actions``)."""
    names = [str(a) for a in described.get("actions") or []]
    return {out: {"observation": decl.text(), "action": decl.discrete(names) if names else decl.listed()}
            for out in outputs}


class AgentSpaces:
    """One agent's observation and action spaces, and its values to and from the bus."""

    def __init__(self, declared: decl.ObsSpaces, where: str, *, max_actions: int, max_text: int | None = None) -> None:
        self.where = where
        observation, action = declared["observation"], declared["action"]
        self.key: str | None = observation["key"]
        space = dict(observation["space"])
        if max_text is not None and space["type"] == "Text":
            space["max_length"] = int(max_text)
        self.observation_space: spaces.Space = build(space, f"{where}.observation.space")
        self.listed = bool(action.get("listed"))
        """The actions change with the state: index i is the i-th of the observation's ``actions``."""
        self.names: list[str] | None = action.get("names")
        if self.listed:
            self.action_space: spaces.Space = spaces.Discrete(max_actions)
        else:
            self.action_space = build(action["space"], f"{where}.action.space")
        discrete = isinstance(self.action_space, spaces.Discrete)
        # A plain int in a Discrete's range needs no gymnasium check (its contains() builds an np.iinfo each call)
        self._first = int(self.action_space.start) if discrete else 0  # type: ignore[attr-defined]
        self._end = self._first + int(self.action_space.n) if discrete else 0  # type: ignore[attr-defined]

    @property
    def actions(self) -> list[str]:
        """The fixed action names (empty where they change with the state, or the actions are numbers)."""
        return list(self.names or [])

    def observation(self, body: dict[str, Any]) -> Any:
        """An ``obs`` body as a value of the observation space."""
        if self.key is None:
            value: Any = body
        elif self.key in body or isinstance(self.observation_space, spaces.Text):
            value = body.get(self.key)
        else:
            raise ValueError(f"{self.where}: the obs body has no {self.key!r}, where the declaration says the "
                             f"observation is (keys: {', '.join(sorted(map(str, body)))})")
        return conform(self.observation_space, value, f"{self.where} observation")

    def action(self, action: Any, body: dict[str, Any]) -> Any:
        """What goes on the bus for ``action``, given the observation ``body`` it answers: an action
        name, None (an index past a listed observation's actions), or the value as lists of numbers.
        A ValueError when ``action`` is not in the action space."""
        if not (type(action) is int and self._first <= action < self._end) and not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        if self.listed:
            current = list(body.get("actions") or [])
            return current[int(action)] if int(action) < len(current) else None
        if self.names is not None:
            return self.names[int(action) - int(self.action_space.start)]  # type: ignore[attr-defined]
        return to_bus(action)
