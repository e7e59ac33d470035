"""Action names: MageBench's spelling of Google Research Football's 'full' action set.

Agents speak names (``action_left``), the engine wants indices into gfootball's ``full`` action
set; this module is the one place that maps between them. MageBench offers 16 of the names to its
models (the benchmark's own prompt); the idle action exists in the engine and is what the idle
baseline plays, and ``action_builtin_ai`` is used only inside the environment (a pass in flight is
played on by the built-in AI).
"""

from __future__ import annotations

import math

# gfootball's 'full' action set, in its index order (indices 0-19 are stable across releases).
FULL_ACTION_CODES: dict[str, int] = {
    "action_idle": 0,
    "action_left": 1,
    "action_top_left": 2,
    "action_top": 3,
    "action_top_right": 4,
    "action_right": 5,
    "action_bottom_right": 6,
    "action_bottom": 7,
    "action_bottom_left": 8,
    "action_long_pass": 9,
    "action_high_pass": 10,
    "action_short_pass": 11,
    "action_shot": 12,
    "action_sprint": 13,
    "action_release_direction": 14,
    "action_release_sprint": 15,
    "action_sliding": 16,
    "action_dribble": 17,
    "action_release_dribble": 18,
    "action_builtin_ai": 19,
}
CODE_NAMES: dict[int, str] = {code: name for name, code in FULL_ACTION_CODES.items()}

# The 16 names MageBench's prompt offers, in the prompt's order.
MAGEBENCH_ACTIONS: tuple[str, ...] = (
    "action_left", "action_top_left", "action_top", "action_top_right",
    "action_right", "action_bottom_right", "action_bottom", "action_bottom_left",
    "action_long_pass", "action_high_pass", "action_short_pass", "action_shot",
    "action_sprint", "action_release_sprint", "action_dribble", "action_release_dribble",
)
# Everything an agent may send when the node's ``actions`` param is ``full``.
FULL_ACTIONS: tuple[str, ...] = tuple(n for n in FULL_ACTION_CODES if n != "action_builtin_ai")

IDLE = "action_idle"
BUILTIN_AI = "action_builtin_ai"

# Unit-free step per direction in field coordinates (x to the right, y downwards).
DIRECTIONS: dict[str, tuple[int, int]] = {
    "action_left": (-1, 0),
    "action_top_left": (-1, -1),
    "action_top": (0, -1),
    "action_top_right": (1, -1),
    "action_right": (1, 0),
    "action_bottom_right": (1, 1),
    "action_bottom": (0, 1),
    "action_bottom_left": (-1, 1),
}
_BY_STEP = {step: name for name, step in DIRECTIONS.items()}

# A pass or a shot starts a ball flight, which the environment plays through by itself.
PASSES: frozenset[str] = frozenset({"action_long_pass", "action_high_pass", "action_short_pass"})
KICKS: frozenset[str] = PASSES | {"action_shot"}

ACTION_SETS: dict[str, tuple[str, ...]] = {"magebench": MAGEBENCH_ACTIONS, "full": FULL_ACTIONS}


def code(name: str) -> int:
    """The engine index of an action name (KeyError for an unknown name)."""
    return FULL_ACTION_CODES[name]


def mirror(name: str) -> str:
    """The same action seen from the other half: a right-team player's 'right' is the global 'left'.

    The right team's own frame is the global one turned by 180 degrees, so both axes flip."""
    step = DIRECTIONS.get(name)
    if step is None:
        return name
    return _BY_STEP[(-step[0], -step[1])]


def direction_towards(dx: float, dy: float) -> str:
    """The one of the eight directions closest to the vector (dx, dy)."""
    angle = math.atan2(dy, dx)
    octant = round(angle / (math.pi / 4)) % 8
    steps = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)]
    return _BY_STEP[steps[octant]]
