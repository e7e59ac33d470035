"""The episode machinery every KidGym task shares: options, steps, budgets, memory and text.

A task subclass says how to lay out an episode (``generate``), which high-level actions are
admissible now (``admissible``), what one does (``apply``), when the episode is won or lost
(``outcome``), and which action a perfect player takes (``solve``). This class does the rest the
same way for all twelve, because the benchmark's numbers depend on those details being uniform:

* the option list is re-shuffled at every step (spec §7 #4), by a generator seeded from the
  episode, so the same episode shows the same letters to every model that reaches the same state;
* every step counts toward the budget, including a wasted one: an answer that is not one of the
  options, or ``None``, changes nothing and still uses the step (spec §3.4's recommendation);
* a memory task (SE, MMA, MDE, MFI) starts with a frame whose only option is ``continue``; taking
  it is an explicit state change (``reveal``), not a side effect of rendering (spec §7 #12).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import ClassVar, Sequence

from nodes.game.kidgym.catalog import ROMAN
from nodes.game.kidgym.world import SIZE, Backpack, Board, Cell, Thing, facing

CONTINUE = "continue"
MAX_TRIES = 2000  # generation retries; a layout that needs more is a bug, not bad luck


@dataclass(frozen=True, eq=False)
class Option:
    """One admissible high-level action: its text as shown to the model, and what it refers to."""

    text: str
    verb: str
    target: Thing | None = None
    slot: str | None = None  # a backpack letter
    place: str | None = None  # a Roman grid position


@dataclass(frozen=True)
class Outcome:
    """What one step did. ``valid``: the answer was one of the options; ``step_success``: the action
    could be carried out; ``over``: the episode ended (won, lost, stopped or out of steps)."""

    valid: bool
    step_success: bool
    success: bool
    over: bool
    truncated: bool
    stopped: bool = False


@dataclass(frozen=True)
class Mark:
    """One thing drawn on the hint bar, in cell units from its top-left corner (2 wide, 9 tall):
    a sprite, an arrow between two points, or a framed box."""

    kind: str  # "sprite" | "arrow" | "box"
    x: float
    y: float
    w: float = 1.0
    h: float = 1.0
    sprite: str = ""


class Task:
    """One episode of one KidGym task at one level, generated from ``seed``."""

    code: ClassVar[str]
    title: ClassVar[str]
    budgets: ClassVar[tuple[int, int, int]]
    memory: ClassVar[bool] = False
    show_labels: ClassVar[bool] = True
    frame_at: ClassVar[Cell | None] = None  # top-left cell of a 2x2 picture frame (FI, PU, MFI)

    def __init__(self, level: int, seed: int | str = 0) -> None:
        if level not in (1, 2, 3):
            raise ValueError(f"KidGym levels are 1, 2 and 3, got {level!r}")
        self.level = level
        self.seed = seed
        self.rng = random.Random(f"kidgym/{self.code}/L{level}/{seed}/layout")
        self.shuffler = random.Random(f"kidgym/{self.code}/L{level}/{seed}/options")
        self.board = Board()
        self.bag = Backpack()
        self.agent: Cell = (SIZE - 1, SIZE // 2)
        self.heading: Cell = (-1, 0)
        self.slots: dict[str, Cell] = {}  # Roman grid positions of the placement tasks
        self.theme = "park"
        self.goal = ""
        self.t = 0
        self.over = self.success = self.truncated = self.stopped = False
        self.revealed = not self.memory
        self._options: list[Option] = []
        self._by_text: dict[str, Option] = {}
        self.generate()
        self._refresh()

    # --- what subclasses provide -------------------------------------------------------------
    def generate(self) -> None:
        raise NotImplementedError

    def admissible(self) -> list[Option]:
        """Every action the benchmark lists now: type- and state-admissible, not necessarily right."""
        raise NotImplementedError

    def apply(self, option: Option) -> bool:
        """Carry out an option; False when it cannot be done (the step is spent all the same)."""
        raise NotImplementedError

    def outcome(self) -> tuple[bool, bool]:
        """(success, over) after the latest action."""
        raise NotImplementedError

    def solve(self) -> str:
        """The option text a perfect player picks now (after ``continue`` in memory tasks)."""
        raise NotImplementedError

    def fallback(self) -> str:
        """What ``solve`` answers once the episode can no longer be won (after a wrong action): the
        first option, so an oracle-driven agent always gets a valid action."""
        return self._options[0].text

    def reveal(self) -> None:
        """Memory tasks: hide what had to be memorised and show the play state."""

    def describe(self, thing: Thing) -> str:
        """A thing in words, for the text rendering."""
        return f"{thing.color} {thing.name}" if thing.color else thing.name

    def hint_lines(self) -> list[str]:
        """What the hint bar shows now, in words (empty when it shows nothing)."""
        return []

    def hint_marks(self) -> list[Mark]:
        """What the hint bar shows now, for the renderer."""
        return []

    # --- the episode -------------------------------------------------------------------------
    @property
    def budget(self) -> int:
        return self.budgets[self.level - 1]

    @property
    def options(self) -> list[str]:
        """The option texts in the order they are lettered now (A, B, C, ...)."""
        return [o.text for o in self._options]

    def step(self, choice: str | None) -> Outcome:
        """Apply an option text; anything else (None, an unknown text) is a wasted step."""
        if self.over:
            raise RuntimeError("the episode is over; start a new one")
        self.t += 1
        option = self._by_text.get(choice) if isinstance(choice, str) else None
        done = False
        if option is not None:
            if option.verb == CONTINUE:
                self.reveal()
                self.revealed = done = True
            else:
                done = self.apply(option)
                self.success, self.over = self.outcome()
        if not self.over and self.t >= self.budget:
            self.over = self.truncated = True
        self._refresh()
        return Outcome(option is not None, done, self.success, self.over, self.truncated)

    def step_index(self, index: int) -> Outcome:
        """Apply the option at a letter's index; an index past the list is a wasted step."""
        opts = self.options
        return self.step(opts[index] if 0 <= index < len(opts) else None)

    def stop(self) -> Outcome:
        """The agent gives up: the episode ends now, as a failure."""
        self.over = self.stopped = True
        self.success = False
        self._refresh()
        return Outcome(True, False, False, True, False, stopped=True)

    def oracle(self) -> str | None:
        """The correct option for the current state (None once the episode is over)."""
        if self.over:
            return None
        return CONTINUE if not self.revealed else self.solve()

    def _refresh(self) -> None:
        if self.over:
            self._options = []
        elif not self.revealed:
            self._options = [Option(CONTINUE, CONTINUE)]
        else:
            self._options = self.admissible()
            self.shuffler.shuffle(self._options)
        self._by_text = {o.text: o for o in self._options}

    # --- helpers for subclasses --------------------------------------------------------------
    def walk_to(self, target: Cell) -> bool:
        """Walk next to ``target`` and face it; False (and no move) when it cannot be reached."""
        spot = self.board.approach(self.agent, target)
        if spot is None:
            return False
        self.agent, self.heading = spot, facing(spot, target)
        return True

    def put_down(self, letter: str, place: str) -> Thing | None:
        """Walk to a free Roman position and set the backpack thing at ``letter`` on it."""
        cell = self.slots[place]
        if self.bag.get(letter) is None or self.board.at(cell) is not None or not self.walk_to(cell):
            return None
        thing = self.bag.take(letter)
        thing.data["place"] = place
        self.board.add(thing, cell)
        return thing

    def empty_places(self) -> list[str]:
        return [p for p, cell in self.slots.items() if self.board.at(cell) is None]

    def on_place(self, place: str) -> Thing | None:
        return self.board.at(self.slots[place])

    def label(self, things: Sequence[Thing]) -> None:
        """Give each thing its own single-digit label, in shuffled order (spec §7 #9: 0-9 only)."""
        if len(things) > 10:
            raise ValueError("KidGym labels are single digits; a scene holds at most 10 labelled things")
        for thing, digit in zip(things, self.rng.sample(range(10), len(things))):
            thing.label = digit

    def scatter(self, things: Sequence[Thing], *, cells: Sequence[Cell] | None = None,
                agent_cells: Sequence[Cell] | None = None) -> None:
        """Put ``things`` and the agent on random distinct cells so that the agent can walk up to
        every thing (the benchmark's reachability check, by rejection)."""
        for _ in range(MAX_TRIES):
            for thing in things:
                if thing.cell is not None:
                    self.board.remove(thing)
            pool = [c for c in (cells or self.board.free_cells(self.slots.values()))]
            agent_pool = [c for c in (agent_cells or pool)]
            self.agent = self.rng.choice(agent_pool)
            spots = self.rng.sample([c for c in pool if c != self.agent], len(things))
            for thing, cell in zip(things, spots):
                self.board.add(thing, cell)
            targets = [*things, *(Thing("fixture", "grid", "", cell=c) for c in self.slots.values())]
            if self.board.all_reachable(self.agent, targets):
                return
        raise RuntimeError(f"{self.code} L{self.level}: no reachable layout after {MAX_TRIES} tries")

    def option_places(self, template: str) -> list[Option]:
        """One option per (backpack slot x empty Roman position), in slot then position order."""
        places = self.empty_places()
        return [Option(template.format(slot=letter, place=place), "place", slot=letter, place=place)
                for letter, _ in self.bag.occupied() for place in places]

    # --- text rendering ----------------------------------------------------------------------
    def visible_things(self) -> list[Thing]:
        return [t for t in self.board.things if not t.hidden]

    def text(self) -> str:
        """The state in words for text-only models: a map, the things, the backpack, the hint bar.

        It says what a player could see in the frame and nothing more (a memory task's hidden
        answer is not in it after ``continue``)."""
        places = {cell: place for place, cell in self.slots.items()}
        things = {t.cell: t for t in self.visible_things()}
        rows = [("      " + "".join(f"{c + 1:<5}" for c in range(SIZE))).rstrip()]
        for r in range(SIZE):
            cells = []
            for c in range(SIZE):
                cell = (r, c)
                thing = things.get(cell)
                if cell == self.agent:
                    token = "@"
                elif cell in self.board.walls:
                    token = "#"
                elif thing is not None and thing.label is not None and self.show_labels:
                    token = str(thing.label)
                elif cell in places and thing is None:
                    token = places[cell]
                elif thing is not None:
                    token = "*"
                else:
                    token = "."
                cells.append(f"{token:<5}")
            rows.append(f"  {r + 1:<4}" + "".join(cells).rstrip())
        heading = {(-1, 0): "up", (1, 0): "down", (0, -1): "left", (0, 1): "right"}.get(self.heading, "up")
        lines = [
            "The scene, a 5x5 grid (row 1 is the top, column 1 the left):",
            *rows,
            "(@ is you, # a wall, . an empty floor cell, a digit a thing with that label, a Roman numeral an "
            "empty numbered grid position, * a thing without a label)",
            f"You stand at row {self.agent[0] + 1}, column {self.agent[1] + 1}, facing {heading}.",
            "Things in the scene:",
        ]
        listed = sorted(self.visible_things(), key=lambda t: (t.cell or (9, 9)))
        for thing in listed:
            where = f"row {thing.cell[0] + 1}, column {thing.cell[1] + 1}" if thing.cell else "?"
            place = thing.data.get("place")
            if place:
                lines.append(f"  grid {place} ({where}): {self.describe(thing)}")
            elif thing.label is not None and self.show_labels:
                lines.append(f"  label {thing.label} ({where}): {self.describe(thing)}")
            else:
                lines.append(f"  {where}: {self.describe(thing)} (no label)")
        for place, cell in self.slots.items():
            if self.board.at(cell) is None:
                lines.append(f"  grid {place} (row {cell[0] + 1}, column {cell[1] + 1}): empty")
        if not listed and not self.slots:
            lines.append("  nothing")
        slots = [f"{letter}: {self.describe(t) if t else 'empty'}"
                 for letter, t in ((x, self.bag.get(x)) for x in Backpack.LETTERS)]
        lines.append("Your backpack: " + "; ".join(slots) + ".")
        hint = self.hint_lines()
        lines.append("The hint bar on the left " + ("shows: " + " ".join(hint) if hint else "is empty."))
        return "\n".join(lines)


def roman(n: int) -> list[str]:
    """The first ``n`` Roman position names."""
    return list(ROMAN[:n])
