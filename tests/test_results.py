"""Results that survive anything: the SQLite store, `launch export`, resume after a SIGKILLed
launcher, and a run whose nodes are SIGKILLed again and again."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT, alive, children_of, launch, launch_bg, wait_until

# every node restarts on failure; the agent thinks a little so the run lasts long enough to be hit
RESTARTING = ROOT / "launch" / "hello.yaml"
SETS = ["--set", "agent.think_s=0.002", "--set", "bus.heartbeat=0.2"]


def restarting_hello(tmp_path: Path) -> Path:
    text = RESTARTING.read_text()
    for node in ("env", "agent", "judge"):
        text = text.replace(f"  - id: {node}\n", f"  - id: {node}\n    restart: {{policy: on-failure, max_restarts: 100, "
                                                  f"backoff: 0.05}}\n")
    path = tmp_path / "hello_restarting.yaml"
    path.write_text(text.replace("deadline: 5.0", "deadline: 1.0"))
    return path


def exported(run_dir: Path, fmt: str = "jsonl") -> list[dict]:
    result = launch("export", str(run_dir), "--format", fmt)
    assert result.returncode == 0, result.stderr
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(result.stdout)))
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_export_prints_one_record_per_episode(tmp_path):
    out = tmp_path / "run"
    assert launch("run", "hello.yaml", "--episodes", "4", "--out", str(out)).returncode == 0
    rows = exported(out)
    assert [r["episode_id"] for r in rows] == ["ep00000", "ep00001", "ep00002", "ep00003"]
    assert all(r["status"] == "completed" and r["score"] == 100.0 and r["steps"] >= 1 for r in rows)
    table = exported(out, "csv")
    assert [r["episode_id"] for r in table] == [r["episode_id"] for r in rows]
    assert {"episode_id", "status", "retries", "score", "success", "steps"} <= set(table[0])
    bad = launch("export", str(tmp_path / "nothing"))
    assert bad.returncode == 2 and "has no results.sqlite: is it a run folder?" in bad.stderr


def test_a_damaged_run_folder_is_refused_with_the_file_named(tmp_path):
    """A results.sqlite that is no database (a copy cut short, another file saved over it): the
    re-run that would resume into it, and `launch export`, stop with the file's path and what to do,
    before any node starts; a summary.json that is no JSON stops `launch report` the same way."""
    out = tmp_path / "run"
    assert launch("run", "hello.yaml", "--episodes", "2", "--out", str(out)).returncode == 0
    for damaged in ('{"status": "compl', '["status", "completed"]'):
        (out / "summary.json").write_text(damaged)
        result = launch("report", str(out))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"{out / 'summary.json'} cannot be read as a run's summary" in " ".join(result.stderr.split())
    (out / "results.sqlite").write_bytes(b"garbage" * 100)
    _resume_and_export_refused(out, f"{out / 'results.sqlite'} cannot be used as the run's results database: "
                                    "file is not a database. Move it away")


def _resume_and_export_refused(out: Path, said: str) -> None:
    """A resuming `launch run` and `launch export` of ``out`` both stop with exit 2, no traceback and
    ``said`` in their error; the refused re-run started no node."""
    for args in (["run", "hello.yaml", "--episodes", "3", "--out", str(out)], ["export", str(out)]):
        result = launch(*args)
        flat = " ".join(result.stderr.split())
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert said in flat, result.stderr
    assert not (out / "logs" / "env.log").read_text().count("ep00002")


def damage(db_path: Path, name: str) -> None:
    """Overwrite the start of the root page of table or index ``name``: the file's header (page 1)
    stays whole, so it opens as a database and fails only where those rows are read."""
    db = sqlite3.connect(db_path)
    page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    assert page > 1
    with open(db_path, "r+b") as fh:
        fh.seek((page - 1) * size)
        fh.write(b"\xde\xad\xbe\xef" * 16)


def stored_run(run_dir: Path, episodes: int = 3) -> Path:
    """A run folder's results store with ``episodes`` ended episodes, written as the kernel writes them."""
    from kernel.graph.store import ResultsStore

    run_dir.mkdir()
    store = ResultsStore(run_dir)
    for n in range(episodes):
        store.end({"episode_id": f"ep{n:05d}", "status": "completed", "node": "env", "retries": 0,
                   "metrics": {"score": 100.0, "steps": n + 1}}, n)
    store.close()
    return run_dir / "results.sqlite"


