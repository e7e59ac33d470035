"""MiniWoB++ per task: mean reward, success rate and steps of each task in a ``miniwob.env`` run,
and whether every task reaches the bar (``--bar``, 0.9 by default: issue 41's for the scripted
solver).

By default it plays ``launch/miniwob_scripted.yaml`` (the scripted solver on its tasks, 20 seeds
each) in a fresh run folder, then reads that run's ``episodes.jsonl``; ``--run DIR`` reads a run
that already happened instead (a random or model run too), ``--seeds N`` plays N seeds per task.
The rewards are the task pages' own (raw by default, ``env_reward`` is MiniWoB's time-scaled one).

    python bench/miniwob.py [--seeds 20] [--run DIR] [--bar 0.9] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def per_task(run: Path) -> dict[str, dict[str, Any]]:
    """Each task's episodes summed up, in the order the run played them."""
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines() if line.strip()]
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in sorted(records, key=lambda r: r["episode_id"]):
        if "task" in record.get("metrics", {}):
            by_task[record["metrics"]["task"]].append(record)
    out: dict[str, dict[str, Any]] = {}
    for task, runs in by_task.items():
        metrics = [r["metrics"] for r in runs]
        out[task] = {"episodes": len(runs), "failed": sum(r["status"] != "completed" for r in runs),
                     "reward": round(statistics.fmean(m["reward"] for m in metrics), 4),
                     "env_reward": round(statistics.fmean(m["env_reward"] for m in metrics), 4),
                     "success": round(statistics.fmean(m["success"] for m in metrics), 4),
                     "timed_out": sum(int(m["timed_out"]) for m in metrics),
                     "steps": round(statistics.fmean(m.get("steps", 0) for m in metrics), 2)}
    return out


def play(seeds: int, out: Path) -> float:
    """Run the scripted launch file into ``out``; returns its wall time."""
    started = time.monotonic()
    subprocess.run([str(ROOT / ".venv" / "bin" / "launch"), "run", str(ROOT / "launch" / "miniwob_scripted.yaml"),
                    "--set", f"env.seeds={seeds}", "--episodes", str(20 * seeds), "--out", str(out)],
                   check=True, cwd=ROOT)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds per task when playing the scripted launch file")
    parser.add_argument("--run", type=Path, help="read this run folder instead of playing")
    parser.add_argument("--bar", type=float, default=0.9, help="the mean reward every task must reach")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    wall = None
    if args.run is None:
        folder = Path(tempfile.mkdtemp(prefix="miniwob-bench-"))
        wall = play(args.seeds, folder / "run")
        run = folder / "run"
    else:
        run = args.run
    tasks = per_task(run)
    episodes = sum(t["episodes"] for t in tasks.values())
    result = {"run": str(run), "tasks": tasks, "episodes": episodes, "wall_s": None if wall is None else round(wall, 1),
              "mean_reward": round(statistics.fmean(t["reward"] for t in tasks.values()), 4) if tasks else None,
              "below_bar": sorted(name for name, t in tasks.items() if t["reward"] < args.bar), "bar": args.bar}
    if args.json:
        print(json.dumps(result))  # one line: bench/run_all.py reads the last line
    else:
        print(f"{'task':28} {'n':>4} {'reward':>7} {'time-scaled':>11} {'success':>8} {'timeouts':>8} {'steps':>6}")
        for name, t in tasks.items():
            print(f"{name:28} {t['episodes']:4d} {t['reward']:7.3f} {t['env_reward']:11.3f} {t['success']:8.2f} "
                  f"{t['timed_out']:8d} {t['steps']:6.2f}")
        print(f"{len(tasks)} tasks, {episodes} episodes, mean reward {result['mean_reward']}; "
              f"below {args.bar}: {', '.join(result['below_bar']) or 'none'}")
    return 0 if not result["below_bar"] else 1


if __name__ == "__main__":
    sys.exit(main())
