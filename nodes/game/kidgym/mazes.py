"""The maze family: Maze (MA), Decode Maze (DMA) and Memory Maze (MMA).

The released KidGym takes its walls from fixed banks of 100 layouts per level, some of which make
``reset`` loop forever (spec §4.8, §7 #11). This pack generates mazes from the episode seed
instead: a random spanning tree over a 3x3 lattice of rooms (the cells with even coordinates),
joined by corridor cells, so there is exactly one path between any two cells. The k doors sit on
corridor cells of the path from the agent to the diamond, so each one really blocks it, and the
key for door j lies anywhere the agent can reach while doors j..k are still shut (so keys may be
collected in more than one order, as a bank of hand-placed key slots allows). Every
layout is then checked by planning over (keys held, doors open): the shortest solution must be
exactly 2k + 1 actions, the optimal length the budgets are built on.
"""

from __future__ import annotations

from collections import deque
from typing import Callable

from nodes.game.kidgym.base import MAX_TRIES, Mark, Option, Task
from nodes.game.kidgym.catalog import KEY_COLORS
from nodes.game.kidgym.world import ALL_CELLS, STEPS, Board, Cell, Thing, neighbours

ROOMS: tuple[Cell, ...] = tuple((r, c) for r in (0, 2, 4) for c in (0, 2, 4))
# Decode Maze's key -> door rule: a fixed cyclic permutation, as in the released code (spec §2.2).
DECODED: dict[str, str] = {"blue": "yellow", "red": "blue", "yellow": "red"}
OBTAIN = "obtain item with label {label}"
USE = "use the key in backpack {slot} to unlock door with label {label}"

Step = tuple[str, Thing, Thing | None]  # ("obtain", thing, None) or ("use", key, door)