@pytest.mark.parametrize("where", ["episodes", "sqlite_autoindex_episodes_1", "json", "json-list"])
def test_a_damaged_page_or_cell_while_reading_rows_names_the_file_and_what_to_do(tmp_path, where):
    """Rows a resumed run and `launch export` read from a store whose header is whole but a page of
    the episode table (or its index) is not, or whose metrics cell is no JSON object: a
    ResultsDbError naming the file, the episode where it knows it, and the way back (episodes.jsonl)."""
    from kernel.bus.resultsdb import ResultsDbError
    from kernel.graph.store import ResultsStore
    from kernel.tools.export import episode_rows

    path = stored_run(tmp_path / "run")
    if where.startswith("json"):
        with sqlite3.connect(path) as db:
            db.execute("UPDATE episodes SET metrics = ? WHERE episode_id = 'ep00001'",
                       ("{not json" if where == "json" else "[1, 2]",))
        db.close()
    else:
        damage(path, where)
    told = ("episode ep00001's metrics are not JSON" if where == "json" else
            "episode ep00001's metrics are not a JSON object" if where == "json-list" else
            "reading its ended episodes failed: database disk image is malformed")
    with pytest.raises(ResultsDbError) as resumed:
        store = ResultsStore(tmp_path / "run")
        try:
            list(store.each_ended())
        finally:
            store.close()
    if where == "sqlite_autoindex_episodes_1":  # export reads the table, not the index: its rows are whole
        assert [row["episode_id"] for row in episode_rows(tmp_path / "run")] == ["ep00000", "ep00001", "ep00002"]
        errors = [resumed.value]
    else:
        with pytest.raises(ResultsDbError) as read:
            list(episode_rows(tmp_path / "run"))
        errors = [resumed.value, read.value]
    for exc in errors:
        assert str(exc).startswith(f"{path} is damaged: {told}"), str(exc)
        assert "move results.sqlite away and run the same `launch run` into this folder again" in str(exc)


def test_a_page_damaged_where_the_run_writes_is_told_once_and_the_mirror_keeps_the_episodes(tmp_path, capsys):
    """The episode table reads fine but the metrics table's page is bad: each write fails, and
    retrying cannot mend it. One line names the file and the way back, not a traceback a batch;
    episodes.jsonl still takes every ended episode."""
    from kernel.graph.store import ResultsStore, read_mirror

    path = stored_run(tmp_path / "run")
    damage(path, "metrics")
    store = ResultsStore(tmp_path / "run")
    assert len(list(store.each_ended())) == 3
    for n in (3, 4):
        store.end({"episode_id": f"ep{n:05d}", "status": "completed", "metrics": {"score": 1.0}}, n)
        assert store.sync(30)
    store.close()
    assert store._writer.failures == 2
    told = capsys.readouterr()
    text = told.out + told.err
    assert text.count(f"{path} is damaged: writing to it failed: database disk image is malformed") == 1, text
    assert "Traceback" not in text
    ended = read_mirror((tmp_path / "run" / "episodes.jsonl").read_bytes()).records
    assert [r["episode_id"] for r in ended] == [f"ep{n:05d}" for n in range(5)]


def test_a_resume_into_a_damaged_store_stops_with_the_file_named_and_a_rebuild_works(tmp_path):
    """The whole way: `launch run` into a folder whose results.sqlite has a bad page in its episode
    table stops with exit 2 and the file's path, no traceback and no node started; `launch export`
    says the same; moving the file away as told resumes from episodes.jsonl."""
    out = tmp_path / "run"
    assert launch("run", "hello.yaml", "--episodes", "2", "--out", str(out)).returncode == 0
    damage(out / "results.sqlite", "episodes")
    _resume_and_export_refused(out, f"{out / 'results.sqlite'} is damaged: reading its ended episodes failed: "
                                    "database disk image is malformed. Its ended episodes are also in episodes.jsonl")
    (out / "results.sqlite").rename(tmp_path / "damaged.sqlite")
    assert launch("run", "hello.yaml", "--episodes", "3", "--out", str(out)).returncode == 0
    assert [r["episode_id"] for r in exported(out)] == ["ep00000", "ep00001", "ep00002"]


