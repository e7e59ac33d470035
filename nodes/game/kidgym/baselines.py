"""Random baselines by Monte Carlo, beside the paper's (``python -m nodes.game.kidgym.baselines``).

The paper computed some random baselines analytically and estimated the rest from 500 random
episodes (App. B.5); its values disagree with the released code in places (spec §4.8, §7 #16).
Here every cell is estimated the same way: a player that picks uniformly among the listed options
at every step, 500 episodes per task and level (rounds 0..499 of the manifest), so the numbers
measure this implementation's option lists and budgets, and can be checked against the closed
forms where those exist.
"""

from __future__ import annotations

import argparse
import math
import random
import sys

from nodes.game.kidgym.paper import ANALYTIC_RANDOM, RANDOM, RELEASED_CODE_RANDOM
from nodes.game.kidgym.tasks import LEVELS, TASKS, episode_seed, make_task


def random_success(task: str, level: int, episodes: int = 500, seed: int = 0, layout_seed: int = 0) -> float:
    """The success rate of a uniform-random player over ``episodes`` manifest rounds."""
    player = random.Random(f"random-player/{task}/{level}/{seed}")
    wins = 0
    for round_ in range(episodes):
        game = make_task(task, level, episode_seed(task, level, round_, layout_seed))
        while not game.over:
            game.step(player.choice(game.options))
        wins += game.success
    return wins / episodes


def standard_error(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / n)


def table(episodes: int = 500, seed: int = 0) -> list[dict[str, object]]:
    rows = []
    for task in TASKS:
        for level in LEVELS:
            ours = random_success(task, level, episodes, seed)
            rows.append({"task": task, "level": level, "ours": ours, "se": standard_error(ours, episodes),
                         "analytic": ANALYTIC_RANDOM.get(task, (None, None, None))[level - 1],
                         "paper": RANDOM[task][level - 1],
                         "released_code": RELEASED_CODE_RANDOM[task][level - 1]})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    def cell(v: object) -> str:
        return "  -  " if v is None else f"{v:.3f}"

    print("task  L   ours (+-se)      analytic  paper  released-code")
    for row in table(args.episodes, args.seed):
        print(f"{row['task']:<5} {row['level']}   {row['ours']:.3f} (+-{row['se']:.3f})   {cell(row['analytic'])}"
              f"     {cell(row['paper'])}  {cell(row['released_code'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
