"""What an environment node declares about its observations and actions, as plain data.

A bridge that plays a graph as a Gymnasium or PettingZoo env (``kernel.gym``) must know, without
per-game code, which gymnasium spaces to offer and how a value of them maps to the bus. The env
node says it once, through the ``spaces`` service of ``EnvNode`` (``EnvNode.spaces()``): for each
output that carries observations, an :class:`ObsSpaces`::

    {"obs": {"observation": {"key": "observation", "space": {"type": "Box", "shape": [4], ...}},
             "action": {"space": {"type": "Discrete", "n": 2, "start": 0}, "names": ["0", "1"]}}}

A space is described by a mapping with a ``type`` (Gymnasium's class name) and its numbers, the
format of ``kernel.sdk.gymspaces.describe``. It is data, not gymnasium objects, so that the
declaration crosses the bus (msgpack) and a node that never imports gymnasium can still declare
(a text observation and named actions, the default). This module has no gymnasium import for
that reason; ``kernel.sdk.gymspaces`` turns a description into a space.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["ActionSpace", "ObsSpaces", "ObservationSpace", "TEXT_LENGTH", "TYPES", "check", "discrete", "listed",
           "text"]

TEXT_LENGTH = 65536
"""The longest text observation a text declaration promises (a longer text is cut)."""

TYPES = {
    "Discrete": {"n"}, "Box": {"shape", "dtype", "low", "high"}, "MultiDiscrete": {"nvec"},
    "MultiBinary": {"n"}, "Text": {"max_length"}, "Dict": {"spaces"}, "Tuple": {"spaces"},
}
"""The space types a declaration may use, and the keys each needs."""


class ObservationSpace(TypedDict):
    """Where the observation is in an ``obs`` body, and its space: ``key`` names the body's key that
    holds it; ``key`` None means the space is a Dict whose keys are keys of the body."""

    key: str | None
    space: dict[str, Any]


class ActionSpace(TypedDict, total=False):
    """What the caller's action is and what goes on the bus for it. ``names``: the space is
    Discrete and index ``start + i`` sends ``names[i]`` (agents send action names). ``listed``: the
    actions change with the state; index i sends the i-th of the current observation's
    ``actions`` (no space: the bridge picks how many). Neither: the space's value itself is sent,
    as lists of numbers (a Box's vector), and the env checks it."""

    space: dict[str, Any]
    names: list[str]
    listed: bool


class ObsSpaces(TypedDict):
    """One observation output's declaration: what its bodies hold, and the action that answers them."""

    observation: ObservationSpace
    action: ActionSpace


def text(max_length: int = TEXT_LENGTH) -> ObservationSpace:
    """The observation is the body's ``text`` (the convention's text view), any printable characters."""
    return {"key": "text", "space": {"type": "Text", "max_length": int(max_length), "min_length": 0}}


def discrete(names: list[str]) -> ActionSpace:
    """Actions by name: index i sends ``names[i]``."""
    return {"space": {"type": "Discrete", "n": len(names), "start": 0}, "names": list(names)}


def listed() -> ActionSpace:
    """Actions that change with the state: index i sends the i-th of the observation's ``actions``."""
    return {"listed": True}


def check(declared: Any, where: str) -> dict[str, ObsSpaces]:
    """``declared`` (a ``spaces`` reply) checked; a ValueError naming ``where`` and the key that is wrong."""
    if not isinstance(declared, dict) or not declared:
        raise ValueError(f"{where}: expected a mapping of observation output -> "
                         f"{{observation, action}}, got {declared!r:.200}")
    for output, one in declared.items():
        at = f"{where}[{output!r}]"
        if not isinstance(one, dict) or set(one) != {"observation", "action"}:
            raise ValueError(f"{at}: expected the keys 'observation' and 'action', got {one!r:.200}")
        obs, action = one["observation"], one["action"]
        if not isinstance(obs, dict) or set(obs) != {"key", "space"}:
            raise ValueError(f"{at}.observation: expected the keys 'key' and 'space', got {obs!r:.200}")
        if obs["key"] is not None and not isinstance(obs["key"], str):
            raise ValueError(f"{at}.observation.key: expected an obs key (a string) or None, got {obs['key']!r}")
        check_space(obs["space"], f"{at}.observation.space")
        if obs["key"] is None and obs["space"]["type"] != "Dict":
            raise ValueError(f"{at}.observation: key None needs a Dict space (its keys are the body's keys), "
                             f"got {obs['space']['type']}")
        if not isinstance(action, dict) or not set(action) <= {"space", "names", "listed"}:
            raise ValueError(f"{at}.action: expected some of 'space', 'names', 'listed', got {action!r:.200}")
        if action.get("listed"):
            continue
        if "space" not in action:
            raise ValueError(f"{at}.action: needs a 'space' (or listed: true)")
        check_space(action["space"], f"{at}.action.space")
        names = action.get("names")
        if names is not None:
            space = action["space"]
            if space["type"] != "Discrete" or not isinstance(names, list) or len(names) != space["n"] \
                    or not all(isinstance(n, str) for n in names):
                raise ValueError(f"{at}.action.names: expected {space.get('n')} strings for a Discrete space, "
                                 f"got {names!r:.200} for {space['type']}")
    return declared


def check_space(space: Any, where: str) -> None:
    """A space description checked: a known ``type`` with the keys it needs, parts checked in turn."""
    if not isinstance(space, dict) or space.get("type") not in TYPES:
        kind = space.get("type") if isinstance(space, dict) else type(space).__name__
        raise ValueError(f"{where}: space type {kind!r} is not one of {', '.join(TYPES)}")
    missing = TYPES[space["type"]] - set(space)
    if missing:
        raise ValueError(f"{where}: a {space['type']} space needs {', '.join(sorted(missing))}")
    parts = space.get("spaces")
    if space["type"] == "Dict":
        if not isinstance(parts, dict) or not parts:
            raise ValueError(f"{where}.spaces: expected a non-empty mapping of key -> space")
        for key, sub in parts.items():
            check_space(sub, f"{where}.spaces[{key!r}]")
    elif space["type"] == "Tuple":
        if not isinstance(parts, list) or not parts:
            raise ValueError(f"{where}.spaces: expected a non-empty list of spaces")
        for i, sub in enumerate(parts):
            check_space(sub, f"{where}.spaces[{i}]")
