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


# --- Crafter's language view -------------------------------------------------------------------------------
CRAFTER_VITALS = ("health", "food", "drink", "energy")


def _crafter_place(dx: int, dy: int) -> str:
    """Where a square lies from the player, as BALROG words it: the step count (city blocks) and the
    compass parts, north/south first, joined by a hyphen ("3 steps to your north-west")."""
    parts = ["north"] if dy < 0 else ["south"] if dy > 0 else []
    parts += ["west"] if dx < 0 else ["east"] if dx > 0 else []
    steps = abs(dx) + abs(dy)
    return f"{steps} step{'s' if steps > 1 else ''} to your {'-'.join(parts)}"


def crafter_sights(semantic: np.ndarray, names: Sequence[str], pos: Sequence[int], facing: Sequence[int],
                   view: Sequence[int] = (9, 9)) -> tuple[list[str], str]:
    """What the player sees in Crafter's local view, from the world's semantic map (indexed
    ``[x, y]``, ids named by ``names``): one line per kind of thing, the nearest one of each kind
    (ties: the first met, column by column from the west, each from the north), and what the square in front holds.

    The local view is ``view`` squares wide and two rows shorter than ``view`` is tall (Crafter draws
    the inventory there), centred on the player; squares off the map are not seen."""
    x, y = int(pos[0]), int(pos[1])
    half_w, rows_up = int(view[0]) // 2, int(view[1]) // 2 - 1
    nearest: dict[str, tuple[int, str]] = {}
    for i in range(x - half_w, x + half_w + 1):
        for j in range(y - rows_up, y + rows_up + 1):
            if (i, j) == (x, y) or not (0 <= i < semantic.shape[0] and 0 <= j < semantic.shape[1]):
                continue
            name = names[int(semantic[i, j])]
            steps = abs(i - x) + abs(j - y)
            if name not in nearest or steps < nearest[name][0]:
                nearest[name] = (steps, _crafter_place(i - x, j - y))
    fx, fy = x + int(facing[0]), y + int(facing[1])
    inside = (abs(fx - x) <= half_w and abs(fy - y) <= rows_up
              and 0 <= fx < semantic.shape[0] and 0 <= fy < semantic.shape[1])
    front = names[int(semantic[fx, fy])] if inside else "nothing"
    return [f"- {name} {place}" for name, (_, place) in nearest.items()], front


def crafter_text(semantic: np.ndarray, names: Sequence[str], pos: Sequence[int], facing: Sequence[int],
                 inventory: Mapping[str, int], *, sleeping: bool = False, dead: bool = False,
                 view: Sequence[int] = (9, 9)) -> str:
    """The ``text`` of a Crafter observation under BALROG's protocol: the player's state if it sleeps
    or died, what it sees and faces (``crafter_sights``), then its vitals out of 9 and what it
    carries. BALROG sends the first part as the long-term context and the rest as the short-term
    one; a framebus agent gets both in the one text, in that order."""
    lines: list[str] = []
    if sleeping:  # BALROG leaves three blank lines after this line
        lines += ["You are sleeping, and will not be able take actions until energy is full.", "", "", ""]
    elif dead:
        lines += ["You died.", "", "", ""]
    seen, front = crafter_sights(semantic, names, pos, facing, view)
    lines += ["You see:", *seen] if seen else ["You see nothing away from you."]
    lines += ["", f"You face {front} at your front.", "", "Your status:"]
    lines += [f"- {v}: {int(inventory.get(v, 0))}/9" for v in CRAFTER_VITALS]
    items = [f"- {k}: {int(n)}" for k, n in inventory.items() if k not in CRAFTER_VITALS and int(n) != 0]
    lines += ["", "Your inventory:", *items] if items else ["", "You have nothing in your inventory."]
    return "\n".join(lines)
