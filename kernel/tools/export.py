"""``launch export RUN``: a run's episodes as JSON lines or CSV, for pandas, spreadsheets and jq."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TextIO

from kernel.graph.store import episode_rows


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
