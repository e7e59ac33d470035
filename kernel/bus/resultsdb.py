"""The run's results database file (``RUN/results.sqlite``): its schema and the writer thread that
every process writing to it uses, the kernel (episodes, errors) and agents (step records) alike.

It sits in the bus layer because node processes write to it too and must not load the graph; the
kernel's side (ending episodes, resuming, reading) is kernel.graph.store.

Writes run in a thread of their own (``Writer``): a commit waits on the disk, and on any other
process holding the write lock for up to the busy timeout, which an event loop must never do.
"""

from __future__ import annotations

import atexit
import errno
import json
import os
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import structlog

from kernel.bus.errors import FramebusError

log = structlog.get_logger("framebus.store")

SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    episode_id TEXT PRIMARY KEY, idx INTEGER, status TEXT NOT NULL, node TEXT, retries INTEGER NOT NULL,
    ended_at REAL NOT NULL, metrics TEXT NOT NULL, attempt INTEGER);
CREATE TABLE IF NOT EXISTS metrics (
    episode_id TEXT NOT NULL, key TEXT NOT NULL, value REAL, PRIMARY KEY (episode_id, key));
CREATE TABLE IF NOT EXISTS errors (
    ts REAL NOT NULL, node TEXT, episode_id TEXT, kind TEXT NOT NULL, message TEXT);
CREATE TABLE IF NOT EXISTS steps (
    ts REAL NOT NULL, node TEXT NOT NULL, episode_id TEXT, t INTEGER, record TEXT NOT NULL, attempt INTEGER);
