"""Training-set export (``launch export --format ...``): seconds per 1,000 episodes, each format
side by side with the plain per-episode rows (``jsonl``) over the same run folder.

The run folder is a real run's records at scale: ``sokoban_teacher.yaml`` is run once for
``--source`` episodes (the LLM agent with the solver as its model, pictures on), and its ended
episodes and step records are written again under new episode ids until the folder holds
``--episodes`` of them (the pictures are shared, as a run's repeated frames are). The export reads
and writes every record and picture reference as it would for a run that long; only the run itself
is not played a thousand times (about three seconds an episode here).

    python bench/export.py [--json] [--episodes 1000] [--source 12] [--quick]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.bus.episode_ids import episode_id  # noqa: E402
from kernel.tools.export import export  # noqa: E402
from kernel.tools.trainset import export_training  # noqa: E402

FORMATS = ("chat", "vab-bc", "hf", "rollouts")


def source_run(folder: Path, episodes: int) -> Path:
    run = folder / "source"
    done = subprocess.run([sys.executable, "-m", "kernel.tools.cli", "run", "sokoban_teacher.yaml", "--episodes",
                           str(episodes), "--out", str(run)], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"the source run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return run


def scaled(source: Path, folder: Path, episodes: int) -> Path:
    """``source``'s episodes and step records repeated under new ids up to ``episodes``."""
    run = folder / "scaled"
    run.mkdir()
    shutil.copy(source / "launch.yaml", run / "launch.yaml")
    (run / "steps").mkdir()
    (run / "steps" / "images").symlink_to((source / "steps" / "images").resolve())
    shutil.copy(source / "results.sqlite", run / "results.sqlite")
    db = sqlite3.connect(run / "results.sqlite")
    eps = db.execute("SELECT episode_id, status, node, retries, ended_at, metrics FROM episodes ORDER BY idx").fetchall()
    steps = db.execute("SELECT ts, node, episode_id, t, record FROM steps").fetchall()
    db.execute("DELETE FROM episodes")
    db.execute("DELETE FROM steps")
    for i in range(episodes):
        eid, status, node, retries, ended, metrics = eps[i % len(eps)]
        new = episode_id(i)
        db.execute("INSERT INTO episodes (episode_id, idx, status, node, retries, ended_at, metrics) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   (new, i, status, node, retries, ended, metrics))
        db.executemany("INSERT INTO steps (ts, node, episode_id, t, record) VALUES (?, ?, ?, ?, ?)",
                       [(ts, n, new, t, record.replace(f'"episode": "{eid}"', f'"episode": "{new}"'))
                        for ts, n, e, t, record in steps if e == eid])
    db.commit()
    db.close()
    return run


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--episodes", type=int, default=1000, help="episodes in the exported run folder")
    ap.add_argument("--source", type=int, default=12, help="episodes of the real run the folder is made of")
    ap.add_argument("--quick", action="store_true", help="100 episodes from a 3-episode run; not numbers to quote")
    args = ap.parse_args()
    if args.quick:
        args.episodes, args.source = 100, 3
    import datasets

    datasets.disable_progress_bars()
    folder = Path(tempfile.mkdtemp(prefix="fb-bench-export-"))
    try:
        start = time.perf_counter()
        source = source_run(folder, args.source)
        source_s = time.perf_counter() - start
        run = scaled(source, folder, args.episodes)
        out: dict[str, Any] = {"episodes": args.episodes, "source_episodes": args.source,
                               "source_run_s": round(source_s, 1)}
        with open(folder / "rows.jsonl", "w") as rows:
            base = timed(lambda: export(run, "jsonl", rows))
        out["jsonl_s"] = round(base, 3)
        per = 1000 / args.episodes
        for fmt in FORMATS:
            target = folder / fmt
            manifest: dict[str, Any] = {}
            seconds = timed(lambda fmt=fmt, target=target: manifest.update(export_training([run], fmt, target)))
            key = fmt.replace("-", "_")
            out[f"{key}_s"] = round(seconds, 3)
            out[f"{key}_s_per_1000"] = round(seconds * per, 2)
            out[f"{key}_vs_jsonl"] = round(seconds / base, 1) if base > 0 else None
            out[f"{key}_records"] = manifest["counts"]["records"]
            out[f"{key}_mb"] = round(sum(p.stat().st_size for p in target.rglob("*") if p.is_file()) / 1e6, 1)
        out["decisions"] = out["rollouts_records"]
        out["pictures"] = len(list((source / "steps" / "images").iterdir()))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:24} {v}")


if __name__ == "__main__":
    main()
