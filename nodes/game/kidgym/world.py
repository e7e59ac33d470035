"""The state every KidGym task shares: a 5x5 play area, the things on it, the agent and its backpack.

KidGym's actions are high-level ("pick up the item with label 2"), but they still happen in a
world: the agent walks to a cell next to the target (breadth-first search around walls, closed
doors and other things) and acts on it. A target the agent cannot walk up to makes the action fail,
which is how a diamond behind a locked door stays out of reach. Keeping that geometry explicit is
what lets the maze tasks be planning problems rather than multiple-choice questions.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

Cell = tuple[int, int]  # (row, column), row 0 at the top

SIZE = 5
STEPS: tuple[Cell, ...] = ((1, 0), (0, 1), (-1, 0), (0, -1))  # down, right, up, left
ALL_CELLS: tuple[Cell, ...] = tuple((r, c) for r in range(SIZE) for c in range(SIZE))


def neighbours(cell: Cell) -> Iterator[Cell]:
    r, c = cell
    for dr, dc in STEPS:
        nr, nc = r + dr, c + dc
        if 0 <= nr < SIZE and 0 <= nc < SIZE:
            yield nr, nc


@dataclass(eq=False)
class Thing:
    """Anything that can stand on a cell or sit in the backpack.

    ``kind`` says how tasks treat it (item, basket, key, door, diamond, chest, pile, piece, fixture);
    ``name`` is its word in goals and options; ``sprite`` the key the renderer draws; ``label`` the
    single digit shown under it, if it has one; ``hidden`` things exist but are not shown yet (memory
    tasks reveal them at the ``continue`` step).
    """

    kind: str
    name: str
    sprite: str
    label: int | None = None
    cell: Cell | None = None
    color: str | None = None
    count: int = 1
    hidden: bool = False
    data: dict[str, Any] = field(default_factory=dict)


class Backpack:
    """Four slots, A to D. A new thing takes the first free slot; taking one out shifts the later
    ones left, so letters are positions, not names (spec §7 #3): after placing A, B's thing is A."""

    CAPACITY = 4
    LETTERS = "ABCD"

    def __init__(self) -> None:
        self.slots: list[Thing] = []

    def __len__(self) -> int:
        return len(self.slots)

    def __iter__(self) -> Iterator[Thing]:
        return iter(self.slots)

    @property
    def full(self) -> bool:
        return len(self.slots) >= self.CAPACITY

    def add(self, thing: Thing) -> bool:
        if self.full:
            return False
        thing.cell = None
        self.slots.append(thing)
        return True

    def get(self, letter: str) -> Thing | None:
        i = self.LETTERS.find(letter)
        return self.slots[i] if 0 <= i < len(self.slots) else None

    def take(self, letter: str) -> Thing:
        return self.slots.pop(self.LETTERS.index(letter))

    def letter_of(self, thing: Thing) -> str:
        return self.LETTERS[self.slots.index(thing)]

    def occupied(self) -> list[tuple[str, Thing]]:
        return [(self.LETTERS[i], t) for i, t in enumerate(self.slots)]


class Board:
    """The 5x5 play area: wall cells and the things standing on cells."""

    def __init__(self) -> None:
        self.walls: set[Cell] = set()
        self.things: list[Thing] = []

    def add(self, thing: Thing, cell: Cell) -> Thing:
        thing.cell = cell
        self.things.append(thing)
        return thing

    def remove(self, thing: Thing) -> Thing:
        self.things.remove(thing)
        thing.cell = None
        return thing

    def at(self, cell: Cell) -> Thing | None:
        for thing in self.things:
            if thing.cell == cell:
                return thing
        return None

    def occupied(self) -> set[Cell]:
        return {t.cell for t in self.things if t.cell is not None} | self.walls

    def free_cells(self, exclude: Iterable[Cell] = ()) -> list[Cell]:
        taken = self.occupied() | set(exclude)
        return [c for c in ALL_CELLS if c not in taken]

    def reachable(self, start: Cell, blocked: set[Cell] | None = None) -> dict[Cell, int]:
        """Walking distance from ``start`` to every cell the agent can stand on."""
        blocked = self.occupied() if blocked is None else blocked
        dist = {start: 0}
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            for nxt in neighbours(cell):
                if nxt not in dist and nxt not in blocked:
                    dist[nxt] = dist[cell] + 1
                    queue.append(nxt)
        return dist

    def approach(self, start: Cell, target: Cell, blocked: set[Cell] | None = None) -> Cell | None:
        """The nearest cell next to ``target`` the agent can walk to (ties: the first in STEPS order),
        or None when the target is out of reach. The agent never stands on the target itself."""
        dist = self.reachable(start, blocked)
        best: tuple[int, Cell] | None = None
        for cell in neighbours(target):
            if cell in dist and (best is None or dist[cell] < best[0]):
                best = (dist[cell], cell)
        return None if best is None else best[1]

    def all_reachable(self, start: Cell, things: Iterable[Thing]) -> bool:
        """Whether the agent can walk up to every one of ``things`` (generation's solvability check)."""
        dist = self.reachable(start)
        return all(any(n in dist for n in neighbours(t.cell)) for t in things if t.cell is not None)


def facing(src: Cell, dst: Cell) -> Cell:
    """The unit step from ``src`` toward an adjacent ``dst`` (what the agent's arrow shows)."""
    return (max(-1, min(1, dst[0] - src[0])), max(-1, min(1, dst[1] - src[1])))
