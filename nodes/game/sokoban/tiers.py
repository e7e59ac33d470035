"""MageBench's eight Sokoban difficulty tiers (its Fig. 9), and the paper's baseline scores.

The tier names are gym-sokoban's environment ids. ``large-v1`` has 5 boxes, not the 4 that
gym-sokoban's README says: its code defines the large-v1 class twice and the second (5-box)
definition wins, and MageBench's levels came from that code.
"""

from __future__ import annotations

from dataclasses import dataclass

from nodes.game.sokoban.generator import Recipe


@dataclass(frozen=True)
class Tier:
    """One tier: its size in the benchmark, room size (width x height), boxes, the paper's mean
    optimal step count, and the generator recipe we use to make levels like it."""

    name: str
    levels: int
    width: int
    height: int
    boxes: int
    paper_mean_steps: float
    recipe: Recipe


def _tier(name: str, levels: int, width: int, height: int, boxes: int, mean: float, carve: float,
          reverse: int) -> Tier:
    recipe = Recipe(width, height, boxes, carve_steps=round(carve * (width + height)), reverse_steps=reverse,
                    walks=5)
    return Tier(name, levels, width, height, boxes, mean, recipe)


# name, levels, width, height, boxes, paper's mean optimal steps, carving length (per unit of
# width + height: longer carving opens the room, which makes longer solutions), backward-play length.
# The carving lengths were set by trying a few and keeping the one whose natural mean came closest.
TIERS: tuple[Tier, ...] = (
    _tier("v0", 15, 10, 10, 3, 23.7, 4.0, 1500),
    _tier("v1", 24, 10, 10, 4, 30.0, 4.0, 2000),
    _tier("v2", 22, 10, 10, 5, 38.0, 4.0, 2000),
    _tier("small-v0", 50, 7, 7, 2, 10.5, 2.5, 1000),
    _tier("small-v1", 20, 7, 7, 3, 18.0, 4.0, 1500),
    _tier("large-v0", 14, 13, 11, 3, 27.9, 4.0, 1500),
    _tier("large-v1", 18, 13, 11, 5, 39.1, 4.0, 2000),
    _tier("huge-v0", 19, 13, 13, 5, 37.4, 4.0, 2000),
)
TIER_BY_NAME = {t.name: t for t in TIERS}
TOTAL_LEVELS = sum(t.levels for t in TIERS)  # 182
STEP_LIMIT = 50  # every benchmark level is solvable in at most this many steps, and play stops there

# The paper's baseline scores (Table 1: test-mini; Table 4: complete set), the same in Global and Online.
PAPER_BASELINES: dict[str, dict[str, float]] = {
    "mini": {"idle": 41.18, "random": 46.61, "human_global": 83.63, "human_online": 96.85},
    "full": {"idle": 45.60, "random": 47.40},
}
