"""What the bus's transport costs a real graph: the same run over ipc, over loopback TCP with CURVE
(the default for any TCP bus) and over loopback TCP without it (``bus.curve: false``), side by side.

Each block runs ``launch run`` of one launch file (Sokoban's random baseline by default: cheap
steps, so the bus is most of each step) once per transport, in an order that rotates from block to
block, and reads the run's own book back: the steady rate is the steps of every episode but the
first over the time from the first episode's end to the last one's, so process start and the
CURVE handshakes stay out of it. What to read are the ratios (``curve_vs_plain_tcp``: what the
encryption and authentication of every message cost; ``plain_tcp_vs_ipc``: what leaving Unix
sockets costs); absolute rates on a shared 2-core machine move between runs.

    python bench/transport.py [--json] [--episodes 80] [--blocks 3] [--launch sokoban_random.yaml]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LAUNCH = [sys.executable, "-m", "kernel.tools.cli"]
TRANSPORTS: dict[str, list[str]] = {
    "ipc": [],
    "tcp_curve": ["--set", "bus.transport=tcp"],
    "tcp_plain": ["--set", "bus.transport=tcp", "--set", "bus.curve=false"],
}


def steady_rate(run_dir: Path) -> tuple[float, int]:
    """Steps per second between the first and the last episode's end, and the steps counted."""
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        rows = db.execute("SELECT ended_at, metrics FROM episodes WHERE status = 'completed' "
                          "ORDER BY ended_at").fetchall()
    if len(rows) < 3:
        raise RuntimeError(f"{run_dir}: {len(rows)} completed episodes; a steady rate needs at least 3")
    steps = sum(int(json.loads(metrics).get("steps", 0)) for _, metrics in rows[1:])
    return steps / (rows[-1][0] - rows[0][0]), steps


def one_run(launch_file: str, episodes: int, extra: list[str], where: Path) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    out = where / "run"
    done = subprocess.run([*LAUNCH, "run", launch_file, "--episodes", str(episodes), *extra, "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"launch run {launch_file} {' '.join(extra)} exited {done.returncode}:\n"
                           f"{done.stderr[-2000:]}")
    return steady_rate(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--episodes", type=int, default=80, help="episodes per run (80)")
    ap.add_argument("--blocks", type=int, default=3, help="rounds of one run per transport (3)")
    ap.add_argument("--launch", default="sokoban_random.yaml", help="the launch file (sokoban_random.yaml)")
    args = ap.parse_args(argv)
    if args.episodes < 3 or args.blocks < 1:
        ap.error("--episodes must be at least 3 (the first is left out of the rate) and --blocks at least 1")
    started = time.monotonic()
    names = list(TRANSPORTS)
    rates: dict[str, list[float]] = {name: [] for name in names}
    steps: dict[str, int] = {name: 0 for name in names}
    for block in range(args.blocks):
        for name in names[block % len(names):] + names[:block % len(names)]:
            with tempfile.TemporaryDirectory(prefix="fb-bench-transport-") as tmp:
                try:
                    rate, counted = one_run(args.launch, args.episodes, TRANSPORTS[name], Path(tmp))
                except (RuntimeError, subprocess.TimeoutExpired) as exc:  # a run that failed: its own words
                    print(f"bench/transport.py: {exc}", file=sys.stderr)
                    return 2
            rates[name].append(rate)
            steps[name] += counted
    median = {name: statistics.median(values) for name, values in rates.items()}
    out: dict[str, Any] = {
        "launch": args.launch,
        "steps_per_s": {name: round(value, 1) for name, value in median.items()},
        "per_block": {name: [round(v, 1) for v in values] for name, values in rates.items()},
        # rate ratios: below 1 means slower than the one it is set against
        "curve_vs_plain_tcp": round(median["tcp_curve"] / median["tcp_plain"], 3),
        "plain_tcp_vs_ipc": round(median["tcp_plain"] / median["ipc"], 3),
        "curve_vs_ipc": round(median["tcp_curve"] / median["ipc"], 3),
        "steps": steps,
        "seconds": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{args.launch}, steady steps/s (median of {args.blocks}): ipc {median['ipc']:.0f}, "
              f"tcp with CURVE {median['tcp_curve']:.0f}, tcp without {median['tcp_plain']:.0f}; "
              f"CURVE/plain tcp {out['curve_vs_plain_tcp']:.2f}, plain tcp/ipc {out['plain_tcp_vs_ipc']:.2f} "
              f"({out['seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
