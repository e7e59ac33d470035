"""The episode book: deals episodes to environment nodes and keeps their results on disk.

Results go to the run's SQLite store (kernel.store) and its ``episodes.jsonl`` mirror the moment an
episode ends, so a crash loses nothing, and a re-run with the same output folder skips the
episodes that already ended.
"""

from __future__ import annotations

import json
import math
from collections import deque
from pathlib import Path
from typing import Any

from kernel.store import ResultsStore


class EpisodeBook:
    def __init__(self, total: int | None, seed: int, run_dir: Path, max_retries: int = 2) -> None:
        self.total = total
        self.seed = seed
        self.path = run_dir / "episodes.jsonl"
        self.store = ResultsStore(run_dir)
        self.max_retries = max_retries
        self.records: dict[str, dict[str, Any]] = {}
        self._metrics: dict[str, dict[str, Any]] = {}
        self._owner: dict[str, str] = {}
        self._retries: dict[str, int] = {}
        self._pending: deque[int] = deque()
        self._next_open = 0  # for open-ended runs (total None)
        self.records.update(self.store.ended())
        if not self.records and self.path.exists():  # a run folder from before the store existed
            for line in self.path.read_text().splitlines():
                if line.strip():
                    rec = json.loads(line)
                    self.records[rec["episode_id"]] = rec
                    self.store.end(rec, None)
        self.resumed = len(self.records)
        if total is not None:
            self._pending.extend(i for i in range(total) if self.episode_id(i) not in self.records)

    @staticmethod
    def episode_id(index: int) -> str:
        return f"ep{index:05d}"

    def deal(self, node: str) -> dict[str, Any] | None:
        if self.total is None:
            index = self._next_open
            self._next_open += 1
        else:
            while self._pending and self.episode_id(self._pending[0]) in self.records:
                self._pending.popleft()  # a retried episode whose first attempt ended after all
            if not self._pending:
                return None
            index = self._pending.popleft()
        eid = self.episode_id(index)
        self._owner[eid] = node
        self._metrics.setdefault(eid, {})
        return {"id": eid, "index": index, "seed": self.seed + index}

    def report(self, eid: str, metrics: dict[str, Any]) -> None:
        if eid in self.records:
            return  # late metrics for an ended episode are not allowed to change a written result
        self._metrics.setdefault(eid, {}).update(metrics)

    def end(self, eid: str, status: str, metrics: dict[str, Any]) -> None:
        if eid in self.records:
            return  # ended twice (e.g. a retried node): the first result stands, nothing is counted twice
        merged = {**self._metrics.pop(eid, {}), **metrics}
        rec = {"episode_id": eid, "status": status, "node": self._owner.pop(eid, None),
               "retries": self._retries.get(eid, 0), "metrics": merged}
        self.records[eid] = rec
        if self.store.end(rec, int(eid[2:])):
            with self.path.open("a") as fh:
                fh.write(json.dumps(rec, default=_jsonable) + "\n")

    def node_lost(self, node: str, *, all_in_flight: bool = False) -> list[str]:
        """Give the unfinished episodes a dead node took part in back to the deck (bounded retries).

        The episodes it was dealt, or, for a node that is dealt none (an agent, a judge), every
        episode in flight: any of them may have lost a message to it. An episode whose first attempt
        still ends is kept as it ended, and its second attempt is skipped."""
        lost = [eid for eid, owner in self._owner.items() if owner == node or all_in_flight]
        for eid in lost:
            del self._owner[eid]
            self._retries[eid] = self._retries.get(eid, 0) + 1
            if self._retries[eid] > self.max_retries:
                self.end(eid, "failed", {"error": f"node {node} died {self._retries[eid]} times in this episode"})
                self.store.error("failed", f"given up after {self._retries[eid]} attempts", node=node, episode=eid)
            else:
                self._pending.appendleft(int(eid[2:]))
                self.store.error("retry", f"node {node} died mid-episode; attempt {self._retries[eid] + 1} follows",
                                 node=node, episode=eid)
        return lost

    def owns_episodes(self, node: str) -> bool:
        return node in self._owner.values()

    def close(self) -> None:
        self.store.close()

    @property
    def done(self) -> bool:
        return self.total is not None and len(self.records) >= self.total

    def counts(self) -> dict[str, int | None]:
        statuses = [r["status"] for r in self.records.values()]
        return {"total": self.total if self.total is not None else len(statuses),
                "completed": statuses.count("completed"), "failed": statuses.count("failed")}

    def summary_metrics(self) -> dict[str, float]:
        """Mean of every numeric metric over completed episodes."""
        sums: dict[str, list[float]] = {}
        for rec in self.records.values():
            if rec["status"] != "completed":
                continue
            for key, value in rec["metrics"].items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    sums.setdefault(key, []).append(float(value))
        return {key: sum(vals) / len(vals) for key, vals in sorted(sums.items())}


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)