CREATE INDEX IF NOT EXISTS steps_by_episode ON steps (episode_id, node, t);
"""
FILENAME = "results.sqlite"
STEP_SQL = "INSERT INTO steps (ts, node, episode_id, t, record, attempt) VALUES (?, ?, ?, ?, ?, ?)"
# Which attempt at an episode a row belongs to: an episode a dead node took down is dealt again with
# the same id, and the rows of the abandoned attempt stay apart from those of the one that ended
# (NULL: the first; a run folder from before the column has only NULLs). ``connect`` adds the column
# to an older database.
ATTEMPT_COLUMNS = ("episodes", "steps")


def attempt_of(record: dict[str, Any] | str) -> int | None:
    """The attempt a step record says it belongs to (the runtime stamps ``attempt`` on a retried
    episode's records), from the record or its JSON; None for a first attempt."""
    if isinstance(record, str):
        if '"attempt"' not in record:
            return None
        try:
            record = json.loads(record)
        except ValueError:
            return None
    value = record.get("attempt") if isinstance(record, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else None


class ResultsDbError(FramebusError):
    """The run folder's results database cannot be used (damaged, or some other file by that name)."""


class ResultsNotWritten(FramebusError):
    """The run folder does not take the run's results any more (a full disk, a folder gone read-only):
    the run stops dealing episodes and ends as failed; what was written stays, and a re-run of the
    same command in the same folder resumes once the cause is gone."""


FULL = (errno.ENOSPC, errno.EDQUOT)


def write_problem(exc: BaseException) -> str | None:
    """What an error says about the disk, in the user's words, when it is one a re-run can get past
    (no space, no quota, a read-only or failing device); None for any other error (a bug, a
    damaged database), which is reported as it is."""
    if isinstance(exc, OSError) and exc.errno is not None:
        if exc.errno in FULL:
            return "no space left on device"
        if exc.errno in (errno.EROFS, errno.EIO, errno.EACCES):
            return os.strerror(exc.errno).lower()
        return None
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL or "disk is full" in str(exc):
            return "no space left on device (SQLite: database or disk is full)"
        if code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_READONLY) or "disk I/O error" in str(exc):
            return f"the disk refused the write (SQLite: {exc})"
    return None


def not_written(path: Path, exc: BaseException) -> ResultsNotWritten | None:
    """A ResultsNotWritten for ``exc`` if it is a disk's refusal (see ``write_problem``), else None."""
    problem = write_problem(exc)
    return None if problem is None else ResultsNotWritten(f"cannot write {path}: {problem}")


def unusable(path: Path, exc: sqlite3.Error) -> ResultsDbError:
    return ResultsDbError(f"{path} cannot be used as the run's results database: {exc}. Move it away to start "
                          "the run over in this folder, or give another --out folder")


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether SQLite found the file damaged (a malformed page): no retry and no other process can mend it."""
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_CORRUPT or "malformed" in str(exc)


def damaged(path: Path, what: str, exc: Exception) -> ResultsDbError:
    """A ResultsDbError for damage met while reading rows (a page SQLite finds malformed, a cell
    that is not the JSON it should be): ``what`` says which rows. episodes.jsonl mirrors every ended
    episode, and a run started into a folder without the database takes them back from it."""
    return ResultsDbError(f"{path} is damaged: {what}: {exc}. Its ended episodes are also in episodes.jsonl "
                          f"beside it: move {path.name} away and run the same `launch run` into this folder "
                          "again, which takes them back from there (agents' step records are lost), or give "
                          "another --out folder")


def metrics_of(path: Path, eid: Any, cell: Any) -> dict[str, Any]:
    """An episode row's ``metrics`` cell as the mapping it holds; a ResultsDbError naming the file
    and the episode when it holds anything else."""
    try:
        metrics = json.loads(cell)
    except (TypeError, ValueError) as exc:
        raise damaged(path, f"episode {eid}'s metrics are not JSON", exc) from None
    if not isinstance(metrics, dict):
        raise damaged(path, f"episode {eid}'s metrics are not a JSON object",
                      ValueError(f"a JSON {type(metrics).__name__}")) from None
    return metrics


def connect(path: Path) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(path, timeout=30.0, isolation_level=None)  # autocommit; explicit transactions
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(SCHEMA)
        for table in ATTEMPT_COLUMNS:
            if "attempt" not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                db.execute(f"ALTER TABLE {table} ADD COLUMN attempt INTEGER")
    except sqlite3.DatabaseError as exc:  # "file is not a database", "database disk image is malformed"
        full = not_written(path, exc)  # a full disk is no damaged database: the file is fine
        raise (full or unusable(path, exc)) from None
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
    logged and left out, never retried forever (the episodes in it are still in the mirror). A
    disk that refuses writes (full, read-only) is not retried: ``problem`` says why, once, and
    ``on_problem`` (called from the writer thread) is told, so the owner can stop the run."""

    BATCH = 500
    TRIES = 3

    def __init__(self, path: Path, name: str, on_problem: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.failures = 0
        self.problem: str | None = None  # the first disk refusal, as "cannot write PATH: why"
        self.on_problem = on_problem
        self.damage_told = False  # a damaged database is logged once, not once a batch
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
            except sqlite3.Error as exc:
                refused = not_written(self.path, exc)
                if refused is not None:  # trying again cannot help: one line, not a traceback per batch
                    self.failures += len(work)
                    if self.problem is None:
                        self.problem = str(refused)
                        log.error("results not written", file=str(self.path), writes=len(work), error=self.problem)
                        if self.on_problem is not None:
                            self.on_problem(self.problem)
                    return
                if is_damage(exc):  # trying again cannot help either; episodes.jsonl still takes the episodes
                    self.failures += len(work)
                    if not self.damage_told:
                        self.damage_told = True
                        log.error("results not written", writes=len(work),
                                  error=str(damaged(self.path, "writing to it failed", exc)))
                    return
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
                        json.dumps(record, default=json_default)], attempt_of(record))

    def write_row(self, row: Sequence[Any], attempt: int | None = None) -> None:
        """``row``: ts, episode, t and the record's JSON (kernel.bus.outbox.step_item); ``attempt``:
        the record's (``attempt_of``)."""
        ts, episode, t, record = row
        self._writer.put((STEP_SQL, (ts, self.node, episode, t, record, attempt)))

    def close(self) -> None:
        self._writer.close()
