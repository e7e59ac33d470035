"""Command line for the Sokoban pack.

    python -m nodes.game.sokoban solve LEVEL.xsb          # optimal solution(s) in LURD notation
    python -m nodes.game.sokoban show small-v0-03 [--png out.png]
    python -m nodes.game.sokoban stats                    # tier statistics vs the paper's Fig. 9
    python -m nodes.game.sokoban baselines [--set mini]   # idle and random scores vs the paper
    python -m nodes.game.sokoban generate [--seed N]      # rebuild data/benchmark.json (slow)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from nodes.game.sokoban import benchmark, render
from nodes.game.sokoban.levels import LevelError, load_xsb
from nodes.game.sokoban.solver import optimal_reward, solve
from nodes.game.sokoban.tiers import PAPER_BASELINES, TIERS


def cmd_solve(args: argparse.Namespace) -> int:
    try:
        levels = load_xsb(args.level)
    except (OSError, LevelError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    status = 0
    for level in levels:
        t = time.monotonic()
        sol = solve(level, max_steps=args.max_steps, max_states=args.max_states)
        took = time.monotonic() - t
        if sol is None:
            limit = f" within {args.max_steps} steps" if args.max_steps else ""
            print(f"{level.name}: no solution found{limit} ({took:.1f} s)")
            status = 1
            continue
        if len(levels) > 1:
            print(f"; {level.name}")
        print(sol.lurd)
        print(f"{sol.steps} steps ({sum(sol.pushes)} pushes), reward {optimal_reward(level, sol.steps):g}, "
              f"{sol.states} states searched in {took:.2f} s")
    return status


def cmd_show(args: argparse.Namespace) -> int:
    every = {lv.name: lv for lv in benchmark.levels("full")}
    if args.level in every:
        level = every[args.level]
    else:
        level = load_xsb(args.level)[0]
    print(render.text(level, level.boxes, level.player))
    if level.meta:
        print(f"tier {level.tier}, optimal {level.meta['steps']} steps: {level.meta['solution']}, "
              f"R_best {level.meta['r_best']:g}")
    if args.png:
        from PIL import Image

        Image.fromarray(render.frame(level, level.boxes, level.player, args.resolution)).save(args.png)
        print(f"wrote {args.png}")
    return 0


def tier_stats() -> list[dict]:
    """Per tier: level count, room size, boxes, mean optimal steps (ours and the paper's)."""
    every = benchmark.levels("full")
    out = []
    for tier in TIERS:
        lv = [x for x in every if x.tier == tier.name]
        out.append({"tier": tier.name, "levels": len(lv), "paper_levels": tier.levels,
                    "size": sorted({f"{x.width}x{x.height}" for x in lv}), "paper_size": f"{tier.width}x{tier.height}",
                    "boxes": sorted({len(x.boxes) for x in lv}), "paper_boxes": tier.boxes,
                    "mean_steps": round(statistics.mean(x.meta["steps"] for x in lv), 2),
                    "paper_mean_steps": tier.paper_mean_steps,
                    "min_steps": min(x.meta["steps"] for x in lv), "max_steps": max(x.meta["steps"] for x in lv)})
    return out


def cmd_stats(args: argparse.Namespace) -> int:
    rows = tier_stats()
    if args.json:
        print(json.dumps(rows))
        return 0
    print(f"{'tier':10} {'levels':>7} {'size':>7} {'boxes':>5}  {'mean steps (paper)':>20}  range")
    for r in rows:
        print(f"{r['tier']:10} {r['levels']:>3}/{r['paper_levels']:<3} {','.join(r['size']):>7} "
              f"{','.join(map(str, r['boxes'])):>5}  {r['mean_steps']:>11.2f} ({r['paper_mean_steps']:>5})  "
              f"{r['min_steps']}-{r['max_steps']}")
    print(f"total {sum(r['levels'] for r in rows)} levels, mini set {len(benchmark.levels('mini'))}")
    return 0


def cmd_baselines(args: argparse.Namespace) -> int:
    from nodes.game.sokoban.baselines import baseline_scores

    out = {}
    for which in args.set:
        res = baseline_scores(benchmark.levels(which), repeats=args.repeats, seed=args.seed)
        out[which] = {**res, "paper": PAPER_BASELINES[which]}
    if args.json:
        print(json.dumps(out))
        return 0
    for which, res in out.items():
        paper = res["paper"]
        print(f"{which} ({res['levels']} levels): idle {res['idle']:.2f} (paper {paper['idle']}), "
              f"random {res['random']:.2f} (paper {paper['random']}; {res['repeats']} runs per level)")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    data = benchmark.build(args.seed)
    benchmark.write(data, Path(args.out))
    print(f"wrote {len(data['levels'])} levels to {args.out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodes.game.sokoban", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("solve", help="print a shortest solution of each level in an XSB file (LURD notation)")
    p.add_argument("level", help="an XSB file (one level or several)")
    p.add_argument("--max-steps", type=int, default=None, help="give up beyond this many steps")
    p.add_argument("--max-states", type=int, default=5_000_000, help="give up after expanding this many states")
    p.set_defaults(fn=cmd_solve)
    p = sub.add_parser("show", help="print a benchmark level (by id) or an XSB file; --png to draw it")
    p.add_argument("level")
    p.add_argument("--png")
    p.add_argument("--resolution", type=int, default=640)
    p.set_defaults(fn=cmd_show)
    p = sub.add_parser("stats", help="tier statistics of the benchmark set vs the paper")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_stats)
    p = sub.add_parser("baselines", help="idle and random baseline scores vs the paper")
    p.add_argument("--set", nargs="+", default=["mini", "full"], choices=benchmark.SETS)
    p.add_argument("--repeats", type=int, default=20, help="random runs per level")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=cmd_baselines)
    p = sub.add_parser("generate", help="rebuild the benchmark data file from a seed (slow)")
    p.add_argument("--seed", type=int, default=benchmark.DEFAULT_SEED)
    p.add_argument("--out", default=str(benchmark.DATA))
    p.set_defaults(fn=cmd_generate)
    args = parser.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
