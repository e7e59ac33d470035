"""Step records: what an agent saw, asked, got back and did, one JSON line per decision.

They are written as each step happens (and flushed), so a crashed run still explains itself, and
they are plain JSON so ``jq`` and pandas read them; images are noted by size, not stored (the
recorder stores frames).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np


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
    """Appends to ``RUN/steps/<node>.jsonl``; no run folder (a bare test) means no file."""

    def __init__(self, run_dir: Path | None, node_id: str) -> None:
        self.path: Path | None = None
        self._file: TextIO | None = None
        if run_dir is not None:
            self.path = run_dir / "steps" / f"{node_id}.jsonl"
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a")

    def write(self, record: dict[str, Any]) -> None:
        if self._file is None:
            return
        self._file.write(json.dumps({"ts": round(time.time(), 3), **record}, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
