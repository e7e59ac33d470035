"""Step records: what an agent saw, asked, got back and did, one record per decision.

They are written as each step happens, to the run's results database (``steps`` table) and as a
JSON line in ``RUN/steps/<agent>.jsonl``, so a crashed run still explains itself and ``jq`` or
pandas read them; images are noted by size, not stored (the recorder stores frames). Both writes
are queued to threads (kernel.bus.resultsdb, kernel.bus.outlet), or shipped to the kernel from an
agent on another machine (kernel.bus.outbox): the agent's loop never waits on the disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from kernel.sdk.node import Node


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
    """An agent's step records, through its node (``Node.record_step``): the run's store and
    ``RUN/steps/<node>.jsonl``, written by a thread of this process, or by the kernel when the agent
    runs on another machine; no run folder means no records."""

    def __init__(self, node: Node) -> None:
        self._node: Node | None = node

    def write(self, record: dict[str, Any]) -> None:
        if self._node is not None:
            self._node.record_step(record)

    def close(self) -> None:
        """No more records from this agent (the runtime closes the files when the node ends)."""
        self._node = None


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