def test_a_database_locked_by_another_process_does_not_stall_the_kernel(tmp_path):
    """Agents write step records to the same file; while one holds the write lock, the kernel's
    episode end is queued (the writer thread waits for the lock, the kernel's loop does not)."""
    from kernel.bus.resultsdb import connect
    from kernel.graph.store import ResultsStore

    store = ResultsStore(tmp_path)
    other = connect(tmp_path / "results.sqlite")
    other.execute("BEGIN IMMEDIATE")  # held until we let go
    try:
        record = {"episode_id": "ep00000", "status": "completed", "node": "env", "retries": 0,
                  "metrics": {"score": 1.0}}
        started = time.monotonic()
        store.end(record, 0)  # returns at once, with the lock still held elsewhere (busy timeout: 30 s)
        assert time.monotonic() - started < 5.0
        assert other.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == 0
    finally:
        other.execute("COMMIT")
        other.close()
    assert store.sync(timeout=30)
    assert [(r["episode_id"], r["metrics"]) for r in store.each_ended()] == [("ep00000", {"score": 1.0})]
    store.close()
    assert [r["episode_id"] for r in exported(tmp_path)] == ["ep00000"]


def test_an_acknowledged_episode_the_database_had_not_taken_yet_is_not_lost(tmp_path):
    """The kernel acknowledges an ended episode once its line is in episodes.jsonl; the database
    write follows in a thread. A launcher killed in between leaves the line without its row:
    opening the run again takes it back (and a line torn by the kill is not an episode)."""
    from kernel.graph.episodes import EpisodeBook

    book = EpisodeBook(3, 0, tmp_path)
    for _ in range(2):
        book.end(book.deal("env")["id"], "completed", {"score": 1.0})
    book.close()
    late = {"episode_id": "ep00002", "status": "completed", "node": "env", "retries": 0, "metrics": {"score": 0.5}}
    with (tmp_path / "episodes.jsonl").open("a") as fh:
        fh.write(json.dumps(late) + "\n" + '{"episode_id": "ep000')
    resumed = EpisodeBook(3, 0, tmp_path)
    assert resumed.resumed == 3 and resumed.done and resumed.deal("env") is None
    resumed.close()
    assert [(r["episode_id"], r["score"]) for r in exported(tmp_path)] == [
        ("ep00000", 1.0), ("ep00001", 1.0), ("ep00002", 0.5)]


@pytest.mark.timeout(300)
def test_a_sigkilled_launcher_resumes_to_exactly_the_uninterrupted_result(tmp_path):
    reference = tmp_path / "reference"
    assert launch("run", "hello.yaml", "--episodes", "60", "--out", str(reference), *SETS,
                  timeout=200).returncode == 0
    out = tmp_path / "killed"
    proc = launch_bg("run", "hello.yaml", "--episodes", "60", "--out", str(out), *SETS)
    assert wait_until(lambda: (out / "episodes.jsonl").exists()
                      and len((out / "episodes.jsonl").read_text().splitlines()) >= 15, 60)
    nodes = children_of(proc.pid)
    assert len(nodes) >= 3
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert wait_until(lambda: not any(alive(p) for p in nodes), 15), "nodes of the killed run were left behind"
    resumed = launch("run", "hello.yaml", "--episodes", "60", "--out", str(out), *SETS, timeout=200)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "already ended are skipped" in resumed.stdout + resumed.stderr
    ours, theirs = exported(out), exported(reference)
    assert len({r["episode_id"] for r in ours}) == len(ours) == 60
    strip = [{k: v for k, v in r.items() if k != "node"} for r in theirs]
    assert [{k: v for k, v in r.items() if k != "node"} for r in ours] == strip


