"""The fixed benchmark: 182 levels in MageBench's eight tiers and the 20-level mini set.

Levels are generated once, from a fixed seed, and stored with their solver results in
``data/benchmark.json`` beside this file, so every run (and every test) plays the same levels and
nobody waits for the solver. ``python -m nodes.game.sokoban generate`` rebuilds the file; with the
same seed and code it writes the same levels.

How a tier is filled: draw random solvable levels (generator.py), keep those the solver proves
solvable within 50 steps, and from that pool pick the tier's level count so the mean optimal step
count lands within a quarter step of the paper's figure for that tier (Fig. 9). The paper gives only
the means, so the spread of each tier is whatever the generator produces.
"""

from __future__ import annotations

import json
import random
import statistics
import time
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from nodes.game.sokoban.generator import candidate
from nodes.game.sokoban.levels import Level, parse_xsb
from nodes.game.sokoban.solver import optimal_reward, solve
from nodes.game.sokoban.tiers import STEP_LIMIT, TIER_BY_NAME, TIERS, Tier

DATA = Path(__file__).with_name("data") / "benchmark.json"
DEFAULT_SEED = 20241209
# Levels per tier in the mini set: the full set's tier shares, rounded to 20 levels in all.
MINI_COUNTS = {"v0": 2, "v1": 3, "v2": 2, "small-v0": 5, "small-v1": 2, "large-v0": 2, "large-v1": 2, "huge-v0": 2}
# Search budget for proving a candidate; a candidate the solver cannot settle within it is dropped.
PROOF_STATES = 150_000
MEAN_TOLERANCE = 0.25
SETS = ("full", "mini")


def _level_record(level: Level, tier: Tier, k: int, draw: int) -> dict:
    m = level.meta
    return {"id": f"{tier.name}-{k:02d}", "tier": tier.name, "xsb": level.to_xsb(), "steps": m["steps"],
            "solution": m["solution"], "r_best": m["r_best"], "draw": draw}


def draw_pool(tier: Tier, seed: int, log=print) -> list[tuple[int, Level]]:
    """Solvable levels of a tier in the order the seeded draws find them, enough to choose from:
    at least twice the tier's size, and enough long ones to reach the paper's mean."""
    pool: list[tuple[int, Level]] = []
    seen: set[str] = set()
    draw = 0
    started = time.monotonic()
    while True:
        rng = random.Random(f"{seed}/{tier.name}/{draw}")
        level = candidate(tier.recipe, rng)
        draw += 1
        if level is not None and (xsb := level.to_xsb()) not in seen:
            seen.add(xsb)
            sol = solve(level, max_steps=STEP_LIMIT, max_states=PROOF_STATES)
            if sol is not None:
                level.meta.update(steps=sol.steps, solution=sol.lurd, r_best=optimal_reward(level, sol.steps))
                pool.append((draw - 1, level))
        if len(pool) >= 2 * tier.levels and _reachable_mean(pool, tier):
            break
        if draw > 200 * tier.levels:
            raise RuntimeError(f"tier {tier.name}: {draw} draws gave no pool that reaches the paper's mean "
                               f"{tier.paper_mean_steps}; change its recipe")
    log(f"{tier.name}: {len(pool)} solvable levels from {draw} draws in {time.monotonic() - started:.0f} s")
    return pool


def _reachable_mean(pool: list[tuple[int, Level]], tier: Tier) -> bool:
    steps = sorted(lv.meta["steps"] for _, lv in pool)
    n = tier.levels
    return statistics.mean(steps[:n]) <= tier.paper_mean_steps <= statistics.mean(steps[-n:])


