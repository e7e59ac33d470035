"""A move-optimal Sokoban solver: the fewest steps (moves plus pushes, as MageBench counts them).

MageBench needs, for every level, the shortest solution and the reward it earns (R_best), and proof
that it takes at most 50 steps. The paper used a pruned breadth-first search; this is the same answer
found faster: A* over *push* states, where an edge is "walk to a box, push it once" and costs the
walk plus one. Because walks are shortest paths, the cheapest sequence of pushes is the cheapest
sequence of single steps.

Pruning that never loses a solution:

* dead squares: a box on a non-target cell from which no sequence of pushes reaches any target
  (found by pulling boxes backwards from every target) is never pushed there;
* frozen 2x2 blocks: four cells that are all walls or boxes, with a box off target among them,
  can never change again;
* the heuristic, each box's push distance to its nearest target summed, never overestimates the
  remaining steps and never drops by more than one per push, so the first solution found is optimal.

Every solution that finishes a level in ``n`` steps earns the same reward,
``-0.5 n + 5 (boxes that end on a target and did not start there) + 50``, so the fewest steps also
give the best reward: R_best of a level is fixed by its optimal step count.
"""

from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass

from nodes.game.sokoban.levels import Level
from nodes.game.sokoban.rules import ACTIONS, Board, lurd, offsets

INF = 1 << 30


@dataclass(frozen=True)
class Solution:
    """An optimal solution: the action names, which of them push, its length and its reward."""

    actions: tuple[str, ...]
    pushes: tuple[bool, ...]
    reward: float
    states: int  # search states expanded, for the curious

    @property
    def steps(self) -> int:
        return len(self.actions)

    @property
    def lurd(self) -> str:
        return lurd(list(self.actions), list(self.pushes))


class Room:
    """The fixed part of a level, precomputed once for many searches: walkable cells, their
    neighbours, dead squares and each cell's push distance to the nearest target."""

    def __init__(self, level: Level) -> None:
        self.level = level
        self.width = level.width
        self.walls = level.walls
        self.targets = level.targets
        self.target_mask = _mask(level.targets)
        self.floor = level.room
        off = offsets(level.width)
        self.dirs = [(name, off[name]) for name in ACTIONS]
        self.neighbours: dict[int, list[tuple[int, int]]] = {
            c: [(c + d, i) for i, (_, d) in enumerate(self.dirs) if c + d in self.floor] for c in self.floor}
        self.target_list = sorted(level.targets)
        self.per_target = [self._pull_distances([t]) for t in self.target_list]
        self.distance = self._pull_distances(self.target_list)
        self.live_mask = _mask(self.distance)
        self.wall_mask = _mask(c for c in range(level.width * level.height) if c not in self.floor)
        w = level.width
        self.blocks = {c: [_mask((k, k + 1, k + w, k + w + 1)) for k in (c, c - 1, c - w, c - w - 1)]
                       for c in self.floor}
        self.steps_from = {c: [n for n, _ in nb] for c, nb in self.neighbours.items()}
        self._h: dict[int, int] = {}
        n = len(self.target_list)
        self.rows = {c: tuple(tbl.get(c, INF) for tbl in self.per_target) for c in self.floor}
        # the target sets of each size, with the targets still free in each, for the heuristic's DP
        self.layers = [[(used, [(j, 1 << j) for j in range(n) if not (used >> j) & 1])
                        for used in range(1 << n) if bin(used).count("1") == k] for k in range(n)]
        self._scratch = [INF] * (1 << n)

    def _pull_distances(self, sources: list[int]) -> dict[int, int]:
        """Push distance from each cell to the nearest of ``sources`` (targets), found by pulling
        boxes back from them: a box at ``c`` pulled to ``c - d`` needs the player at ``c - d`` and
        room at ``c - 2d``. Cells never reached are dead squares for those targets."""
        dist = {t: 0 for t in sources}
        queue = deque(sources)
        while queue:
            c = queue.popleft()
            for _, d in self.dirs:
                back, player = c - d, c - 2 * d
                if back in self.floor and player in self.floor and back not in dist:
                    dist[back] = dist[c] + 1
                    queue.append(back)
        return dist

    def heuristic(self, boxes: tuple[int, ...], mask: int) -> int:
        """A lower bound on the pushes left: the cheapest way to give each box its own target
        (push distances, other boxes ignored), by dynamic programming over sets of targets.
        Cached per box set, since many player positions share one."""
        h = self._h.get(mask)
        if h is not None:
            return h
        rows = self.rows
        best = self._scratch
        best[0] = 0
        for i, layer in enumerate(self.layers):
            row = rows[boxes[i]]
            for used, free in layer:
                cost = best[used]
                if cost >= INF:
                    continue
                for j, bit in free:
                    c = cost + row[j]
                    if c < best[used | bit]:
                        best[used | bit] = c
        h = best[-1]
        for k in range(len(best)):
            best[k] = INF
        self._h[mask] = h
        return h

    def walk(self, start: int, boxmask: int) -> dict[int, int]:
        """Steps from ``start`` to every cell the player can reach without pushing."""
        dist = {start: 0}
        frontier = [start]
        nbrs = self.steps_from
        k = 0
        while frontier:
            k += 1
            nxt = []
            for c in frontier:
                for n in nbrs[c]:
                    if n not in dist and not (boxmask >> n) & 1:
                        dist[n] = k
                        nxt.append(n)
            frontier = nxt
        return dist

    def path(self, start: int, goal: int, boxmask: int) -> list[str]:
        """A shortest walk (action names) from ``start`` to ``goal`` around the boxes."""
        if start == goal:
            return []
        prev: dict[int, tuple[int, int]] = {start: (-1, -1)}
        queue = deque([start])
        while queue:
            c = queue.popleft()
            for n, i in self.neighbours[c]:
                if n not in prev and not (boxmask >> n) & 1:
                    prev[n] = (c, i)
                    if n == goal:
                        out = []
                        while n != start:
                            n, i = prev[n]
                            out.append(self.dirs[i][0])
                        return out[::-1]
                    queue.append(n)
        raise ValueError("no walk between those cells")

    def frozen(self, cell: int, boxmask: int) -> bool:
        """True when a box just pushed to ``cell`` closes a 2x2 block of walls and boxes that holds
        a box off target: such a block can never be broken up, so the level is lost."""
        occupied = self.wall_mask | boxmask
        loose = boxmask & ~self.target_mask
        for block in self.blocks[cell]:
            if occupied & block == block and loose & block:
                return True
        return False


