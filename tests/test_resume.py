"""Resuming a run folder: a line a crash cut short, records outside the run's deal, and a disk that
fills up mid-run (issue 35, items 6 and 7)."""

from __future__ import annotations

import errno
import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from kernel.bus.resultsdb import write_problem
from kernel.graph.episodes import EpisodeBook
from kernel.graph.store import ResultsStore, read_mirror
from tests.helpers import launch


def _record(eid: str, score: float = 100.0) -> dict:
    return {"episode_id": eid, "status": "completed", "node": "env", "retries": 0, "metrics": {"score": score}}


def _line(eid: str, score: float = 100.0) -> str:
    return json.dumps(_record(eid, score)) + "\n"


# units ---------------------------------------------------------------------------------------
def test_a_torn_last_line_is_ended_before_the_next_record_is_appended(tmp_path):
    torn = _line("ep00001")[:30]
    (tmp_path / "episodes.jsonl").write_text(_line("ep00000") + torn)
    store = ResultsStore(tmp_path)
    store.end(_record("ep00001"), 1)
    store.close()
    data = (tmp_path / "episodes.jsonl").read_bytes()
    assert data.decode().splitlines() == [_line("ep00000").strip(), torn, _line("ep00001").strip()]
    read = read_mirror(data)
    assert [r["episode_id"] for r in read.records] == ["ep00000", "ep00001"] and read.torn == [2]


def test_a_record_an_older_store_glued_to_a_torn_line_is_read_back():
    glued = (_line("ep00000") + _line("ep00001")[:25] + _line("ep00001") + "{not json\n").encode()
    read = read_mirror(glued)
    assert [r["episode_id"] for r in read.records] == ["ep00000", "ep00001"]
    assert read.torn == [2, 3]


def test_a_book_counts_and_averages_only_the_episodes_of_its_own_deal(tmp_path):
    book = EpisodeBook(5, 0, tmp_path)
    for i in range(5):
        book.deal("env")
        book.end(f"ep{i:05d}", "completed", {"score": 100.0})
    book.close()
    with (tmp_path / "episodes.jsonl").open("a") as fh:  # records no run of this folder dealt
        fh.write(_line("injected", -1000.0) + _line("ep00042", -1000.0))
    smaller = EpisodeBook(3, 0, tmp_path)
    assert smaller.counts() == {"total": 3, "completed": 3, "failed": 0} and smaller.done
    assert smaller.summary_metrics() == {"score": 100.0} and smaller.outside == 4 and smaller.resumed == 3
    smaller.close()
    larger = EpisodeBook(7, 0, tmp_path)  # ep00005 and ep00006 are still to play; ep00042 is no excuse
    assert larger.counts()["completed"] == 5 and not larger.done and larger.outside == 2
    assert [larger.deal("env")["id"], larger.deal("env")["id"], larger.deal("env")] == ["ep00005", "ep00006", None]
    larger.close()


def test_only_a_disk_that_refuses_writes_is_a_reason_to_stop_and_resume():
    assert write_problem(OSError(errno.ENOSPC, "No space left on device")) == "no space left on device"
    assert "no space left on device" in write_problem(sqlite3.OperationalError("database or disk is full"))
    assert write_problem(OSError(errno.EBADF, "Bad file descriptor")) is None
    assert write_problem(sqlite3.OperationalError("no such table: x")) is None


def test_an_episode_ended_by_its_second_attempt_says_so_and_an_old_store_gains_the_column(tmp_path):
    old = sqlite3.connect(tmp_path / "results.sqlite")  # a run folder from before attempts were kept
    old.executescript("CREATE TABLE steps (ts REAL NOT NULL, node TEXT NOT NULL, episode_id TEXT, t INTEGER, "
                      "record TEXT NOT NULL);")
    old.close()
    book = EpisodeBook(2, 0, tmp_path)
    assert book.deal("env")["id"] == "ep00000" and book.attempt("ep00000") == 1
    book.node_lost("env")
    assert book.deal("env")["id"] == "ep00000" and book.attempt("ep00000") == 2
    book.end("ep00000", "completed", {"score": 1.0})
    assert book.deal("env")["id"] == "ep00001"
    book.node_lost("env")
    book.end("ep00001", "completed", {"score": 1.0})  # the returned first attempt ended after all
    book.close()
    with sqlite3.connect(tmp_path / "results.sqlite") as db:
        assert db.execute("SELECT episode_id, retries, attempt FROM episodes ORDER BY idx").fetchall() == [
            ("ep00000", 1, 2), ("ep00001", 1, None)]
        assert "attempt" in {row[1] for row in db.execute("PRAGMA table_info(steps)")}


