"""How throughput grows with environment replicas: aggregate steps per second of 1, 2, 4 and 8
copies of a game environment, each with its random agent, all judged by one judge, in one run.

Each point is a real ``launch run`` of a generated launch file (a ``replicas:`` group of
environment + agent). Throughput is counted between the first and the last episode to end, so
process start-up is left out; every point plays the same number of steps per replica.

    python bench/scale.py [--json] [--env sokoban|hello] [--replicas 1 2 4 8] [--seconds 6]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ENVS = {
    # uses, params, judge, idle-free random agent; steps per episode are bounded by the env
    "sokoban": ("sokoban.env", {"set": "full", "max_steps": 50, "frames": False}, "sokoban.judge"),
    "hello": ("hello.env", {"length": 8, "max_steps": 20}, "hello.judge"),
}


def launch_file(env: str, replicas: int, episodes: int) -> str:
    uses, params, judge = ENVS[env]
    return json.dumps({  # JSON is YAML
        "name": f"scale-{env}-{replicas}",
        "nodes": [
            {"group": "world", "replicas": replicas, "nodes": [
                {"id": "env", "uses": uses, "params": params, "inputs": {"action": "agent/action"},
                 "clock": {"mode": "lockstep", "deadline": 30.0}},
                {"id": "agent", "uses": "agent.random", "inputs": {"obs": {"from": "env/obs", "policy": "latest"}}},
            ]},
            {"id": "judge", "uses": judge, "inputs": {"step": {"from": "env/step", "policy": "block", "size": 256}}},
        ],
        "run": {"episodes": episodes, "seed": 0},
    })


def measure(env: str, replicas: int, episodes: int, tmp: Path) -> dict[str, float]:
    path = tmp / f"scale-{replicas}.yaml"
    path.write_text(launch_file(env, replicas, episodes))
    out = tmp / f"run-{replicas}"
    t = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "kernel.tools.cli", "run", str(path), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.monotonic() - t
    if result.returncode != 0:
        raise RuntimeError(f"{replicas} replicas: launch run failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    db = sqlite3.connect(out / "results.sqlite")
    rows = db.execute("SELECT e.ended_at, m.value FROM episodes e JOIN metrics m ON m.episode_id = e.episode_id "
                      "AND m.key = 'steps' ORDER BY e.ended_at").fetchall()
    db.close()
    # the first `replicas` episodes to end mark the start of steady state; count what ended after
    start = rows[replicas - 1][0]
    steps = sum(s for _, s in rows[replicas:])
    window = rows[-1][0] - start
    return {"replicas": replicas, "steps_per_s": round(steps / window, 1), "episodes": len(rows),
            "wall_s": round(wall, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--env", choices=sorted(ENVS), default="sokoban")
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--episodes-per-replica", type=int, default=30)
    args = parser.parse_args()
    curve = []
    with tempfile.TemporaryDirectory(prefix="fb-scale-") as tmp:
        for n in args.replicas:
            curve.append(measure(args.env, n, max(n * args.episodes_per_replica, n + 2), Path(tmp)))
            if not args.json:
                print(f"{n} replica(s): {curve[-1]['steps_per_s']:8.1f} steps/s  ({curve[-1]['wall_s']} s)")
    base = curve[0]["steps_per_s"]
    result = {"env": args.env, "cores": os.cpu_count(),
              "curve": [{**c, "speedup": round(c["steps_per_s"] / base, 2)} for c in curve]}
    two = next((c for c in result["curve"] if c["replicas"] == 2), None)
    if two is not None and curve[0]["replicas"] == 1:
        result["speedup_at_2"] = two["speedup"]
    if args.json:
        print(json.dumps(result))
    else:
        print(f"speedup at 2 replicas: {result.get('speedup_at_2')} (target >= 1.8 on 2 cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
