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

A line of ``episodes.jsonl`` that a crash cut short (no newline at its end) is ended before
anything is appended, so the next record starts a line of its own: the torn line is left as it
is, readers skip it (``read_mirror``), and its episode, never acknowledged, is played again.

A disk that stops taking the results (full, read-only) raises ResultsNotWritten from ``end``, and
the writer thread's refusals come to ``on_problem``: the kernel then stops dealing and ends the
run as failed. ``end`` takes back a line it could write only in part, so the mirror holds whole
lines only.

Tables: ``episodes`` (one row per ended episode), ``metrics`` (one row per numeric metric, for
queries), ``errors`` (node crashes, retried episodes, failures) and ``steps`` (agents' step
records).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import structlog

from kernel.bus.episode_ids import episode_index
from kernel.bus.resultsdb import (
    FILENAME,
    STEP_SQL,
    ResultsNotWritten,
    Statement,
    Writer,
    attempt_of,
    connect,
    damaged,
    json_default,
    metrics_of,
    not_written,
)

log = structlog.get_logger("framebus.store")


@dataclass
class MirrorRead:
    """What ``episodes.jsonl`` holds: its records, and the lines that are none (1-based numbers)."""

    records: list[dict[str, Any]] = field(default_factory=list)
    torn: list[int] = field(default_factory=list)


def read_mirror(data: bytes) -> MirrorRead:
    """The records of an ``episodes.jsonl``: every line that is a JSON object with an episode id and
    a status; any other line (one a crash cut short, with or without the newline a resume puts after
    it) is skipped and its number noted, and never takes the next line with it."""
    out = MirrorRead()
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        rec = _record(line)
        if rec is None:
            out.torn.append(number)
            # A store before this one appended the next record to a torn line: that record is whole
            # at the end of the line (a record's JSON starts with its id), and is taken back.
            start = line.rfind(_RECORD_START)
            rec = _record(line[start:]) if start > 0 else None
        if rec is not None:
            out.records.append(rec)
    return out


_RECORD_START = b'{"episode_id": '  # how ``end`` begins every line


def _record(line: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if isinstance(rec, dict) and isinstance(rec.get("episode_id"), str) and isinstance(rec.get("status"), str) \
            and isinstance(rec.get("metrics", {}), dict):
        return rec
    return None


def end_torn_line(mirror: Path) -> bool:
    """End the file's last line if a crash left it without its newline, so that what is appended
    next starts a line of its own; True if it had to."""
    try:
        with mirror.open("rb+") as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return False
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) == b"\n":
                return False
            fh.write(b"\n")
            return True
    except FileNotFoundError:
        return False


