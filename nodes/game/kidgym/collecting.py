"""The two tasks about picking things up: Classification (CL) and Counting (CO)."""

from __future__ import annotations

from itertools import combinations

from nodes.game.kidgym.base import Option, Task
from nodes.game.kidgym.catalog import BASKET_COLORS, CATEGORIES, COUNTABLE, THEMES, category_of, plural
from nodes.game.kidgym.world import Cell, Thing, neighbours


class Classification(Task):
    """CL (Execution): put every item in the basket the goal names for its kind.

    Two kinds from one category, 1/2/3 items of each, two baskets of two of four colours. Every
    basket is offered for every backpack slot, the wrong one included; a put into the wrong basket
    fails and the item stays in the backpack. Success: no item left in the scene and the backpack
    empty. Budget 4/8/12, two steps per item, i.e. no slack (spec §2.2).

    Choice: at levels 2 and 3 the goal speaks of the kinds in the plural ("all the apples"); the
    released code keeps the singular, which reads as if there were one of each.
    """

    code = "CL"
    title = "Classification"
    budgets = (4, 8, 12)

    def generate(self) -> None:
        category = self.rng.choice(list(CATEGORIES))
        self.theme = THEMES[category]
        kinds = self.rng.sample(CATEGORIES[category], 2)
        colors = self.rng.sample(BASKET_COLORS, 2)
        self.sorting = dict(zip(kinds, colors))
        items = [Thing("item", kind, kind) for kind in kinds for _ in range(self.level)]
        baskets = [Thing("basket", "basket", f"basket:{color}", color=color) for color in colors]
        things = items + baskets
        self.rng.shuffle(things)
        self.scatter(things)
        self.label(things)
        (a, ca), (b, cb) = self.sorting.items()
        if self.level == 1:
            self.goal = f"Place {a} in the {ca} basket and {b} in the {cb} basket."
        else:
            self.goal = f"Place all the {plural(a)} in the {ca} basket and all the {plural(b)} in the {cb} basket."

    def items(self) -> list[Thing]:
        return [t for t in self.board.things if t.kind == "item"]

    def baskets(self) -> list[Thing]:
        return [t for t in self.board.things if t.kind == "basket"]

    def admissible(self) -> list[Option]:
        opts = [Option(f"pick up the item with label {t.label}", "pick", target=t) for t in self.items()]
        opts += [Option(f"put the item from backpack {letter} into the basket with label {b.label}", "put", target=b,
                        slot=letter) for letter, _ in self.bag.occupied() for b in self.baskets()]
        return opts

    def apply(self, option: Option) -> bool:
        target = option.target
        assert target is not None and target.cell is not None
        if option.verb == "pick":
            if self.bag.full or not self.walk_to(target.cell):
                return False
            self.board.remove(target)
            return self.bag.add(target)
        item = self.bag.get(option.slot or "")
        if item is None or self.sorting.get(item.name) != target.color or not self.walk_to(target.cell):
            return False
        self.bag.take(option.slot or "")
        target.count += 1  # the basket shows what it holds
        target.data.setdefault("holds", []).append(item.name)
        return True

    def outcome(self) -> tuple[bool, bool]:
        done = not self.items() and len(self.bag) == 0
        return done, done

    def solve(self) -> str:
        basket = {b.color: b for b in self.baskets()}
        for letter, item in self.bag.occupied():
            return f"put the item from backpack {letter} into the basket with label {basket[self.sorting[item.name]].label}"
        dist = self.board.reachable(self.agent)
        nearest = min(self.items(), key=lambda t: min(dist.get(n, 99) for n in _around(t)))
        return f"pick up the item with label {nearest.label}"

    def describe(self, thing: Thing) -> str:
        if thing.kind == "basket":
            held = thing.data.get("holds") or []
            return f"{thing.color} basket" + (f" holding {', '.join(held)}" if held else "")
        return thing.name


class Counting(Task):
    """CO (Perception Reasoning + Planning): collect exactly the target number of one food or fruit.

    Piles of 1, 2 and 3 units, one of each size at level 1, two at level 2, three at level 3; a
    target drawn uniformly from 1-3 / 2-6 / 3-9. Each pile fills one of the four backpack slots.
    The episode ends when the agent declares "I have already collected ..." (success iff the
    backpack holds exactly the target) or when the backpack is full short of the target. Budget 5
    at every level, the only task with slack (spec §2.2, §7 #14).
    """

    code = "CO"
    title = "Counting"
    budgets = (5, 5, 5)
    RANGES = ((1, 3), (2, 6), (3, 9))

    def generate(self) -> None:
        self.item = self.rng.choice(COUNTABLE)
        self.theme = THEMES[category_of(self.item)]
        lo, hi = self.RANGES[self.level - 1]
        self.target = self.rng.randint(lo, hi)
        piles = [Thing("pile", self.item, f"pile:{self.item}:{n}", count=n) for n in (1, 2, 3) for _ in range(self.level)]
        self.rng.shuffle(piles)
        self.scatter(piles)
        self.label(piles)
        self.declared = False
        word = self.item if self.target == 1 else plural(self.item)
        self.done_text = f"I have already collected {self.target} {word}"
        self.goal = (f"Collect {self.target} {word}. Make sure you have gathered exactly this amount, no more and no "
                     f"less. You should be aware that there may be 1 to 3 items of different quantities in one grid. "
                     f"Once you have collected this number of {plural(self.item)}, select the action: "
                     f"'{self.done_text}'.")

    def piles(self) -> list[Thing]:
        return [t for t in self.board.things if t.kind == "pile"]

    def collected(self) -> int:
        return sum(t.count for t in self.bag)

    def admissible(self) -> list[Option]:
        opts = [Option(f"pick up the {self.item} with label {t.label}", "pick", target=t) for t in self.piles()]
        return opts + [Option(self.done_text, "declare")]

    def apply(self, option: Option) -> bool:
        if option.verb == "declare":
            self.declared = True
            return True
        target = option.target
        assert target is not None and target.cell is not None
        if self.bag.full or not self.walk_to(target.cell):
            return False
        self.board.remove(target)
        return self.bag.add(target)

    def outcome(self) -> tuple[bool, bool]:
        if self.declared:
            return self.collected() == self.target, True
        return False, self.bag.full and self.collected() < self.target

    def solve(self) -> str:
        need = self.target - self.collected()
        if need <= 0:
            return self.done_text
        free = self.bag.CAPACITY - len(self.bag)
        piles = sorted(self.piles(), key=lambda t: -t.count)
        for n in range(1, free + 1):
            for combo in combinations(piles, n):
                if sum(t.count for t in combo) == need:
                    return f"pick up the {self.item} with label {combo[0].label}"
        return self.done_text  # no way left to hit the target exactly

    def describe(self, thing: Thing) -> str:
        return f"a pile of {thing.count} {thing.name if thing.count == 1 else plural(thing.name)}"


def _around(thing: Thing) -> list[Cell]:
    assert thing.cell is not None
    return list(neighbours(thing.cell))
