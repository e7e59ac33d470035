"""The run's results database: ``RUN/results.sqlite``.

SQLite because it is one file, survives a SIGKILL of any process at any moment (writes are
transactions; WAL mode lets agents append step records from their own processes while the kernel
writes), and every tool reads it. It is the source of truth for resuming a run; the
``episodes.jsonl`` log beside it is a readable mirror.

Writes run in a thread of their own (``_Writer``): a commit waits on the disk, and on any other
process holding the write lock for up to the busy timeout, which an event loop must never do. The
kernel acknowledges an ended episode once its line is in ``episodes.jsonl`` (kernel.graph.episodes appends
it before the reply), so a launcher killed before the thread committed loses nothing acknowledged:
opening the store takes back every mirrored episode the database lacks.

Tables: ``episodes`` (one row per ended episode), ``metrics`` (one row per numeric metric, for
queries), ``errors`` (node crashes, retried episodes, failures) and ``steps`` (agents' step
records).
"""

from __future__ import annotations

import atexit
import json
import queue
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Sequence

import structlog

log = structlog.get_logger("framebus.store")

SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    episode_id TEXT PRIMARY KEY, idx INTEGER, status TEXT NOT NULL, node TEXT, retries INTEGER NOT NULL,
    ended_at REAL NOT NULL, metrics TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (
    episode_id TEXT NOT NULL, key TEXT NOT NULL, value REAL, PRIMARY KEY (episode_id, key));
CREATE TABLE IF NOT EXISTS errors (
    ts REAL NOT NULL, node TEXT, episode_id TEXT, kind TEXT NOT NULL, message TEXT);
CREATE TABLE IF NOT EXISTS steps (
    ts REAL NOT NULL, node TEXT NOT NULL, episode_id TEXT, t INTEGER, record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS steps_by_episode ON steps (episode_id, node, t);
"""
FILENAME = "results.sqlite"


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30.0, isolation_level=None)  # autocommit; explicit transactions
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.executescript(SCHEMA)
    return db


def json_default(obj: Any) -> Any:
    """``json.dumps``'s fallback for metrics and records: numpy values and arrays as numbers and lists
    (their ``tolist``), anything else as its ``str``, so a node's odd metric never loses the record."""
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)


Statement = tuple[str, Sequence[Any] | list[Sequence[Any]]]  # SQL and its parameters (a list: many rows)


class _Writer:
    """A connection in its own thread that runs queued statements, each batch in one transaction.

    Callers queue and go on; ``sync`` waits until everything queued before it is committed (the
    sync point for reads of the same data). A batch that cannot be written after a few tries is
    logged and left out, never retried forever (the episodes in it are still in the mirror)."""

    BATCH = 500
    TRIES = 3

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.failures = 0
        self._queue: queue.SimpleQueue[list[Statement] | threading.Event | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        atexit.register(self.close, 10.0)  # a process ending without close() still writes its queue

    def put(self, *statements: Statement) -> None:
        self._queue.put(list(statements))

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until everything queued so far is committed (True), or ``timeout`` seconds (False)."""
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self, timeout: float = 60.0) -> bool:
        """Commit what is queued and end the thread, waiting at most ``timeout`` seconds."""
        atexit.unregister(self.close)
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        db = connect(self.path)
        try:
            while True:
                batch = [self._queue.get()]
                while len(batch) < self.BATCH:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                work = [item for item in batch if isinstance(item, list)]
                if work:
                    self._commit(db, work)
                for item in batch:
                    if isinstance(item, threading.Event):
                        item.set()
                if None in batch:
                    return
        finally:
            db.close()

    def _commit(self, db: sqlite3.Connection, work: list[list[Statement]]) -> None:
        for attempt in range(1, self.TRIES + 1):
            try:
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    for statements in work:
                        for sql, params in statements:
                            if isinstance(params, list):
                                db.executemany(sql, params)
                            else:
                                db.execute(sql, params)
                return
            except sqlite3.Error:
                if attempt == self.TRIES:
                    self.failures += len(work)
                    log.error("results not written", file=str(self.path), writes=len(work), exc_info=True)
                else:
                    time.sleep(0.5 * attempt)


class ResultsStore:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / FILENAME
        self.db = connect(self.path)  # this thread's, for reads; writes go through the writer
        self._recover(run_dir / "episodes.jsonl")
        self._writer = _Writer(self.path, "results-store")

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
                    rows.append(_episode_rows(rec, _index(rec["episode_id"])))
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

    def ended(self) -> dict[str, dict[str, Any]]:
        """Every episode already ended, as the records a resumed run starts from."""
        self.sync()
        rows = self.db.execute("SELECT episode_id, status, node, retries, metrics FROM episodes").fetchall()
        return {eid: {"episode_id": eid, "status": status, "node": node, "retries": retries,
                      "metrics": json.loads(metrics)} for eid, status, node, retries, metrics in rows}

    def each_ended(self) -> Iterator[dict[str, Any]]:
        """The same records as ``ended``, one at a time: a resumed long run need not hold them all."""
        for eid, status, node, retries, metrics in self.db.execute(
                "SELECT episode_id, status, node, retries, metrics FROM episodes"):
            yield {"episode_id": eid, "status": status, "node": node, "retries": retries,
                   "metrics": json.loads(metrics)}

    def end(self, record: dict[str, Any], index: int | None) -> None:
        """Queue one ended episode (one transaction with its metrics). The kernel's episode book is
        the only writer of episodes and ends each once (its bitmap decides that without waiting for
        the database, and without a set of ids here that would grow with the run)."""
        self._writer.put(*_episode_rows(record, index))

    def error(self, kind: str, message: str, *, node: str | None = None, episode: str | None = None) -> None:
        self._writer.put(("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", (time.time(), node, episode, kind, message)))

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until every write queued so far is committed."""
        return self._writer.sync(timeout)

    def close(self) -> None:
        if not self._writer.close():
            log.error("results still being written at exit; episodes.jsonl has the ended episodes",
                      file=str(self.path))
        self.db.close()


def _index(eid: str) -> int | None:
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


class StepStore:
    """An agent's handle for appending step records from its own process (through a writer thread,
    so the agent's loop never waits on the database)."""

    def __init__(self, run_dir: Path, node: str) -> None:
        self.node = node
        connect(run_dir / FILENAME).close()  # the tables exist before the first record is queued
        self._writer = _Writer(run_dir / FILENAME, f"steps-{node}")

    def write(self, record: dict[str, Any]) -> None:
        self._writer.put(("INSERT INTO steps VALUES (?, ?, ?, ?, ?)", (
            record.get("ts", time.time()), self.node, record.get("episode"), record.get("t"),
            json.dumps(record, default=json_default))))

    def close(self) -> None:
        self._writer.close()


def episode_rows(run_dir: Path) -> Iterator[dict[str, Any]]:
    """One flat record per ended episode (``episode_id``, ``status``, ``retries``, then its metrics),
    in episode order: what ``launch export`` prints."""
    path = run_dir / FILENAME
    if not path.exists():
        raise FileNotFoundError(f"{run_dir} has no {FILENAME}: is it a run folder?")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for eid, status, node, retries, metrics in db.execute(
                "SELECT episode_id, status, node, retries, metrics FROM episodes ORDER BY idx, episode_id"):
            yield {"episode_id": eid, "status": status, "node": node, "retries": retries, **json.loads(metrics)}
    finally:
        db.close()
