"""The run's results database file (``RUN/results.sqlite``): its schema and the writer thread that
every process writing to it uses, the kernel (episodes, errors) and agents (step records) alike.

It sits in the bus layer because node processes write to it too and must not load the graph; the
kernel's side (ending episodes, resuming, reading) is kernel.graph.store.

Writes run in a thread of their own (``Writer``): a commit waits on the disk, and on any other
process holding the write lock for up to the busy timeout, which an event loop must never do.
"""

from __future__ import annotations

import atexit
import json
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Sequence

import structlog

from kernel.sdk.errors import FramebusError

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
STEP_SQL = "INSERT INTO steps VALUES (?, ?, ?, ?, ?)"  # ts, node, episode_id, t, record


class ResultsDbError(FramebusError):
    """The run folder's results database cannot be used (damaged, or some other file by that name)."""


def unusable(path: Path, exc: sqlite3.Error) -> ResultsDbError:
    return ResultsDbError(f"{path} cannot be used as the run's results database: {exc}. Move it away to start "
                          "the run over in this folder, or give another --out folder")


def connect(path: Path) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None)  # autocommit; explicit transactions
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(SCHEMA)
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        raise unusable(path, exc) from None
    return db


def json_default(obj: Any) -> Any:
    """``json.dumps``'s fallback for metrics and records: numpy values and arrays as numbers and lists
    (their ``tolist``), anything else as its ``str``, so a node's odd metric never loses the record."""
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)


Statement = tuple[str, Sequence[Any] | list[Sequence[Any]]]  # SQL and its parameters (a list: many rows)


class Writer:
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


class StepStore:
    """An agent's handle for appending step records from its own process (through a writer thread,
    so the agent's loop never waits on the database)."""

    def __init__(self, run_dir: Path, node: str) -> None:
        self.node = node
        connect(run_dir / FILENAME).close()  # the tables exist before the first record is queued
        self._writer = Writer(run_dir / FILENAME, f"steps-{node}")

    def write(self, record: dict[str, Any]) -> None:
        self.write_row([record.get("ts", time.time()), record.get("episode"), record.get("t"),
                        json.dumps(record, default=json_default)])

    def write_row(self, row: Sequence[Any]) -> None:
        """``row``: ts, episode, t and the record's JSON (kernel.bus.results.step_item)."""
        ts, episode, t, record = row
        self._writer.put((STEP_SQL, (ts, self.node, episode, t, record)))

    def close(self) -> None:
        self._writer.close()