class ResultsStore:
    def __init__(self, run_dir: Path, on_problem: Callable[[str], None] | None = None) -> None:
        self.path = run_dir / FILENAME
        self.mirror_path = run_dir / "episodes.jsonl"
        self.on_problem = on_problem
        self.problem: str | None = None  # the first refusal of the disk: "cannot write PATH: why"
        self.db = connect(self.path)  # this thread's, for reads; writes go through the writer
        try:
            if end_torn_line(self.mirror_path):
                log.warning("the last line of episodes.jsonl was cut short by a crash: ended it; that episode "
                            "was never acknowledged and is played again", file=str(self.mirror_path))
            self._recover(self.mirror_path)
            # appends only, one os.write per line: no buffer to flush (and fail) at close
            self._fd = os.open(self.mirror_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        except (OSError, sqlite3.Error) as exc:
            refused = not_written(self.mirror_path if isinstance(exc, OSError) else self.path, exc)
            if refused is None and isinstance(exc, sqlite3.DatabaseError):
                refused = damaged(self.path, "reading its ended episodes failed", exc)
            if refused is None:
                raise
            self.db.close()
            raise refused from None
        self._writer = Writer(self.path, "results-store", self.disk_refused)
        self.last_error: str | None = None

    def disk_refused(self, problem: str) -> None:
        """The disk refused a write (from the loop or the writer thread): noted once, owner told."""
        if self.problem is None:
            self.problem = problem
            if self.on_problem is not None:
                self.on_problem(problem)

    def _recover(self, mirror: Path) -> None:
        """Take in the mirrored episodes the database lacks: they were acknowledged, then the
        launcher died before the writer thread committed them (or the run predates the store)."""
        if not mirror.exists():
            return
        ended = {eid for (eid,) in self.db.execute("SELECT episode_id FROM episodes")}  # only while opening
        rows = []
        read = read_mirror(mirror.read_bytes())
        if read.torn:  # a crash cut these short: their episodes were not acknowledged
            log.warning("lines of episodes.jsonl that hold no episode record are skipped", file=str(mirror),
                        lines=read.torn[:20])
        for rec in read.records:
            if rec["episode_id"] not in ended:
                try:
                    rows.append(_episode_rows(rec, episode_index(rec["episode_id"])))
                except (KeyError, TypeError, ValueError):
                    continue
                ended.add(rec["episode_id"])
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
        try:  # rows are read as they are yielded: a damaged page further in shows up mid-way
            for eid, status, node, retries, metrics in self.db.execute(
                    "SELECT episode_id, status, node, retries, metrics FROM episodes"):
                yield {"episode_id": eid, "status": status, "node": node, "retries": retries,
                       "metrics": metrics_of(self.path, eid, metrics)}
        except sqlite3.DatabaseError as exc:
            raise damaged(self.path, "reading its ended episodes failed", exc) from None

    def end(self, record: dict[str, Any], index: int | None) -> None:
        """Mirror one ended episode and queue it for the database (one transaction with its metrics).
        The mirror's line is the acknowledgement record: handed to the OS before the kernel replies.
        The kernel's episode book is the only writer of episodes and ends each once (its bitmap
        decides that without waiting for the database, and without a set of ids here that would grow
        with the run).

        Raises ResultsNotWritten, the episode not ended, when the disk refuses the line (or refused
        an earlier write): a line written in part is cut off again."""
        if self.problem is not None:
            raise ResultsNotWritten(self.problem)
        line = (json.dumps(record, default=json_default) + "\n").encode()
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            done = 0
            while done < len(line):
                done += os.write(self._fd, line[done:])
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)  # a shorter file frees space: no torn line is left
            refused = not_written(self.mirror_path, exc)
            if refused is None:
                raise
            self.disk_refused(str(refused))
            raise refused from None
        self._writer.put(*_episode_rows(record, index))

    def error(self, kind: str, message: str, *, node: str | None = None, episode: str | None = None) -> None:
        self.last_error = f"{node or 'kernel'}: {kind}: {message}"  # for a stalled run's last words
        self._writer.put(("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", (time.time(), node, episode, kind, message)))

    def steps(self, rows: list[tuple[Any, ...]]) -> None:
        """Step records of nodes on other machines (kernel.graph.inbox), as their own processes
        would have written them: ts, node, episode, t, record, attempt."""
        self._writer.put((STEP_SQL, rows))

    def sync(self, timeout: float | None = None) -> bool:
        """Wait until every write queued so far is committed."""
        return self._writer.sync(timeout)

    def close(self) -> None:
        if not self._writer.close():
            log.error("results still being written at exit; episodes.jsonl has the ended episodes",
                      file=str(self.path))
        os.close(self._fd)
        self.db.close()


def _episode_rows(record: dict[str, Any], index: int | None) -> tuple[Statement, Statement]:
    eid = record["episode_id"]
    return (
        ("INSERT OR IGNORE INTO episodes (episode_id, idx, status, node, retries, ended_at, metrics, attempt) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
         (eid, index, record["status"], record.get("node"), record.get("retries", 0), time.time(),
          json.dumps(record["metrics"], default=json_default), attempt_of(record))),
        ("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)",
         [(eid, k, float(v)) for k, v in record["metrics"].items()
          if isinstance(v, (int, float)) and not isinstance(v, bool)]),
    )

