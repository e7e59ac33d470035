"""The three picture-completion tasks: Filling (FI), Puzzle (PU) and Memory Filling (MFI).

A 2x2 picture frame stands at fixed cells; 1/2/3 of its quarters are missing and marked I, II,
III. The backpack holds four pieces; the agent places one per step. The episode ends when every
missing quarter is filled and succeeds when each holds the right piece. Budgets are the number
of missing pieces (plus ``continue`` for MFI): no slack.
"""

from __future__ import annotations

from nodes.game.kidgym.base import Mark, Option, Task, roman
from nodes.game.kidgym.catalog import PICTURE_ANIMALS, QUADRANTS
from nodes.game.kidgym.world import Cell, Thing

FRAME_TOP_LEFT: Cell = (1, 1)
AGENT_START: Cell = (4, 2)
PLACE_TEXT = "place the piece from backpack {slot} into the grid at position {place}"

# The abstract Puzzle pieces, in words for the text rendering; ``sprites.py`` draws the same shapes.
PUZZLE_SHAPES: tuple[str, ...] = (
    "a dark right triangle filling the upper-right half of the square, its right angle in the top-right corner",
    "a dark right triangle filling the lower-left half of the square, its right angle in the bottom-left corner",
    "a dark quarter disc centred on the bottom-left corner of the square",
    "a dark bar filling the left half of the square",
)

_PICTURE_GOAL = ("You need to fill the correct piece(s) from the backpack to complete the missing part(s) of the frame "
                 "in the scene, ensuring they match and align with the target item.")


def quadrant_cell(q: int) -> Cell:
    return FRAME_TOP_LEFT[0] + q // 2, FRAME_TOP_LEFT[1] + q % 2


class _Frame(Task):
    """What the three share; subclasses choose the pieces and what the hint bar shows."""

    budgets = (1, 2, 3)
    show_labels = False
    frame_at = FRAME_TOP_LEFT

    def generate(self) -> None:
        self.theme = "gallery"
        self.agent = AGENT_START
        self.missing = sorted(self.rng.sample(range(4), self.level))
        places = roman(self.level)
        self.slots = {p: quadrant_cell(q) for p, q in zip(places, self.missing)}
        self.answer: dict[str, str] = {}
        self.pieces = self.choose_pieces()  # quadrant -> the right piece
        for q, piece in self.pieces.items():
            if q not in self.missing:
                self.board.add(piece, quadrant_cell(q))
        for p, q in zip(places, self.missing):
            self.answer[p] = self.pieces[q].sprite
        self.spares = [self.pieces[q] for q in self.missing] + self.distractors()
        self.rng.shuffle(self.spares)
        if not self.memory:
            for piece in self.spares:
                self.bag.add(piece)

    def choose_pieces(self) -> dict[int, Thing]:
        raise NotImplementedError

    def distractors(self) -> list[Thing]:
        raise NotImplementedError

    def admissible(self) -> list[Option]:
        return self.option_places(PLACE_TEXT)

    def apply(self, option: Option) -> bool:
        return self.put_down(option.slot or "", option.place or "") is not None

    def outcome(self) -> tuple[bool, bool]:
        if self.empty_places():
            return False, False
        return all((t := self.on_place(p)) is not None and t.sprite == s for p, s in self.answer.items()), True

    def solve(self) -> str:
        for place in self.empty_places():
            for letter, thing in self.bag.occupied():
                if thing.sprite == self.answer[place]:
                    return PLACE_TEXT.format(slot=letter, place=place)
        return self.fallback()


class _AnimalFrame(_Frame):
    def choose_pieces(self) -> dict[int, Thing]:
        self.animal = self.rng.choice(PICTURE_ANIMALS)
        return {q: _animal_piece(self.animal, q) for q in range(4)}

    def distractors(self) -> list[Thing]:
        right = {(self.animal, q) for q in self.missing}
        pool = [(a, q) for a in PICTURE_ANIMALS for q in range(4) if (a, q) not in right]
        return [_animal_piece(a, q) for a, q in self.rng.sample(pool, 4 - self.level)]

    def describe(self, thing: Thing) -> str:
        return f"the {QUADRANTS[thing.data['quadrant']]} quarter of a {thing.name} picture"

    def target_marks(self) -> list[Mark]:
        return [Mark("sprite", 0.0, 1.0, 2.0, 2.0, sprite=f"picture:{self.animal}")]


class Filling(_AnimalFrame):
    """FI (Perception Reasoning): one of ten animal pictures with quarters missing; the target
    picture stays on the hint bar; distractors are any of the other 40 - k animal quarters."""

    code = "FI"
    title = "Filling"

    def generate(self) -> None:
        super().generate()
        self.goal = "There is a target item shown on the left margin. " + _PICTURE_GOAL

    def hint_lines(self) -> list[str]:
        return [f"the target picture: a whole {self.animal}."]

    def hint_marks(self) -> list[Mark]:
        return self.target_marks()


class MemoryFilling(_AnimalFrame):
    """MFI (Perception Reasoning + Memory): Filling whose target is shown in the first frame only;
    the pieces arrive in the backpack at the ``continue`` step (an explicit state change here; the
    released code did it inside ``render``, spec §7 #12). Budget 2/3/4."""

    code = "MFI"
    title = "Memory Filling"
    budgets = (2, 3, 4)
    memory = True

    def generate(self) -> None:
        super().generate()
        self._rule = ("In the first image, a target item will be shown on the left margin that you need to remember. "
                      "In the following images, the target item will not be shown. " + _PICTURE_GOAL)
        self.goal = self._rule + " If you understand the rules, choose 'continue' to begin the task."

    def reveal(self) -> None:
        for piece in self.spares:
            self.bag.add(piece)
        self.goal = self._rule

    def hint_lines(self) -> list[str]:
        return [] if self.revealed else [f"the target picture: a whole {self.animal}."]

    def hint_marks(self) -> list[Mark]:
        return [] if self.revealed else self.target_marks()


class Puzzle(_Frame):
    """PU (abstract Perception Reasoning): four abstract pieces, shuffled into a 2x2 target each
    episode; the backpack holds all four, so the distractors are the pieces already in the frame."""

    code = "PU"
    title = "Puzzle"

    def generate(self) -> None:
        super().generate()
        self.goal = "There is a target item shown on the left margin. " + _PICTURE_GOAL

    def choose_pieces(self) -> dict[int, Thing]:
        order = self.rng.sample(range(4), 4)
        self.arrangement = order
        return {q: _puzzle_piece(shape) for q, shape in enumerate(order)}

    def distractors(self) -> list[Thing]:
        return [_puzzle_piece(self.arrangement[q]) for q in range(4) if q not in self.missing]

    def describe(self, thing: Thing) -> str:
        return f"a square piece showing {PUZZLE_SHAPES[thing.data['shape']]}"

    def hint_lines(self) -> list[str]:
        quarters = "; ".join(f"{QUADRANTS[q]} quarter: {PUZZLE_SHAPES[s]}" for q, s in enumerate(self.arrangement))
        return [f"the target picture, a 2x2 square of pieces: {quarters}."]

    def hint_marks(self) -> list[Mark]:
        return [Mark("sprite", q % 2, 1.0 + q // 2, 1.0, 1.0, sprite=f"puzzle:{s}") for q, s in enumerate(self.arrangement)]


def _animal_piece(animal: str, quadrant: int) -> Thing:
    return Thing("piece", animal, f"piece:{animal}:{quadrant}", data={"quadrant": quadrant})


def _puzzle_piece(shape: int) -> Thing:
    return Thing("piece", "puzzle piece", f"puzzle:{shape}", data={"shape": shape})
