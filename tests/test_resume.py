"""Resuming a run folder: a line a crash cut short, and records outside the run's deal (issue 35,
item 7)."""

from __future__ import annotations

import json
import sqlite3

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
