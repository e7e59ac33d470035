"""The idle and random baselines, played in one process through the same game class as the bus.

MageBench reports both beside every model (idle 41.18 / 45.60, random 46.61 / 47.40 on the mini /
complete set). Idle never acts, so it scores ``100 - R_best`` on each level. Random picks uniformly
among the four moves for the whole 50-step budget (stopping early only if it solves the level); the
paper does not say how long its random walk was, 50 steps is the budget every agent gets.
"""

from __future__ import annotations

import random
import statistics
from collections import defaultdict
from typing import Any, Callable, Sequence

from nodes.game.sokoban.game import SokobanGame
from nodes.game.sokoban.levels import Level
from nodes.game.sokoban.rules import ACTIONS
from nodes.game.sokoban.tiers import STEP_LIMIT

Policy = Callable[[SokobanGame], Any]


def idle_policy(game: SokobanGame) -> Any:
    return None


def random_policy(rng: random.Random) -> Policy:
    return lambda game: rng.choice(ACTIONS)


def play(level: Level, policy: Policy, max_steps: int = STEP_LIMIT) -> SokobanGame:
    """One episode of ``policy`` on ``level``; the finished game holds its score."""
    game = SokobanGame(level, max_steps)
    while not game.done:
        game.play(policy(game))
    return game


def baseline_scores(levels: Sequence[Level], repeats: int = 10, seed: int = 0) -> dict[str, Any]:
    """Mean idle and random scores over ``levels`` (random: ``repeats`` seeded runs per level),
    overall and per tier."""
    idle = [play(lv, idle_policy).score for lv in levels]
    rand: list[float] = []
    per_tier: dict[str, list[float]] = defaultdict(list)
    for i, lv in enumerate(levels):
        runs = [play(lv, random_policy(random.Random(f"{seed}/{i}/{r}"))).score for r in range(repeats)]
        rand.append(statistics.mean(runs))
        per_tier[lv.tier].append(rand[-1])
    return {"levels": len(levels), "idle": statistics.mean(idle), "random": statistics.mean(rand),
            "random_per_tier": {t: statistics.mean(v) for t, v in per_tier.items()}, "repeats": repeats}