def choose(pool: list[tuple[int, Level]], tier: Tier, seed: int) -> list[tuple[int, Level]]:
    """``tier.levels`` levels from the pool whose mean optimal steps is within
    ``MEAN_TOLERANCE`` of the paper's: start from the first ones drawn, then swap one chosen level
    for an unchosen one at a time, at random among the swaps that move the mean the right way."""
    rng = random.Random(f"{seed}/{tier.name}/choose")
    chosen, rest = list(pool[:tier.levels]), list(pool[tier.levels:])
    target = tier.paper_mean_steps * tier.levels
    for _ in range(100_000):
        total = sum(lv.meta["steps"] for _, lv in chosen)
        gap = target - total
        if abs(gap) <= MEAN_TOLERANCE * tier.levels:
            break
        i = rng.randrange(len(chosen))
        j = rng.randrange(len(rest))
        delta = rest[j][1].meta["steps"] - chosen[i][1].meta["steps"]
        if delta * gap > 0 and abs(gap - delta) < abs(gap):
            chosen[i], rest[j] = rest[j], chosen[i]
    else:
        raise RuntimeError(f"tier {tier.name}: could not reach the mean {tier.paper_mean_steps}")
    return sorted(chosen, key=lambda x: x[0])


def build_tier(tier: Tier, seed: int = DEFAULT_SEED, log=print) -> list[dict]:
    """One tier's levels as the records stored in the data file."""
    picked = choose(draw_pool(tier, seed, log), tier, seed)
    log(f"{tier.name}: mean optimal steps {statistics.mean(lv.meta['steps'] for _, lv in picked):.2f} "
        f"(paper {tier.paper_mean_steps})")
    return [_level_record(lv, tier, k, draw) for k, (draw, lv) in enumerate(picked)]


def assemble(records: list[dict], seed: int = DEFAULT_SEED) -> dict:
    """The data file's content from every tier's records (in tier order): adds the mini set, drawn
    per tier from the seed."""
    rng = random.Random(f"{seed}/mini")
    mini = []
    for tier in TIERS:
        ids = [r["id"] for r in records if r["tier"] == tier.name]
        if ids:
            mini += sorted(rng.sample(ids, MINI_COUNTS[tier.name]))
    return {"version": 1, "seed": seed, "step_limit": STEP_LIMIT, "proof_states": PROOF_STATES,
            "tiers": {t.name: {"levels": t.levels, "width": t.width, "height": t.height, "boxes": t.boxes,
                               "paper_mean_steps": t.paper_mean_steps} for t in TIERS},
            "levels": records, "mini": mini}


def build(seed: int = DEFAULT_SEED, log=print) -> dict:
    """Generate the whole benchmark (tens of minutes: the 5-box tiers need many solver proofs)."""
    return assemble([r for tier in TIERS for r in build_tier(tier, seed, log)], seed)


def write(data: dict, path: Path = DATA) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[Level, ...]:
    data = json.loads(Path(path).read_text())
    out = []
    for i, rec in enumerate(data["levels"]):
        level = parse_xsb(rec["xsb"], rec["id"])
        out.append(Level(level.width, level.height, level.walls, level.targets, level.boxes, level.player,
                         rec["id"], rec["tier"], {"steps": rec["steps"], "solution": rec["solution"],
                                                 "r_best": rec["r_best"], "index": i,
                                                 "mini": rec["id"] in set(data["mini"])}))
    return tuple(out)


def mini_ids(path: Path = DATA) -> list[str]:
    return list(json.loads(path.read_text())["mini"])


def levels(which: str = "full", tiers: str | Sequence[str] | None = None, path: Path = DATA) -> list[Level]:
    """The levels of a set (``full``: 182 in tier order; ``mini``: the 20 of the mini set),
    optionally only some tiers. Episode ``i`` of a run plays element ``i`` of this list."""
    if which not in SETS:
        raise ValueError(f"unknown level set {which!r}; choose one of {', '.join(SETS)}")
    every = _load(str(path))
    if which == "mini":
        order = {lid: k for k, lid in enumerate(mini_ids(path))}
        chosen = sorted((lv for lv in every if lv.name in order), key=lambda lv: order[lv.name])
    else:
        chosen = list(every)
    if tiers:
        wanted = [tiers] if isinstance(tiers, str) else list(tiers)
        unknown = [t for t in wanted if t not in TIER_BY_NAME]
        if unknown:
            raise ValueError(f"unknown tier(s) {', '.join(unknown)}; tiers are {', '.join(TIER_BY_NAME)}")
        chosen = [lv for lv in chosen if lv.tier in wanted]
    return chosen
