"""Random Sokoban levels that are solvable by construction, in MageBench's room sizes and box counts.

How a level is made (the idea of gym-sokoban's generator, which MageBench's levels came from, in our
own code):

1. carve a room: a random walk through a solid block of wall, clearing a small random pattern of
   cells around every position it visits, never touching the outer ring;
2. put every box on a target, and the player somewhere else on the floor;
3. play backwards: the player walks at random and sometimes *pulls* the box behind it. Pulling is the
   exact reverse of pushing, so every position met this way can be pushed back to the solved one;
4. over a few such walks from the same solved start, keep the position in which the boxes moved furthest from their targets in the most
   separate pulls, and hand it to the solver for its true optimal length.

A candidate is kept only when the solver proves it solvable within the step limit (50).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from nodes.game.sokoban.levels import Level

# Carving patterns, as (row, col) offsets around the walker: a dot, bars, an L, a 2x2 block, a plus.
PATTERNS: tuple[tuple[tuple[int, int], ...], ...] = (
    ((0, 0),),
    ((0, 0), (0, 1)),
    ((0, 0), (1, 0)),
    ((0, 0), (0, 1), (0, -1)),
    ((0, 0), (1, 0), (-1, 0)),
    ((0, 0), (0, 1), (1, 0)),
    ((0, 0), (0, 1), (1, 0), (1, 1)),
    ((0, 0), (0, 1), (0, -1), (1, 0), (-1, 0)),
)
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))


@dataclass(frozen=True)
class Recipe:
    """How to make levels of one tier: room size, boxes, how long to carve and to play backwards."""

    width: int
    height: int
    boxes: int
    carve_steps: int
    reverse_steps: int
    walks: int = 1
    turn_chance: float = 0.35
    pull_chance: float = 0.7


def carve_room(recipe: Recipe, rng: random.Random) -> set[tuple[int, int]]:
    """The floor cells of a random room, as (row, col)."""
    h, w = recipe.height, recipe.width
    r, c = rng.randrange(1, h - 1), rng.randrange(1, w - 1)
    dr, dc = rng.choice(STEPS)
    floor: set[tuple[int, int]] = set()
    for _ in range(recipe.carve_steps):
        for pr, pc in rng.choice(PATTERNS):
            rr, cc = r + pr, c + pc
            if 0 < rr < h - 1 and 0 < cc < w - 1:
                floor.add((rr, cc))
        if rng.random() < recipe.turn_chance:
            dr, dc = rng.choice(STEPS)
        if 0 < r + dr < h - 1 and 0 < c + dc < w - 1:
            r, c = r + dr, c + dc
    return floor


def play_backwards(floor: set[int], targets: list[int], player: int, width: int, recipe: Recipe,
                   rng: random.Random) -> tuple[float, frozenset[int], int] | None:
    """Walk the player at random, pulling boxes off their targets; return the most scrambled
    position seen with every box off the targets (boxes far from where they began, moved in many
    separate pulls) with its score, or None when no such position came up."""
    boxes = {b: b for b in targets}  # current cell -> the target it started on
    targets_set = set(targets)
    moves = (-width, width, -1, 1)
    last_pulled = -1
    switches = 0
    best: tuple[float, frozenset[int], int] | None = None
    for _ in range(recipe.reverse_steps):
        d = rng.choice(moves)
        nxt = player + d
        if nxt not in floor or nxt in boxes:
            continue
        behind = player - d
        if behind in boxes and rng.random() < recipe.pull_chance:
            origin = boxes.pop(behind)
            boxes[player] = origin
            if behind != last_pulled:
                switches += 1
            last_pulled = player
        player = nxt
        spread = sum(abs(c // width - o // width) + abs(c % width - o % width) for c, o in boxes.items())
        if any(c in targets_set for c in boxes):
            continue  # a box still (or again) on a target: keep scrambling
        score = switches * spread
        if score > 0 and (best is None or score > best[0]):
            best = (score, frozenset(boxes), player)
    return best


def candidate(recipe: Recipe, rng: random.Random) -> Level | None:
    """One random, not yet solved, level of the recipe (None when this draw was unusable)."""
    cells = carve_room(recipe, rng)
    if len(cells) < recipe.boxes * 2 + 3:
        return None
    w, h = recipe.width, recipe.height
    floor = sorted(r * w + c for r, c in cells)
    picks = rng.sample(floor, recipe.boxes + 1)
    targets, player = picks[:-1], picks[-1]
    walks = [play_backwards(set(floor), targets, player, w, recipe, rng) for _ in range(recipe.walks)]
    found = [x for x in walks if x is not None]
    if not found:
        return None
    _, boxes, player = max(found, key=lambda x: x[0])
    if boxes == frozenset(targets):
        return None
    walls = frozenset(range(w * h)) - frozenset(floor)
    return Level(w, h, walls, frozenset(targets), boxes, player)