def lattice_walls(rng_choice: Callable[[list[Cell]], Cell]) -> set[Cell]:
    """Walls of a perfect maze: a randomised depth-first spanning tree over the 3x3 rooms."""
    start = rng_choice(list(ROOMS))
    seen, stack, floor = {start}, [start], {start}
    while stack:
        r, c = stack[-1]
        nxt = [(r + 2 * dr, c + 2 * dc) for dr, dc in STEPS if (r + 2 * dr, c + 2 * dc) in ROOMS
               and (r + 2 * dr, c + 2 * dc) not in seen]
        if not nxt:
            stack.pop()
            continue
        room = rng_choice(nxt)
        floor |= {room, ((r + room[0]) // 2, (c + room[1]) // 2)}
        seen.add(room)
        stack.append(room)
    return set(ALL_CELLS) - floor


def path_between(walls: set[Cell], src: Cell, dst: Cell) -> list[Cell]:
    prev: dict[Cell, Cell | None] = {src: None}
    queue = deque([src])
    while queue:
        cell = queue.popleft()
        for nxt in neighbours(cell):
            if nxt not in prev and nxt not in walls:
                prev[nxt] = cell
                queue.append(nxt)
    path, cur = [], dst
    while cur is not None:
        path.append(cur)
        cur = prev[cur]
    return path[::-1]


def shortest_plan(board: Board, agent: Cell, held: list[Thing], goal: Thing,
                  opens: Callable[[str, str], bool]) -> list[Step] | None:
    """The shortest sequence of high-level actions that obtains ``goal``, or None.

    Breadth-first over which keys are picked up, which doors are open and which keys are used.
    The agent always stays in the region reachable from where it stands, and that region only
    grows, so reachability from the current cell is all a state needs."""
    board_keys = [t for t in board.things if t.kind == "key"]
    doors = [t for t in board.things if t.kind == "door"]
    keys = held + board_keys
    fixed = board.occupied()
    start = (frozenset(range(len(held))), frozenset(), frozenset())  # (picked, opened, used)
    prev: dict[tuple[frozenset[int], frozenset[int], frozenset[int]], tuple | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        picked, opened, used = state
        blocked = fixed - {keys[i].cell for i in picked} - {doors[j].cell for j in opened}
        dist = board.reachable(agent, blocked)

        def near(thing: Thing, dist: dict[Cell, int] = dist) -> bool:
            return thing.cell is not None and any(n in dist for n in neighbours(thing.cell))

        if near(goal):
            plan: list[Step] = [("obtain", goal, None)]
            node = prev[state]
            while node is not None:
                state_before, step = node
                plan.append(step)
                node = prev[state_before]
            return plan[::-1]
        moves: list[tuple[tuple[frozenset[int], frozenset[int], frozenset[int]], Step]] = []
        for i, key in enumerate(keys):
            if i not in picked and near(key):
                moves.append(((picked | {i}, opened, used), ("obtain", key, None)))
        for i in picked - used:
            for j, door in enumerate(doors):
                if j not in opened and opens(keys[i].color or "", door.color or "") and near(door):
                    moves.append(((picked, opened | {j}, used | {i}), ("use", keys[i], door)))
        for nxt, step in moves:
            if nxt not in prev:
                prev[nxt] = (state, step)
                queue.append(nxt)
    return None


class _Maze(Task):
    """Obtain the diamond; doors block the way and open with a matching key, which is used up.

    Options: "obtain" for every key, diamond or chest in the scene (reachable or not) and "use"
    for every door x every backpack slot holding a key; an unreachable target or a key that does
    not fit wastes the step (spec §7 #5)."""

    extra_keys = 0
    chests = 0

    def opens(self, key: str, door: str) -> bool:
        return key == door

    def door_keys(self, doors: list[str]) -> list[str]:
        """The key colour for each door colour."""
        return list(doors)

    def generate(self) -> None:
        self.theme = "maze"
        k = self.level
        for _ in range(MAX_TRIES):
            if self._layout(k):
                break
        else:
            raise RuntimeError(f"{self.code} L{self.level}: no valid maze after {MAX_TRIES} tries")
        self.got = self.wrong_chest = False

    def _layout(self, k: int) -> bool:
        board = self.board = Board()
        board.walls = lattice_walls(self.rng.choice)
        a, d = self.rng.sample(list(ROOMS), 2)
        path = path_between(board.walls, a, d)
        corridors = [c for c in path if (c[0] % 2) != (c[1] % 2)]
        if len(corridors) < k:
            return False
        door_cells = sorted(self.rng.sample(corridors, k), key=path.index)
        door_colors = self.rng.sample(KEY_COLORS, k)
        doors = [board.add(Thing("door", "door", f"door:{c}", color=c), cell) for c, cell in zip(door_colors, door_cells)]
        self.agent = a
        self.diamond = board.add(Thing("diamond", "diamond", "diamond"), d)
        keys: list[Thing] = []
        blocked = {door.cell for door in doors} | board.walls
        for j, color in enumerate(self.door_keys(door_colors)):
            region = board.reachable(a, blocked - {door.cell for door in doors[:j]})  # doors j.. still shut
            spots = [c for c in region if c != a and board.at(c) is None]
            if not spots:
                return False
            keys.append(board.add(Thing("key", "key", f"key:{color}", color=color), self.rng.choice(spots)))
        spare = [c for c in KEY_COLORS if c not in self.door_keys(door_colors)]
        for color in self.rng.sample(spare, min(self.extra_keys, len(spare))):
            keys.append(board.add(Thing("key", "key", f"key:{color}", color=color), self._free_floor()))
        chests = [board.add(Thing("chest", "treasure chest", "chest", hidden=True), self._free_floor())
                  for _ in range(self.chests)]
        plan = shortest_plan(board, a, [], self.diamond, self.opens)
        if plan is None or len(plan) != 2 * k + 1:
            return False
        labelled = [*keys, *doors, self.diamond, *chests]
        self.rng.shuffle(labelled)
        self.label(labelled)
        return True

    def _free_floor(self) -> Cell:
        return self.rng.choice(self.board.free_cells([self.agent]))

    def admissible(self) -> list[Option]:
        things = self.visible_things()
        opts = [Option(OBTAIN.format(label=t.label), "obtain", target=t) for t in things
                if t.kind in ("key", "diamond", "chest")]
        doors = [t for t in things if t.kind == "door"]
        opts += [Option(USE.format(slot=letter, label=d.label), "use", target=d, slot=letter)
                 for letter, key in self.bag.occupied() if key.kind == "key" for d in doors]
        return opts

    def apply(self, option: Option) -> bool:
        target = option.target
        assert target is not None and target.cell is not None
        if option.verb == "obtain":
            if (target.kind == "key" and self.bag.full) or not self.walk_to(target.cell):
                return False
            self.board.remove(target)
            if target.kind == "key":
                return self.bag.add(target)
            if target is self.diamond:
                self.got = True
                self.bag.add(Thing("diamond", "diamond", "diamond"))
            else:
                self.wrong_chest = True
            return True
        key = self.bag.get(option.slot or "")
        if key is None or not self.opens(key.color or "", target.color or "") or not self.walk_to(target.cell):
            return False
        self.bag.take(option.slot or "")
        self.board.remove(target)
        return True

    def outcome(self) -> tuple[bool, bool]:
        return self.got, self.got or self.wrong_chest

    def solve(self) -> str:
        held = [t for t in self.bag if t.kind == "key"]
        plan = shortest_plan(self.board, self.agent, held, self.diamond, self.opens)
        if plan is None:
            return self.fallback()
        verb, thing, door = plan[0]
        if verb == "obtain":
            return OBTAIN.format(label=thing.label)
        assert door is not None
        return USE.format(slot=self.bag.letter_of(thing), label=door.label)

    def describe(self, thing: Thing) -> str:
        if thing.kind == "door":
            return f"locked {thing.color} door"
        return super().describe(thing)


class Maze(_Maze):
    """MA (Planning): a key of the same colour opens a door; 1/2/3 doors. Budget 3/5/7 = 2k + 1.

    Choice: door colours are drawn at random at every level (the released code's level 1 is
    always blue, spec §7 #11)."""

    code = "MA"
    title = "Maze"
    budgets = (3, 5, 7)

    def generate(self) -> None:
        super().generate()
        self.goal = ("There is a diamond shown in the scene, and you need to obtain the diamond. When your path is "
                     "blocked by a door, you can use a key of the same color to unlock it. Note: You must pick up the "
                     "key first before you can use it to unlock doors.")


class DecodeMaze(_Maze):
    """DMA (Learning + Planning): keys open doors by the rule on the hint bar (blue key -> yellow
    door, red -> blue, yellow -> red), never their own colour. Level 1 adds one key that opens no
    door in the scene. Budget 4/6/8, one step of slack."""

    code = "DMA"
    title = "Decode Maze"
    budgets = (4, 6, 8)

    @property
    def extra_keys(self) -> int:  # type: ignore[override]
        return 1 if self.level == 1 else 0

    def opens(self, key: str, door: str) -> bool:
        return DECODED.get(key) == door

    def door_keys(self, doors: list[str]) -> list[str]:
        by_door = {door: key for key, door in DECODED.items()}
        return [by_door[d] for d in doors]

    def generate(self) -> None:
        super().generate()
        self.goal = ("There is a diamond in the scene, and your goal is to obtain it. Some paths are blocked by doors, "
                     "and the key required to unlock each door color is shown in the left hint panel. You must consult "
                     "the hint panel and use the specified key to open the corresponding door.")
        self.rules = [(key, door) for key, door in DECODED.items()
                      if any(t.kind == "door" and t.color == door for t in self.board.things)]

    def hint_lines(self) -> list[str]:
        return ["which key opens which door: " + "; ".join(f"the {k} key opens the {d} door" for k, d in self.rules)
                + "."]

    def hint_marks(self) -> list[Mark]:
        marks: list[Mark] = []
        for i, (key, door) in enumerate(self.rules):
            y = 1.2 + 2.4 * i
            marks += [Mark("sprite", 0.0, y, 0.8, 0.8, sprite=f"key:{key}"), Mark("arrow", 0.8, y + 0.4, 0.4, 0.0),
                      Mark("sprite", 1.2, y, 0.8, 0.8, sprite=f"door:{door}")]
        return marks


class MemoryMaze(_Maze):
    """MMA (Memory + Planning): the first frame shows where the diamond is; from ``continue`` on it
    looks like a treasure chest, and two more chests appear. Opening a wrong chest ends the episode
    as a failure. Keys match doors by colour, as in Maze. Budget 4/6/8 = 1 + (2k + 1)."""

    code = "MMA"
    title = "Memory Maze"
    budgets = (4, 6, 8)
    memory = True
    chests = 2

    def generate(self) -> None:
        super().generate()
        self._rule = ("In the first image, a diamond will be shown in the scene that you need to remember its "
                      "location. In the following images, the diamond will not be shown and several treasure boxes "
                      "will be generated in the scene. You must choose to open the treasure box located at the "
                      "diamond's original position to obtain the diamond. When your path is blocked by a door, you can "
                      "use a key of the same color to unlock it. Note: You must obtain the key before you can use it "
                      "to unlock doors.")
        self.goal = self._rule + " If you understand the rules, choose 'continue' to begin the task."

    def reveal(self) -> None:
        self.diamond.kind, self.diamond.name, self.diamond.sprite = "chest", "treasure chest", "chest"
        for thing in self.board.things:
            thing.hidden = False
        self.goal = self._rule
