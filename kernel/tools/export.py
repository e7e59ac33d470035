"""``launch export RUN``: a run's episodes as JSON lines or CSV, for pandas, spreadsheets and jq."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any, Iterator, TextIO

from kernel.bus.resultsdb import FILENAME, damaged, metrics_of, unusable


def export(run_dir: Path, fmt: str, out: TextIO) -> int:
    rows = list(episode_rows(run_dir))
    if fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row, default=str) + "\n")
        return 0
    columns: list[str] = []
    for row in rows:  # the union of every episode's metrics, in first-seen order
        columns += [k for k in row if k not in columns]
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else v for k, v in row.items()})
    return 0


def episode_rows(run_dir: Path) -> Iterator[dict[str, Any]]:
    """One flat record per ended episode (``episode_id``, ``status``, ``retries``, then its metrics),
    in episode order: what ``launch export`` prints."""
    path = run_dir / FILENAME
    if not path.exists():
        raise FileNotFoundError(f"{run_dir} has no {FILENAME}: is it a run folder?")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:  # rows are read as they are yielded: damage further in shows up mid-way
        for eid, status, node, retries, metrics in db.execute(
                "SELECT episode_id, status, node, retries, metrics FROM episodes ORDER BY idx, episode_id"):
            yield {"episode_id": eid, "status": status, "node": node, "retries": retries,
                   **metrics_of(path, eid, metrics)}
    except sqlite3.DatabaseError as exc:
        # a file that is no database at all fails on its first read; one with a bad page, further in
        raise (unusable(path, exc) if "not a database" in str(exc) else
               damaged(path, "reading its ended episodes failed", exc)) from None
    finally:
        db.close()
