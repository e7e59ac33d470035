"""The text a language model reads for a NetHack state, laid out as BALROG lays it out.

BALROG renders each state with the NLE language wrapper in one of two modes: ``hybrid`` (text
only: message, the things in view in words, the cursor, the terminal's map, the inventory) and
``language`` (beside a picture: message, things in view, cursor, the status line in words,
inventory). The wrapper is a C++ extension built against its own NLE; this module writes the
same views from NLE 1.3.0's observations in Python: the words for each map square come from NLE's
``screen_descriptions`` (NetHack's own farlook text), and distances and directions follow the
wrapper's scheme (adjacent, very near, near, far, very far; north is up).

Everything here is pure: numpy arrays in, strings out, so it is tested without the game.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal

import numpy as np

Mode = Literal["hybrid", "language"]

# blstats indices (NLE's NLE_BL_*)
X, Y, STR, DEX, CON, INT, WIS, CHA, SCORE, HP, HPMAX, DEPTH, GOLD = 0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13
ENE, ENEMAX, AC, XL, EXP, TIME, HUNGER, CAP, DNUM, DLEVEL, COND, ALIGN = 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26

HUNGER_WORDS = ("Satiated", "Not Hungry", "Hungry", "Weak", "Fainting", "Fainted", "Starved")
CAPACITY_WORDS = ("Unencumbered", "Burdened", "Stressed", "Strained", "Overtaxed", "Overloaded")
ALIGNMENT_WORDS = {-1: "Chaotic", 0: "Neutral", 1: "Lawful"}

# squares that say nothing worth a line (floor, corridors, rock); walls are named only close by,
# as the wrapper names them only where the hero's line of sight meets them
_SILENT = frozenset({"", "floor of a room", "dark part of a room", "corridor", "lit corridor", "stone",
                     "unexplored area", "dark part of a room or corridor"})
_WALLS = frozenset({"wall", "dark area"})


def distance_word(steps: int) -> str:
    """The wrapper's distance words for a king-move distance."""
    if steps <= 1:
        return "adjacent"
    if steps == 2:
        return "very near"
    if steps < 6:
        return "near"
    if steps < 20:
        return "far"
    return "very far"


def direction_word(dx: int, dy: int) -> str:
    """Direction of an offset, ``dy`` positive north: the straight part first, then the diagonal
    (``dx=3, dy=1`` is ``eastnortheast``), as the wrapper spells it."""
    diag = min(abs(dx), abs(dy))
    diagonal = ""
    if diag:
        diagonal = ("north" if dy > 0 else "south") + ("east" if dx > 0 else "west")
    rest_x = dx - diag if dx > 0 else dx + diag
    rest_y = dy - diag if dy > 0 else dy + diag
    straight = ("north" if rest_y > 0 else "south" if rest_y < 0 else "") + \
               ("east" if rest_x > 0 else "west" if rest_x < 0 else "")
    return straight + diagonal


def row_text(row: np.ndarray) -> str:
    return bytes(np.asarray(row, dtype=np.uint8)).decode("latin-1")


def message(tty_chars: np.ndarray) -> str:
    """The message at the top of the terminal; a message that runs over several lines (a menu, a
    ``--More--`` or ``(1 of 2)`` page) is read down to the line that marks its end."""
    first = row_text(tty_chars[0])
    if not first.strip():
        return ""
    indent = len(first) - len(first.lstrip(" "))
    lines: list[str] = []
    for row in tty_chars:
        line = row_text(row)[indent:].strip()
        lines.append(line)
        if "--More--" in line or "(end)" in line or _is_page_mark(line):
            return "\n".join(lines)
    return first.strip()


def _is_page_mark(line: str) -> bool:
    i = line.find(" of ")
    return i >= 2 and line[i - 2] == "(" and i + 5 < len(line) and line[i + 5] == ")"


def describe(desc: np.ndarray) -> str:
    return bytes(np.asarray(desc, dtype=np.uint8)).split(b"\0", 1)[0].decode("latin-1").strip()