def _mask(cells) -> int:
    m = 0
    for c in cells:
        m |= 1 << c
    return m


def solve(level: Level, max_steps: int | None = None, max_states: int = 2_000_000,
          room: Room | None = None) -> Solution | None:
    """The shortest solution from the level's position, or None when there is none within
    ``max_steps`` (or the search gave up after ``max_states`` expanded states)."""
    room = room or Room(level)
    boxes0 = tuple(sorted(level.boxes))
    if any(b not in room.distance for b in boxes0 if b not in level.targets):
        return None  # a box already on a dead square
    if any(b not in room.floor for b in boxes0) or level.player not in room.floor:
        return None
    limit = INF if max_steps is None else max_steps
    mask0 = _mask(boxes0)
    start = (mask0, level.player)
    h0 = room.heuristic(boxes0, mask0)
    if h0 > limit:
        return None
    best_g = {start: 0}
    parent: dict[tuple[int, int], tuple[tuple[int, int], int, int] | None] = {start: None}
    heap = [(h0, 0, mask0, level.player, boxes0)]
    expanded = 0
    seen_at: dict[int, list[tuple[int, int]]] = {}  # box set -> (steps, player) of its expanded states
    goal = room.target_mask
    live = room.live_mask
    targets = room.targets
    dirs = [d for _, d in room.dirs]
    while heap:
        f, neg_g, mask, player, boxes = heapq.heappop(heap)
        g = -neg_g
        key = (mask, player)
        if best_g.get(key, INF) < g:
            continue
        if mask == goal:
            return _rebuild(level, room, parent, key, expanded)
        reach = room.walk(player, mask)
        # an expanded state with the same boxes whose player could walk here and still be no later
        # makes this one redundant (walks are reversible, so reach doubles as distance from there)
        earlier = seen_at.setdefault(mask, [])
        if any(g0 + reach.get(p0, INF) <= g for g0, p0 in earlier):
            continue
        earlier.append((g, player))
        expanded += 1
        if expanded > max_states:
            return None
        for b in boxes:
            for d in dirs:
                walk = reach.get(b - d)
                if walk is None:
                    continue
                dest = b + d
                if not (live >> dest) & 1 or (mask >> dest) & 1:
                    continue
                new_g = g + walk + 1
                new_mask = mask ^ (1 << b) ^ (1 << dest)
                new_key = (new_mask, b)
                if new_g >= best_g.get(new_key, INF):
                    continue
                if dest not in targets and room.frozen(dest, new_mask):
                    continue
                new_boxes = tuple(dest if x == b else x for x in boxes)
                h = room.heuristic(new_boxes, new_mask)
                if new_g + h > limit:
                    continue
                best_g[new_key] = new_g
                parent[new_key] = (key, b, d)
                heapq.heappush(heap, (new_g + h, -new_g, new_mask, b, new_boxes))
    return None


def _rebuild(level: Level, room: Room, parent: dict, key: tuple[int, int], expanded: int) -> Solution:
    """Turn the chain of pushes back into single steps, then replay them through the rules to
    get the pushes and the reward exactly as play would."""
    chain = []
    while parent[key] is not None:
        prev, box, d = parent[key]
        chain.append((prev, box, d))
        key = prev
    names = {d: name for name, d in room.dirs}
    actions: list[str] = []
    for (mask, player), box, d in reversed(chain):
        actions += room.path(player, box - d, mask)
        actions.append(names[d])
    board = Board(level)
    pushes, reward = [], 0.0
    for a in actions:
        out = board.step(a)
        pushes.append(out.pushed)
        reward += out.reward
    if not board.solved:
        raise AssertionError(f"solver produced a non-solution for {level.name}")
    return Solution(tuple(actions), tuple(pushes), reward, expanded)


def optimal_reward(level: Level, steps: int) -> float:
    """R_best of a level solved in ``steps`` steps: the same for every solution of that length."""
    gained = len(level.boxes - level.targets)
    return -0.5 * steps + 5.0 * gained + 50.0
