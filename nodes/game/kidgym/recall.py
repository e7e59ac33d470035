"""The two choose-what-you-remember tasks: Selection (SE) and Memory Decode (MDE).

Both show the material to remember on the hint bar in the first frame only, with ``continue`` as
the sole option, and then hide it while the candidates appear in the scene (spec §2.2).
"""

from __future__ import annotations

from nodes.game.kidgym.base import Mark, Option, Task
from nodes.game.kidgym.catalog import CATEGORIES, THEMES, all_items
from nodes.game.kidgym.world import Thing

_START = " If you understand the rules, select the 'continue' action to start the task."
_BEGIN = " If you understand the rules, choose 'continue' to begin the task."


class _Recall(Task):
    """What both recall tasks share: the shown-then-hidden first state, and picking a thing up."""

    _rule: str

    def reveal(self) -> None:
        for thing in self.board.things:
            thing.hidden = False
        self.goal = self._rule

    def pick_up(self, option: Option) -> Thing | None:
        """Walk to the option's thing and put it in the backpack; None if it cannot be reached."""
        target = option.target
        assert target is not None and target.cell is not None
        if not self.walk_to(target.cell):
            return None
        self.board.remove(target)
        self.bag.add(target)
        return target


class Selection(_Recall):
    """SE (Memory): remember 1/2/3 items, then pick them out of 4/6/8 of the same category.

    The chosen items go into the backpack; the episode ends after as many choices as there were
    items to remember, and succeeds when all of them were remembered ones. Budget 2/3/4 including
    ``continue`` (no slack).
    """

    code = "SE"
    title = "Selection"
    budgets = (2, 3, 4)
    memory = True

    def generate(self) -> None:
        self.category = self.rng.choice(list(CATEGORIES))
        self.theme = THEMES[self.category]
        names = self.rng.sample(CATEGORIES[self.category], 2 * self.level + 2)
        self.targets = names[: self.level]
        things = [Thing("item", n, n, hidden=True) for n in names]
        self.rng.shuffle(things)
        self.scatter(things)
        self.label(things)
        self.chosen: list[Thing] = []
        if self.level == 1:
            rule = ("In the first image, an item will be shown on the left margin that you need to remember. In the "
                    "following images, several random items will be generated in the scene, and you need to select "
                    "the one you recall.")
        else:
            rule = (f"In the first image, {self.level} items will be shown on the left margin that you need to "
                    "remember. In the following images, several random items will be generated in the scene, and you "
                    "need to select all the items you recall one by one.")
        self.goal = rule + _START
        self._rule = rule

    def admissible(self) -> list[Option]:
        return [Option(f"choose {self.category} with label {t.label}", "choose", target=t) for t in self.visible_things()]

    def apply(self, option: Option) -> bool:
        target = self.pick_up(option)
        if target is not None:
            self.chosen.append(target)
        return target is not None

    def outcome(self) -> tuple[bool, bool]:
        if len(self.chosen) < self.level:
            return False, False
        return all(t.name in self.targets for t in self.chosen), True

    def solve(self) -> str:
        for thing in self.visible_things():
            if thing.name in self.targets:
                return f"choose {self.category} with label {thing.label}"
        return self.fallback()

    def hint_lines(self) -> list[str]:
        if self.revealed:
            return []
        return [("the item to remember: " if self.level == 1 else "the items to remember: ") + ", ".join(self.targets)
                + "."]

    def hint_marks(self) -> list[Mark]:
        if self.revealed:
            return []
        return [Mark("sprite", 0.25, 1.0 + 2.2 * i, 1.5, 1.5, sprite=name) for i, name in enumerate(self.targets)]


class MemoryDecode(_Recall):
    """MDE (Memory + Learning): remember 1/2/3 item-to-item pairs, then pick the partner of the
    target shown in the hint bar's box.

    Candidates are the target's partner, the other pairs' partners and random items, 4/6/8 in all
    (so a random pick wins 1/4, 1/6, 1/8, the paper's 0.25/0.17/0.13). Choice: the other partners
    are always among the distractors, so remembering only "which items were in pairs" is not
    enough. The episode ends at the first choice. Budget 2/3/4.
    """

    code = "MDE"
    title = "Memory Decode"
    budgets = (2, 3, 4)
    memory = True

    def generate(self) -> None:
        self.theme = "park"
        k = self.level
        names = self.rng.sample(all_items(), 3 * k + 2)
        self.pairs = list(zip(names[:k], names[k:2 * k]))
        self.target, self.answer = self.rng.choice(self.pairs)
        candidates = [Thing("item", n, n, hidden=True) for n in names[k:]]
        self.rng.shuffle(candidates)
        self.scatter(candidates)
        self.label(candidates)
        self.chosen: Thing | None = None
        self._rule = ("In the first image, arrow-connected items with one-to-one correspondence(s) will be shown on "
                      "the left margin that you need to remember. In the following images, the correspondence(s) will "
                      "not be shown, and a target item will be generated in the black box in the upper left corner. "
                      "You need to select the correct corresponding item for the target based on the pairing you "
                      "remembered in the first image.")
        self.goal = self._rule + _BEGIN

    def admissible(self) -> list[Option]:
        return [Option(f"choose the item with label {t.label}", "choose", target=t) for t in self.visible_things()]

    def apply(self, option: Option) -> bool:
        target = self.pick_up(option)
        if target is not None:
            self.chosen = target
        return target is not None

    def outcome(self) -> tuple[bool, bool]:
        if self.chosen is None:
            return False, False
        return self.chosen.name == self.answer, True

    def solve(self) -> str:
        for thing in self.visible_things():
            if thing.name == self.answer:
                return f"choose the item with label {thing.label}"
        return self.fallback()

    def hint_lines(self) -> list[str]:
        if not self.revealed:
            return ["arrow-connected pairs to remember: " + "; ".join(f"{a} -> {b}" for a, b in self.pairs) + "."]
        return [f"the target item in the black box: {self.target}."]

    def hint_marks(self) -> list[Mark]:
        if self.revealed:
            return [Mark("box", 0.15, 0.15, 1.7, 1.7), Mark("sprite", 0.35, 0.35, 1.3, 1.3, sprite=self.target)]
        marks: list[Mark] = []
        for i, (a, b) in enumerate(self.pairs):
            y = 1.2 + 2.4 * i
            marks += [Mark("sprite", 0.0, y, 0.8, 0.8, sprite=a), Mark("arrow", 0.8, y + 0.4, 0.4, 0.0),
                      Mark("sprite", 1.2, y, 0.8, 0.8, sprite=b)]
        return marks