@pytest.mark.timeout(400)
def test_nodes_sigkilled_again_and_again_lose_and_duplicate_nothing(tmp_path):
    out = tmp_path / "run"
    proc = launch_bg("run", str(restarting_hello(tmp_path)), "--episodes", "200", "--out", str(out), *SETS)
    rng = random.Random(1)
    kills = 0
    kill_times: list[float] = []  # wall clock, as the results database's ended_at
    try:
        assert wait_until(lambda: (out / "episodes.jsonl").exists(), 60)
        ended = 0

        def progressed() -> bool:  # the graph is whole again and playing: a kill now lands mid-episode
            return proc.poll() is not None or len((out / "episodes.jsonl").read_text().splitlines()) > ended

        while proc.poll() is None and kills < 12:
            # Not on a timer alone: on a loaded machine the restarted nodes may take longer than the
            # interval to be ready, and kills that all land on a graph still starting retry nothing.
            assert wait_until(progressed, 60), "the run made no progress after a kill"
            ended = len((out / "episodes.jsonl").read_text().splitlines())
            time.sleep(rng.uniform(0.3, 1.0))
            victims = children_of(proc.pid)
            by_name = {}
            for pid in victims:
                try:
                    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                except OSError:
                    continue
                for node in ("env", "agent", "judge"):
                    if f"FRAMEBUS_NODE_ID={node}".encode() in environ:
                        by_name[node] = pid
            if not by_name:
                continue
            name = rng.choice(sorted(by_name))
            try:
                os.kill(by_name[name], signal.SIGKILL)
                kills += 1
                kill_times.append(time.time())
            except ProcessLookupError:
                pass
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert kills >= 5, f"only {kills} kills landed"
    assert proc.returncode == 0, proc.output()[-5000:]
    rows = exported(out)
    ids = [r["episode_id"] for r in rows]
    assert len(ids) == len(set(ids)) == 200 and set(ids) == {f"ep{i:05d}" for i in range(200)}
    db = sqlite3.connect(out / "results.sqlite")
    exits = db.execute("SELECT COUNT(*) FROM errors WHERE kind = 'node_exit'").fetchone()[0]
    # Every crash while the run played is on record. Once the last episode ended the graph is
    # stopping and an exit is no crash; episodes.jsonl is written behind the results, so the loop
    # above can still see "progress" then and kill. One kill just before the end may be seen late.
    last_end = db.execute("SELECT MAX(ended_at) FROM episodes").fetchone()[0]
    during_run = sum(1 for t in kill_times if t < last_end)
    assert during_run >= 5, f"only {during_run} of {kills} kills landed while the run played"
    assert exits >= during_run - 1, f"{exits} exits on record for {during_run} kills during the run"
    retried = db.execute("SELECT COUNT(*) FROM errors WHERE kind = 'retry'").fetchone()[0]
    assert retried >= 1 and sum(r["retries"] for r in rows) >= 1


async def test_two_judges_summarizing_a_mean_in_one_section_are_not_added_up():
    """Each judge's mean is 0.5; summary.json must not say 1.0. Counts add up, each judge's data
    stays under by_node, and the headline mean comes from the episodes themselves."""
    from kernel.graph.summary import BY_NODE
    from kernel.testing import Harness

    async with Harness(quiet=True, episodes=3) as h:
        h.add("judge_a", "tests.nodes_extra:MeanJudge", inputs={"step": "probe/step_a"})
        h.add("judge_b", "tests.nodes_extra:MeanJudge", inputs={"step": "probe/step_b"})
        probe = h.probe(outputs=["step_a", "step_b"])
        await h.start()
        for output, score in (("step_a", 0.4), ("step_a", 0.6), ("step_b", 0.5)):
            ep = await probe.next_episode()
            await probe.publish(output, {"episode": ep.id, "score": score}, step=0)
        await h.wait_finished(20)
        for _ in range(50):  # the sections travel with heartbeats
            section = h.kernel.summary_sections().get("score", {})
            if section.get("episodes") == 3:
                break
            await asyncio.sleep(0.1)
        assert section["episodes"] == 3 and section["judge"] == "mean"
        assert "mean_score" not in section  # 0.5 + 0.5 would be a mean of 1.0
        assert section[BY_NODE] == {"judge_a": {"episodes": 2, "mean_score": 0.5, "judge": "mean"},
                                    "judge_b": {"episodes": 1, "mean_score": 0.5, "judge": "mean"}}
        assert h.kernel.book.summary_metrics()["score"] == 0.5
