"""The two tasks about putting things where a learned rule says: Sorting (SO) and Placement (PL)."""

from __future__ import annotations

from nodes.game.kidgym.base import Option, Task, roman
from nodes.game.kidgym.catalog import BY_WEIGHT, CATEGORIES, THEMES
from nodes.game.kidgym.world import Cell, Thing

# (rule, True when heavier means faster): each rule ties speed to real-world weight, often against
# what real animals do, so the ranking has to come from the rule rather than from knowledge.
SPEED_RULES: tuple[tuple[str, bool], ...] = (
    ("In this world, the heavier the animal is, the faster it is.", True),
    ("In this world, the heavier the animal is, the slower it is.", False),
    ("In this world, the lighter the animal is, the faster it is.", False),
    ("In this world, the lighter the animal is, the slower it is.", True),
)
ORDERS: tuple[str, ...] = ("fast to slow by speed", "slow to fast by speed")


class Sorting(Task):
    """SO (Learning): rank 2/3/4 animals from the backpack into grid positions I, II, ... by a rule.

    The rule bank is this pack's own: four phrasings that tie speed to weight, times two orders;
    the animals are drawn from ones with undisputed weights (``catalog.BY_WEIGHT``). The episode
    ends when the backpack is empty and succeeds if every position holds the right animal.
    Budget 2/3/4 (no slack); a uniform random player wins 1/n! (0.50/0.17/0.04; the paper's
    0.08 at level 2 is a slip, spec §7 #16).
    """

    code = "SO"
    title = "Sorting"
    budgets = (2, 3, 4)
    ROW = 2

    def generate(self) -> None:
        self.theme = "farm"
        n = self.level + 1
        animals = self.rng.sample(BY_WEIGHT, n)
        rule, heavier_faster = self.rng.choice(SPEED_RULES)
        order = self.rng.choice(ORDERS)
        by_weight = sorted(animals, key=BY_WEIGHT.index)  # heaviest first
        fastest_first = by_weight if heavier_faster else by_weight[::-1]
        ranked = fastest_first if order.startswith("fast") else fastest_first[::-1]
        places = roman(n)
        self.answer = dict(zip(places, ranked))
        first = (5 - n) // 2
        self.slots = {p: (self.ROW, first + i) for i, p in enumerate(places)}
        self.agent = self.rng.choice([(r, c) for r in range(5) for c in range(5) if r != self.ROW])
        self.rng.shuffle(animals)
        for name in animals:
            self.bag.add(Thing("item", name, name))
        self.goal = f"{rule} Rank the animal in the backpack from {order} in position {', '.join(places)}."

    def admissible(self) -> list[Option]:
        return self.option_places("place animal from backpack {slot} at grid {place}")

    def apply(self, option: Option) -> bool:
        return self.put_down(option.slot or "", option.place or "") is not None

    def outcome(self) -> tuple[bool, bool]:
        if len(self.bag):
            return False, False
        return all((t := self.on_place(p)) is not None and t.name == a for p, a in self.answer.items()), True

    def solve(self) -> str:
        for place in self.empty_places():
            for letter, thing in self.bag.occupied():
                if thing.name == self.answer[place]:
                    return f"place animal from backpack {letter} at grid {place}"
        return self.fallback()


# Compass directions clockwise from north, as (name, row step, column step); north is up on screen.
COMPASS: tuple[tuple[str, int, int], ...] = (
    ("north", -1, 0), ("northeast", -1, 1), ("east", 0, 1), ("southeast", 1, 1),
    ("south", 1, 0), ("southwest", 1, -1), ("west", 0, -1), ("northwest", -1, -1),
)


class Placement(Task):
    """PL (Learning + Perception Reasoning): put the backpack item on the side of the centre item
    opposite to the direction given; at level 3 then turn one more position clockwise or
    counterclockwise on the 8-ring (spec §7 #22: north -> south -> clockwise -> southwest).

    Level 1 offers the 4 side cells, levels 2 and 3 all 8 around the centre, numbered I, II, ... in
    reading order (a fixed layout, as in the released code; choice: reading order). Budget 1.
    """

    code = "PL"
    title = "Placement"
    budgets = (1, 1, 1)
    show_labels = False
    CENTRE: Cell = (2, 2)

    def generate(self) -> None:
        category = self.rng.choice(list(CATEGORIES))
        self.theme = THEMES[category]
        centre_name = self.rng.choice(CATEGORIES[category])
        other = self.rng.choice([c for c in CATEGORIES if c != category])
        self.item = self.rng.choice(CATEGORIES[other])
        self.centre = self.board.add(Thing("fixture", centre_name, centre_name), self.CENTRE)
        ring = COMPASS[::2] if self.level == 1 else COMPASS
        cells = sorted((self.CENTRE[0] + dr, self.CENTRE[1] + dc) for _, dr, dc in ring)
        self.slots = dict(zip(roman(len(cells)), cells))
        given = self.rng.randrange(len(ring))
        direction = ring[given][0]
        turn = ""
        target = (COMPASS.index(ring[given]) + 4) % 8
        if self.level == 3:
            turn = self.rng.choice(("clockwise", "counterclockwise"))
            target = (target + (1 if turn == "clockwise" else -1)) % 8
        _, dr, dc = COMPASS[target]
        goal_cell = (self.CENTRE[0] + dr, self.CENTRE[1] + dc)
        self.answer = next(p for p, c in self.slots.items() if c == goal_cell)
        self.agent = (4, 0)
        self.bag.add(Thing("item", self.item, self.item))
        if self.level < 3:
            self.goal = (f"A direction will be provided: {direction}. Determine its opposite direction, and then place "
                         f"the {self.item} in the corresponding location around the {centre_name}.")
        else:
            self.goal = (f"A direction will be provided: {direction}. From its opposite direction, determine the next "
                         f"{turn} position, then place the {self.item} in the corresponding location around the "
                         f"{centre_name}.")

    def admissible(self) -> list[Option]:
        return self.option_places(f"place the {self.item} from backpack {{slot}} at grid {{place}}")

    def apply(self, option: Option) -> bool:
        return self.put_down(option.slot or "", option.place or "") is not None

    def outcome(self) -> tuple[bool, bool]:
        placed = [p for p in self.slots if self.on_place(p) is not None]
        return placed == [self.answer], bool(placed)

    def solve(self) -> str:
        return f"place the {self.item} from backpack A at grid {self.answer}"
