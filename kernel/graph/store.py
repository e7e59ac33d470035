"""The run's results database: ``RUN/results.sqlite``.

SQLite because it is one file, survives a SIGKILL of any process at any moment (writes are
transactions; WAL mode lets agents append step records from their own processes while the kernel
writes), and every tool reads it. It is the source of truth for resuming a run; the
``episodes.jsonl`` log beside it is a readable mirror.

Writes go through the writer thread of kernel.bus.resultsdb (the schema lives there too), so an
event loop never waits on the disk or on another process holding the write lock. The
kernel acknowledges an ended episode once its line is in ``episodes.jsonl`` (``end`` appends
it before the reply), so a launcher killed before the thread committed loses nothing acknowledged:
opening the store takes back every mirrored episode the database lacks.

Tables: ``episodes`` (one row per ended episode), ``metrics`` (one row per numeric metric, for
queries), ``errors`` (node crashes, retried episodes, failures) and ``steps`` (agents' step
records).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, Iterator

import structlog

from kernel.bus.resultsdb import FILENAME, STEP_SQL, Statement, Writer, connect, json_default

log = structlog.get_logger("framebus.store")


class ResultsStore:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / FILENAME
        self.db = connect(self.path)  # this thread's, for reads; writes go through the writer
        mirror = run_dir / "episodes.jsonl"
        self._recover(mirror)
        self._mirror = mirror.open("a", buffering=1)  # line-buffered: each line is written at once
        self._writer = Writer(self.path, "results-store")
        self.last_error: str | None = None

    def _recover(self, mirror: Path) -> None:
        """Take in the mirrored episodes the database lacks: they were acknowledged, then the
        launcher died before the writer thread committed them (or the run predates the store)."""
        if not mirror.exists():
            return
        ended = {eid for (eid,) in self.db.execute("SELECT episode_id FROM episodes")}  # only while opening
        rows = []
        for line in mirror.read_text().splitlines():
            try:
                rec = json.loads(line)
                if rec["episode_id"] not in ended:
                    rows.append(_episode_rows(rec, episode_index(rec["episode_id"])))
                    ended.add(rec["episode_id"])
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # a line torn by the crash: that episode was not acknowledged
        if not rows:
            return
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            for (episode_sql, episode), (metrics_sql, metrics) in rows:
                self.db.execute(episode_sql, episode)
                self.db.executemany(metrics_sql, metrics)

    def each_ended(self) -> Iterator[dict[str, Any]]:
        """Every episode already ended, as the records a resumed run starts from, one at a time: a
        resumed long run need not hold them all. Writes still queued are not in it (see ``sync``)."""
        for eid, status, node, retries, metrics in self.db.execute(
                "SELECT episode_id, status, node, retries, metrics FROM episodes"):
            yield {"episode_id": eid, "status": status, "node": node, "retries": retries,
                   "metrics": json.loads(metrics)}

    def end(self, record: dict[str, Any], index: int | None) -> None:
        """Mirror one ended episode and queue it for the database (one transaction with its metrics).
        The mirror's line is the acknowledgement record: handed to the OS before the kernel replies.
        The kernel's episode book is the only writer of episodes and ends each once (its bitmap
        decides that without waiting for the database, and without a set of ids here that would grow
        with the run)."""
        self._mirror.write(json.dumps(record, default=json_default) + "\n")
        self._writer.put(*_episode_rows(record, index))

    def error(self, kind: str, message: str, *, node: str | None = None, episode: str | None = None) -> None:
        self.last_error = f"{node or 'kernel'}: {kind}: {message}"  # for a stalled run's last words
        self._writer.put(("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", (time.time(), node, episode, kind, message)))

    def steps(self, rows: list[tuple[Any, ...]]) -> None:
        """Step records of nodes on other machines (kernel.graph.results), as their own processes
        would have written them: ts, node, episode, t, record."""
        self._writer.put((STEP_SQL, rows))

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until every write queued so far is committed."""
        return self._writer.sync(timeout)

    def close(self) -> None:
        if not self._writer.close():
            log.error("results still being written at exit; episodes.jsonl has the ended episodes",
                      file=str(self.path))
        self._mirror.close()
        self.db.close()


def episode_index(eid: str) -> int | None:
    """The index in an episode id the kernel dealt (``ep00042``: 42); None for any other id."""
    found = re.fullmatch(r"ep(\d+)", eid)
    return int(found.group(1)) if found else None


def _episode_rows(record: dict[str, Any], index: int | None) -> tuple[Statement, Statement]:
    eid = record["episode_id"]
    return (
        ("INSERT OR IGNORE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?)",
         (eid, index, record["status"], record.get("node"), record.get("retries", 0), time.time(),
          json.dumps(record["metrics"], default=json_default))),
        ("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)",
         [(eid, k, float(v)) for k, v in record["metrics"].items()
          if isinstance(v, (int, float)) and not isinstance(v, bool)]),
    )

