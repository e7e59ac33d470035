"""Step records: what an agent saw, asked, got back and did, one record per decision.

They are written as each step happens, to the run's results database (``steps`` table) and as a
JSON line in ``RUN/steps/<agent>.jsonl``, so a crashed run still explains itself and ``jq`` or
pandas read them; images are noted by size, not stored (the recorder stores frames). Both writes
are queued to threads (kernel.bus.resultsdb, kernel.bus.outlet): the agent's loop never waits on the disk.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from kernel.bus.outlet import FileOutlet
from kernel.bus.resultsdb import StepStore


def printable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages with every image part replaced by a short note of its size."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [{"type": "image", "image": f"<{np.asarray(p['image']).shape[1]}x{np.asarray(p['image']).shape[0]} "
                                                  f"image>"} if p.get("type") == "image" else p for p in content]
        out.append({**m, "content": content})
    return out


class StepRecords:
    """Appends to the run's store and ``RUN/steps/<node>.jsonl``; no run folder means no records."""

    def __init__(self, run_dir: Path | None, node_id: str) -> None:
        self.path: Path | None = None
        self._file: FileOutlet | None = None
        self._store: StepStore | None = None
        if run_dir is not None:
            self.path = run_dir / "steps" / f"{node_id}.jsonl"
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = FileOutlet(self.path)
            self._store = StepStore(run_dir, node_id)

    def write(self, record: dict[str, Any]) -> None:
        if self._file is None or self._store is None:
            return
        record = {"ts": round(time.time(), 3), **record}
        self._file.write(json.dumps(record, default=str) + "\n")
        self._store.write(record)

    def close(self) -> None:
        if self._file is not None and self._store is not None:
            self._file.close()
            self._store.close()
            self._file = self._store = None


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
