"""Sokoban levels as immutable values, and the XSB text format users bring their own levels in.

A level is a rectangle of cells numbered ``row * width + col``. Walls, targets and boxes are sets of
those numbers, which keeps the rules and the solver to plain integer arithmetic: a move is an
addition (``+1`` right, ``-width`` up) and a state is hashable as it is.

XSB symbols: ``#`` wall, ``@`` player, ``+`` player on a target, ``$`` box, ``*`` box on a target,
``.`` target, space (or ``-`` / ``_``) floor. A file may hold several levels, separated by blank
lines or by comment/title lines (anything with a character that is not a board symbol).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable

import numpy as np

BOARD_CHARS = frozenset("#@+$*.-_ ")
FLOOR_CHARS = frozenset(" -_")


class LevelError(ValueError):
    """A level that cannot be played: malformed text, no player, box/target counts that differ,
    or a player region that is not closed by walls."""


@dataclass(frozen=True)
class Level:
    """One starting position. ``name`` identifies it (benchmark levels: ``full-042`` style ids);
    ``tier`` is the MageBench difficulty tier it belongs to, if any; ``meta`` carries solver facts
    (optimal moves, solution, reward) for benchmark levels so nothing is re-solved at play time."""

    width: int
    height: int
    walls: frozenset[int]
    targets: frozenset[int]
    boxes: frozenset[int]
    player: int
    name: str = ""
    tier: str = ""
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    def cell(self, row: int, col: int) -> int:
        return row * self.width + col

    def rowcol(self, cell: int) -> tuple[int, int]:
        return divmod(cell, self.width)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)``, the way the MageBench tiers name them (13x11 is 13 wide, 11 tall)."""
        return self.width, self.height

    @cached_property
    def room(self) -> frozenset[int]:
        """The playable room (see :meth:`reachable`), computed once per level."""
        return frozenset(self.reachable())

    @cached_property
    def room_cells(self) -> np.ndarray:
        """The room as a sorted index array, for drawing."""
        return np.fromiter(sorted(self.room), np.int64)

    @cached_property
    def background(self) -> str:
        """The fixed XSB symbols (wall, target, floor), one per cell, for fast text views."""
        return "".join("#" if c in self.walls else "." if c in self.targets else " "
                       for c in range(self.width * self.height))

    def reachable(self) -> set[int]:
        """Cells the player can walk to when boxes are ignored: the playable room."""
        seen = {self.player}
        stack = [self.player]
        w, n = self.width, self.width * self.height
        while stack:
            c = stack.pop()
            for d in (-w, w, -1, 1):
                nxt = c + d
                if d in (-1, 1) and nxt // w != c // w:
                    continue
                if 0 <= nxt < n and nxt not in self.walls and nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen

    def validate(self) -> Level:
        """Raise :class:`LevelError` unless the level is playable; returns the level for chaining."""
        if not self.boxes:
            raise LevelError(f"level {self.name or '?'} has no boxes")
        if len(self.boxes) != len(self.targets):
            raise LevelError(f"level {self.name or '?'} has {len(self.boxes)} boxes but {len(self.targets)} targets")
        room = self.reachable()
        for c in room:
            r, col = self.rowcol(c)
            if r in (0, self.height - 1) or col in (0, self.width - 1):
                raise LevelError(f"level {self.name or '?'}: the player can walk off the board at row {r}, "
                                 f"column {col}; close the room with walls")
        stray = (self.boxes | self.targets) - room
        if stray:
            r, col = self.rowcol(min(stray))
            raise LevelError(f"level {self.name or '?'}: a box or target at row {r}, column {col} is outside "
                             "the player's room")
        return self

    def to_xsb(self) -> str:
        """The level as XSB text (rows without trailing spaces, no final newline)."""
        rows = []
        for r in range(self.height):
            chars = []
            for c in range(r * self.width, (r + 1) * self.width):
                chars.append(_symbol(c in self.walls, c in self.targets, c in self.boxes, c == self.player))
            rows.append("".join(chars).rstrip())
        return "\n".join(rows)

    def with_state(self, boxes: Iterable[int], player: int) -> Level:
        """The same room with boxes and player moved (a position reached in play, as a level). The
        solver facts in ``meta`` belong to the starting position, so they are not carried over."""
        return Level(self.width, self.height, self.walls, self.targets, frozenset(boxes), player,
                     self.name, self.tier)


def _symbol(wall: bool, target: bool, box: bool, player: bool) -> str:
    if wall:
        return "#"
    if box:
        return "*" if target else "$"
    if player:
        return "+" if target else "@"
    return "." if target else " "


def parse_xsb(text: str, name: str = "") -> Level:
    """One level from XSB text. Lines that are not board rows (titles, ``;`` comments) are ignored
    before the first and after the last board row; a text holding several levels is an error here
    (use :func:`parse_xsb_collection`)."""
    levels = parse_xsb_collection(text, name)
    if len(levels) != 1:
        raise LevelError(f"expected one level in {name or 'the text'}, found {len(levels)}")
    return levels[0]


def parse_xsb_collection(text: str, name: str = "") -> list[Level]:
    """Every level in an XSB text, named ``name`` (one level) or ``name#1``, ``name#2``, ... A title
    line directly above a board (``Title: x`` or a ``;`` comment) becomes that level's name."""
    blocks: list[tuple[str, list[str]]] = []
    current: list[str] = []
    title = ""
    for raw in text.splitlines():
        line = raw.rstrip("\r\n")
        if line.strip() and set(line) <= BOARD_CHARS and "#" in line:
            current.append(line)
            continue
        if current:
            blocks.append((title, current))
            current, title = [], ""
        stripped = line.strip()
        if stripped.startswith(";"):
            title = stripped.lstrip("; ").strip()
        elif stripped.lower().startswith("title:"):
            title = stripped.split(":", 1)[1].strip()
    if current:
        blocks.append((title, current))
    if not blocks:
        raise LevelError(f"no XSB board found in {name or 'the text'}")
    out = []
    for i, (title, rows) in enumerate(blocks, 1):
        label = name if len(blocks) == 1 and name else (title or (f"{name}#{i}" if name else f"level{i}"))
        out.append(_board(rows, label).validate())
    return out


def _board(rows: list[str], name: str) -> Level:
    width = max(len(r) for r in rows)
    height = len(rows)
    walls, targets, boxes, players = set(), set(), set(), []
    for r, row in enumerate(rows):
        for col, ch in enumerate(row.ljust(width)):
            c = r * width + col
            if ch == "#":
                walls.add(c)
            if ch in ".+*":
                targets.add(c)
            if ch in "$*":
                boxes.add(c)
            if ch in "@+":
                players.append(c)
    if len(players) != 1:
        raise LevelError(f"level {name or '?'} needs exactly one player (@ or +), found {len(players)}")
    return Level(width, height, frozenset(walls), frozenset(targets), frozenset(boxes), players[0], name)


def load_xsb(path: str | Path) -> list[Level]:
    """Every level in an XSB file, named after the file."""
    p = Path(path)
    return parse_xsb_collection(p.read_text(), p.stem)
