"""The run's results database: ``RUN/results.sqlite``.

SQLite because it is one file, survives a SIGKILL of any process at any moment (each episode is
one transaction; WAL mode lets agents append step records from their own processes while the
kernel writes), and every tool reads it. It is the source of truth for resuming a run; the
``episodes.jsonl`` log beside it is a readable mirror.

Tables: ``episodes`` (one row per ended episode), ``metrics`` (one row per numeric metric, for
queries), ``errors`` (node crashes, retried episodes, failures) and ``steps`` (agents' step
records).
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

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


def _json(obj: Any) -> Any:
    return obj.tolist() if hasattr(obj, "tolist") else str(obj)


class ResultsStore:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / FILENAME
        self.db = connect(self.path)

    def ended(self) -> dict[str, dict[str, Any]]:
        """Every episode already ended, as the records a resumed run starts from."""
        rows = self.db.execute("SELECT episode_id, status, node, retries, metrics FROM episodes").fetchall()
        return {eid: {"episode_id": eid, "status": status, "node": node, "retries": retries,
                      "metrics": json.loads(metrics)} for eid, status, node, retries, metrics in rows}

    def each_ended(self) -> Iterator[dict[str, Any]]:
        """The same records as ``ended``, one at a time: a resumed long run need not hold them all."""
        for eid, status, node, retries, metrics in self.db.execute(
                "SELECT episode_id, status, node, retries, metrics FROM episodes"):
            yield {"episode_id": eid, "status": status, "node": node, "retries": retries,
                   "metrics": json.loads(metrics)}

    def end(self, record: dict[str, Any], index: int | None) -> bool:
        """Write one ended episode atomically; False if it had already ended (never counted twice)."""
        eid = record["episode_id"]
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            cur = self.db.execute(
                "INSERT OR IGNORE INTO episodes VALUES (?, ?, ?, ?, ?, ?, ?)",
                (eid, index, record["status"], record.get("node"), record.get("retries", 0), time.time(),
                 json.dumps(record["metrics"], default=_json)))
            if cur.rowcount == 0:
                return False
            self.db.executemany("INSERT OR REPLACE INTO metrics VALUES (?, ?, ?)", [
                (eid, k, float(v)) for k, v in record["metrics"].items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)])
        return True

    def error(self, kind: str, message: str, *, node: str | None = None, episode: str | None = None) -> None:
        self.db.execute("INSERT INTO errors VALUES (?, ?, ?, ?, ?)", (time.time(), node, episode, kind, message))

    def close(self) -> None:
        self.db.close()


class StepStore:
    """An agent's handle for appending step records from its own process."""

    def __init__(self, run_dir: Path, node: str) -> None:
        self.node = node
        self.db = connect(run_dir / FILENAME)

    def write(self, record: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO steps VALUES (?, ?, ?, ?, ?)", (
            record.get("ts", time.time()), self.node, record.get("episode"), record.get("t"),
            json.dumps(record, default=_json)))

    def close(self) -> None:
        self.db.close()


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