# process level -------------------------------------------------------------------------------
def test_a_resume_counts_its_own_deal_and_keeps_the_episode_after_a_torn_line(tmp_path):
    """A run of 6 episodes, then: the launcher died while writing ep00003's line (its line torn,
    the database without ep00003..5), and two records no run dealt were put in the folder. Resumed
    with 5 episodes, it plays ep00003 and ep00004 again, writes each on a line of its own and
    counts 5/5, averaging none of the strangers."""
    out = tmp_path / "run"
    assert launch("run", "hello.yaml", "--episodes", "6", "--out", str(out)).returncode == 0
    mirror = out / "episodes.jsonl"
    lines = mirror.read_text().splitlines(keepends=True)
    mirror.write_text("".join(lines[:3]) + _line("injected", -1000.0) + _line("ep00042", -1000.0) + lines[3][:40])
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("DELETE FROM episodes WHERE idx >= 3")
    result = launch("run", "hello.yaml", "--episodes", "5", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    said = result.stdout + result.stderr
    assert "episodes 5/5 completed" in said and "2 ended episode(s) outside this run's deal" in said
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == {"total": 5, "completed": 5, "failed": 0}
    assert summary["metrics"]["score"] == 100.0 and summary["deal"]["outside"] == 2
    ids = [r["episode_id"] for r in read_mirror(mirror.read_bytes()).records]
    assert ids == ["ep00000", "ep00001", "ep00002", "injected", "ep00042", "ep00003", "ep00004"]
    report = launch("report", str(out))
    assert report.returncode == 0, report.stderr
    page = (out / "report.html").read_text()
    assert "ep00003" in page and "ep00004" in page and "injected" not in page


@pytest.fixture
def tiny_disk(tmp_path):
    """A 2 MiB tmpfs of the test's own (mounting needs root)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(path: Path, leave: int) -> None:
    """Take the disk's room but ``leave`` bytes (0: all of it)."""
    import shutil

    room = max(shutil.disk_usage(path.parent).free - leave, 0)
    with path.open("wb") as fh:
        try:
            while room > 0:
                room -= fh.write(b"\0" * min(room, 64 * 1024))
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_a_run_on_a_full_disk_stops_and_fails_with_the_reason_and_resumes_once_there_is_room(tiny_disk):
    out = tiny_disk / "run"
    _fill(tiny_disk / "filler", leave=400 * 1024)
    first = launch("run", "hello.yaml", "--episodes", "5000", "--out", str(out), timeout=60)
    said = first.stdout + first.stderr
    assert first.returncode == 1 and "Traceback" not in said, said[-3000:]
    assert "failed (results cannot be written: cannot write " in said and "no space left on device" in said
    kept = read_mirror((out / "episodes.jsonl").read_bytes())
    assert kept.torn == [] and 0 < len(kept.records) < 5000

    _fill(tiny_disk / "filler2", leave=0)  # still full: one line, before any node starts
    again = launch("run", "hello.yaml", "--episodes", "5000", "--out", str(out), timeout=60)
    said = (again.stdout + again.stderr).strip()
    assert again.returncode == 1 and len(said.splitlines()) == 1, said
    assert said.startswith("error: cannot write ") and "no space left on device" in said

    (tiny_disk / "filler").unlink()
    (tiny_disk / "filler2").unlink()
    total = len(kept.records) + 3
    resumed = launch("run", "hello.yaml", "--episodes", str(total), "--out", str(out), timeout=60)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr
    assert f"resuming {out}: {len(kept.records)} episode(s)" in resumed.stdout + resumed.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == total


def test_a_retried_episode_keeps_the_steps_of_its_abandoned_attempt_apart(tmp_path):
    """The agent dies at step 3 of ep00002, after recording steps 0..3 (10 prompt tokens each);
    the episode is dealt again and played in full (7 steps). The abandoned attempt's rows stay in
    the store, marked as such, and neither the report's tokens nor the console's replay of ep00002
    mix them in."""
    from kernel.tools.console.replay import Replays
    from kernel.tools.report import data as report_data
    from tests.helpers import ROOT

    path = tmp_path / "dying.yaml"
    path.write_text(f"""
include: [{ROOT / "launch" / "hello.yaml"}]
nodes:
  - id: agent
    uses: tests.nodes_recovery:RecordingDyingAgent
    params: {{marker: {tmp_path / "died"}}}
    restart: {{policy: on-failure, max_restarts: 2, backoff: 0.1}}
run: {{episodes: 3}}
bus: {{heartbeat: 0.2}}
""")
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=90)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    with sqlite3.connect(out / "results.sqlite") as db:
        rows = db.execute("SELECT COALESCE(attempt, 1), t FROM steps WHERE episode_id = 'ep00002' AND node = 'agent' "
                          "ORDER BY rowid").fetchall()
        ended = db.execute("SELECT retries, attempt FROM episodes WHERE episode_id = 'ep00002'").fetchone()
    assert ended == (1, 2)
    assert rows == [(1, 0), (1, 1), (1, 2), (1, 3), *((2, t) for t in range(7))]
    run = report_data.load(out)
    assert run.tokens_per_episode()["ep00002"] == {"prompt_tokens": 70, "completion_tokens": 7}
    replay = Replays(out).episode("ep00002")
    assert replay["stored"] == 7 and [s["t"] for s in replay["steps"]] == list(range(7))