def things_in_view(screen_descriptions: np.ndarray, blstats: np.ndarray, near_walls: int = 2) -> str:
    """One line per kind of thing and distance, e.g. ``tame kitten adjacent southeast`` or
    ``doorway far east and northnortheast``; nearest first."""
    px, py = int(blstats[X]), int(blstats[Y])
    groups: OrderedDict[tuple[str, str], list[str]] = OrderedDict()
    rows, cols = screen_descriptions.shape[:2]
    found: list[tuple[int, str, str, str]] = []
    for y in range(rows):
        for x in range(cols):
            if x == px and y == py:
                continue
            name = describe(screen_descriptions[y, x])
            if name in _SILENT:
                continue
            dx, dy = x - px, py - y
            steps = max(abs(dx), abs(dy))
            if name in _WALLS and steps > near_walls:
                continue
            found.append((steps, name, distance_word(steps), direction_word(dx, dy)))
    found.sort(key=lambda f: (f[0], f[1]))
    for _, name, dist, direction in found:
        dirs = groups.setdefault((name, dist), [])
        if direction not in dirs:
            dirs.append(direction)
    return "\n".join(f"{name} {dist} {' and '.join(dirs)}" for (name, dist), dirs in groups.items())


def cursor(screen_descriptions: np.ndarray, blstats: np.ndarray, tty_cursor: np.ndarray) -> str:
    """What the terminal cursor is on (the hero, or the square a prompt is asking about), and where
    it is as ``(x=.., y=..)`` terminal coordinates."""
    cy, cx = int(tty_cursor[0]), int(tty_cursor[1])
    my = cy - 1  # the map starts on the terminal's second line
    where = f"(x={cx}, y={cy})"
    rows, cols = screen_descriptions.shape[:2]
    if 0 <= my < rows and 0 <= cx < cols:
        px, py = int(blstats[X]), int(blstats[Y])
        name = describe(screen_descriptions[my, cx]) or "nothing"
        if (cx, my) == (px, py):
            return f"Yourself a {name}\n{where}" if not name.startswith(("a ", "an ")) else f"Yourself {name}\n{where}"
        dx, dy = cx - px, py - my
        return f"{name} {distance_word(max(abs(dx), abs(dy)))} {direction_word(dx, dy)}\n{where}"
    return where


def statistics(blstats: np.ndarray) -> str:
    """The status lines in words (the ``language`` mode, whose picture shows no status)."""
    b = [int(v) for v in blstats]
    hunger = HUNGER_WORDS[b[HUNGER]] if 0 <= b[HUNGER] < len(HUNGER_WORDS) else str(b[HUNGER])
    cap = CAPACITY_WORDS[b[CAP]] if 0 <= b[CAP] < len(CAPACITY_WORDS) else str(b[CAP])
    return "\n".join([
        f"Strength: {b[STR]}", f"Dexterity: {b[DEX]}", f"Constitution: {b[CON]}", f"Intelligence: {b[INT]}",
        f"Wisdom: {b[WIS]}", f"Charisma: {b[CHA]}", f"Alignment: {ALIGNMENT_WORDS.get(b[ALIGN], b[ALIGN])}",
        f"Depth: {b[DEPTH]}", f"Gold: {b[GOLD]}", f"HP: {b[HP]}/{b[HPMAX]}", f"Energy: {b[ENE]}/{b[ENEMAX]}",
        f"AC: {b[AC]}", f"XP: {b[XL]}/{b[EXP]}", f"Time: {b[TIME]}", f"Position: {b[X]}|{b[Y]}",
        f"Hunger: {hunger}", f"Encumbrance: {cap}"])


def inventory(inv_strs: np.ndarray, inv_letters: np.ndarray) -> str:
    """``a: a +1 long sword (weapon in hand)``, one item a line."""
    lines = []
    for letter, item in zip(inv_letters, inv_strs):
        if int(letter) == 0:
            break
        lines.append(f"{chr(int(letter))}: {describe(item)}")
    return "\n".join(lines)


def ascii_map(tty_chars: np.ndarray) -> str:
    """The terminal below its message line: the map and the two status lines."""
    return "\n".join(row_text(r) for r in tty_chars[1:])


def render(obs: dict[str, Any], mode: Mode = "hybrid") -> str:
    """The whole text of a state as BALROG sends it: the long-term part (message, things in view,
    cursor, and in ``hybrid`` mode the map), then the short-term part (``language`` mode: the
    statistics; both: the inventory)."""
    msg = obs["text_message"] if "text_message" in obs else message(obs["tty_chars"])
    parts = [("message", msg),
             ("language observation", things_in_view(obs["screen_descriptions"], obs["blstats"])),
             ("cursor", cursor(obs["screen_descriptions"], obs["blstats"], obs["tty_cursor"]))]
    if mode == "hybrid":
        parts.append(("map", ascii_map(obs["tty_chars"])))
    else:
        parts.append(("statistics", statistics(obs["blstats"])))
    parts.append(("inventory", inventory(obs["inv_strs"], obs["inv_letters"])))
    return "\n".join(f"{name}:\n{body}\n" for name, body in parts)
