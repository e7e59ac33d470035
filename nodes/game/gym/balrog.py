"""BALROG's protocol for the MiniGrid/BabyAI and Crafter worlds of ``gym.env`` (``protocol: balrog``).

BALROG (Paglieri et al. 2024) plays BabyAI through BabyAI-Text's descriptions of the agent's 7x7
view and scores it 100 on success, 0 otherwise; it scores Crafter by the share of Crafter's 22
achievements unlocked in the episode. The rules here were read from BALROG's code (its BabyAI
language wrapper and the BabyAI-Text view description of its MiniGrid fork, its Crafter wrapper)
and written anew; the wording, word order and action names are theirs, so a prompt tuned on
BALROG reads the same text here.

The view is MiniGrid's egocentric ``image`` (x across, y along the gaze; the agent at the bottom
middle), each cell ``(object, colour, state)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

# MiniGrid's encoding (minigrid.core.constants; a test checks they still agree)
OBJECTS = ("unseen", "empty", "wall", "floor", "door", "key", "ball", "box", "goal", "lava", "agent")
COLORS = ("red", "green", "blue", "purple", "yellow", "grey")
DOOR_STATES = ("open", "closed", "locked")
UNSEEN, EMPTY, WALL, DOOR = 0, 1, 2, 4

BABYAI_ACTIONS = ("turn left", "turn right", "go forward", "pick up", "drop", "toggle")
"""BALROG's names of MiniGrid's actions 0..5 (left, right, forward, pickup, drop, toggle); BALROG
leaves out MiniGrid's ``done``."""

CRAFTER_ACTIONS = ("Noop", "Move West", "Move East", "Move North", "Move South", "Do", "Sleep", "Place Stone",
                   "Place Table", "Place Furnace", "Place Plant", "Make Wood Pickaxe", "Make Stone Pickaxe",
                   "Make Iron Pickaxe", "Make Wood Sword", "Make Stone Sword", "Make Iron Sword")
"""BALROG's names of Crafter's 17 actions, in Crafter's order (noop, move_left, ..., make_iron_sword)."""
CRAFTER_IDLE = "Noop"

CRAFTER_ACHIEVEMENTS = 22
"""How many achievements Crafter has; BALROG divides by this fixed number."""


def world(env_id: str) -> str | None:
    """Which BALROG world an id belongs to: ``babyai`` (any MiniGrid or BabyAI id: they share the
    view), ``crafter``, or None where BALROG's protocol does not apply."""
    if env_id.startswith(("BabyAI-", "MiniGrid-")):
        return "babyai"
    if env_id.startswith("framebus/Crafter"):
        return "crafter"
    return None


def _steps(n: int, direction: str) -> str:
    return f"{n} step{'s' if n > 1 else ''} {direction}"


def _first_wall(image: np.ndarray, cells: Sequence[tuple[int, int]]) -> int | None:
    """The distance (1-based) to the first thing along ``cells`` if it is a wall; None if that thing
    is something else or nothing is seen (BABYAI-Text names a wall only with nothing before it)."""
    for n, (x, y) in enumerate(cells, start=1):
        kind = int(image[x, y, 0])
        if kind not in (UNSEEN, EMPTY):
            return n if kind == WALL else None
    return None


def babyai_descriptions(image: Any, carrying: tuple[str, str] | None = None) -> list[str]:
    """BabyAI-Text's sentences for one view, as BALROG shows them (with "You see " taken out): what
    the agent carries (``(color, type)``), the nearest wall straight forward, left and right, then
    every seen object but walls (floor, goal and lava cells too), column by column from the left, each
    placed by its sideways then forward steps (``a red ball 1 step left and 2 steps forward``)."""
    view = np.asarray(image)
    if view.ndim != 3 or view.shape[2] != 3:
        raise ValueError(f"a MiniGrid view is W x H x 3 (object, colour, state); got the shape {view.shape}")
    width, height = view.shape[:2]
    ax, ay = width // 2, height - 1
    out: list[str] = []
    if carrying is not None:
        color, kind = carrying
        out.append(f"You carry a {color} {kind}")
    lines = {"forward": [(ax, y) for y in range(ay - 1, -1, -1)],
             "left": [(x, ay) for x in range(ax - 1, -1, -1)],
             "right": [(x, ay) for x in range(ax + 1, width)]}
    for direction, cells in lines.items():
        n = _first_wall(view, cells)
        if n is not None:
            out.append(f"a wall {_steps(n, direction)}")
    for x in range(width):
        for y in range(height):
            kind, color, state = (int(v) for v in view[x, y])
            if kind in (UNSEEN, EMPTY, WALL) or (x, y) == (ax, ay):
                continue
            name = f"{DOOR_STATES[state]} {COLORS[color]} door" if kind == DOOR else f"{COLORS[color]} {OBJECTS[kind]}"
            side, ahead = x - ax, ay - y
            if side == 0:
                where = [_steps(ahead, "forward")]
            else:
                across = _steps(abs(side), "right" if side > 0 else "left")
                where = [across] if ahead == 0 else [across, _steps(ahead, "forward")]
            out.append(f"a {name} {' and '.join(where)}")  # "a open ..." as BabyAI-Text writes it
    return out


def babyai_text(mission: str, image: Any, carrying: tuple[str, str] | None = None) -> str:
    """The ``text`` of a BabyAI observation under BALROG's protocol: the mission, then one sentence
    a line (``babyai_descriptions``). BALROG puts the mission in its instruction prompt; here it leads
    the text as well as being ``goal``, so a text-only agent sees it with every observation."""
    return "\n".join([f"mission: {mission}", *babyai_descriptions(image, carrying)])


def carried(env: Any) -> tuple[str, str] | None:
    """(colour, type) of what a MiniGrid env's agent holds, or None."""
    obj = getattr(getattr(env, "unwrapped", env), "carrying", None)
    return None if obj is None else (str(obj.color), str(obj.type))


def crafter_progression(achievements: Mapping[str, Any]) -> float:
    """BALROG's Crafter progression in percent: achievements unlocked (count > 0) out of Crafter's 22."""
    unlocked = sum(1 for count in achievements.values() if float(count) > 0)
    if unlocked > CRAFTER_ACHIEVEMENTS:
        raise ValueError(f"{unlocked} achievements unlocked, but Crafter has {CRAFTER_ACHIEVEMENTS}")
    return 100.0 * unlocked / CRAFTER_ACHIEVEMENTS


def babyai_progression(rewards_positive: bool) -> float:
    """BALROG's BabyAI progression in percent: 100 once a step paid a positive reward (success), else 0."""
    return 100.0 if rewards_positive else 0.0
