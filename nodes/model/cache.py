"""A response cache keyed by the whole request, so a re-run with the same seeds costs nothing."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any


def request_key(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class ResponseCache:
    """Used from worker threads (the model node keeps SQLite off its loop): one call at a time."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, response TEXT, "
                        "created REAL DEFAULT (unixepoch('subsec')))")

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self.db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        with self._lock:
            self.db.execute("INSERT OR REPLACE INTO responses (key, model, response) VALUES (?, ?, ?)",
                            (key, model, json.dumps(response)))

    def close(self) -> None:
        with self._lock:
            self.db.close()
