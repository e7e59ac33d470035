"""bench/transport.py: the steady rate leaves the first episode (process start, handshakes) out."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from bench.transport import TRANSPORTS, steady_rate


def _book(run_dir: Path, rows: list[tuple[float, int]]) -> None:
    run_dir.mkdir()
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        db.execute("CREATE TABLE episodes (episode_id TEXT, status TEXT, ended_at REAL, metrics TEXT)")
        db.executemany("INSERT INTO episodes VALUES (?, 'completed', ?, ?)",
                       [(f"ep{i:05d}", ended, json.dumps({"steps": steps})) for i, (ended, steps) in enumerate(rows)])
        db.execute("INSERT INTO episodes VALUES ('ep99999', 'failed', 99.0, '{\"steps\": 1000}')")


def test_the_rate_is_over_the_episodes_after_the_first(tmp_path: Path) -> None:
    _book(tmp_path / "run", [(10.0, 500), (11.0, 40), (12.0, 60)])  # the first one took the start-up
    assert steady_rate(tmp_path / "run") == (50.0, 100)


def test_too_few_episodes_for_a_steady_rate_are_refused(tmp_path: Path) -> None:
    _book(tmp_path / "run", [(10.0, 5), (11.0, 5)])
    with pytest.raises(RuntimeError, match="at least 3"):
        steady_rate(tmp_path / "run")


def test_tcp_runs_differ_only_in_curve() -> None:
    assert TRANSPORTS["ipc"] == [] and TRANSPORTS["tcp_curve"] == ["--set", "bus.transport=tcp"]
    assert TRANSPORTS["tcp_plain"] == [*TRANSPORTS["tcp_curve"], "--set", "bus.curve=false"]
