"""Results of a node that runs on another machine than the run folder reach the run folder over the
bus (kernel.bus.outbox, kernel.graph.inbox): a node told ``results: bus`` (real processes, real
sockets) ships its step records, pictures, log lines and trace spans, and the kernel writes them
where, and as, the node would have; what should not come (from a node that writes its own, a
malformed batch, a flood) is refused and counted, and the kernel goes on."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from kernel.bus.errors import RemoteError
from kernel.bus.outbox import own_run_dir
from kernel.sdk.media import read_sets
from kernel.testing import Harness
from tests.nodes_results import Broken, Flooder, Reporter, Sender


async def _play(run: Path, *, ship: bool, episodes: int = 2) -> dict[str, Any]:
    async with Harness(quiet=True, episodes=episodes, run_dir=run, trace="file") as h:
        h.add("reporter", Reporter, ship_results=ship)
        await h.start()
        status, reason = await h.wait_finished(60)
        assert status == "completed", reason
        await h.stop()
        return {"facts": h.kernel.results_facts("reporter"), "own": own_run_dir(run, h.ipc_dir.name),
                "refused": dict(h.kernel.bad.counts)}


def _steps(run: Path) -> list[tuple]:
    con = sqlite3.connect(run / "results.sqlite")
    try:
        return con.execute("SELECT ts, node, episode_id, t, record FROM steps ORDER BY rowid").fetchall()
    finally:
        con.close()


def _media(run: Path) -> tuple[list[dict], dict[str, bytes]]:
    sets = [{k: v for k, v in s.items() if k != "time"} for s in read_sets(run)]
    files = {p.relative_to(run).as_posix(): p.read_bytes() for p in sorted((run / "media").rglob("*.*"))
             if p.name != "index.jsonl"}
    return sets, files


def _events(run: Path) -> list[tuple[str, str | None]]:
    lines = (run / "logs" / "reporter.jsonl").read_text().splitlines()
    return sorted((r["event"], r.get("episode")) for r in map(json.loads, lines) if r["event"] == "played")


def _spans(run: Path) -> list[str]:
    return sorted(json.loads(line)["name"] for line in (run / "traces" / "reporter.jsonl").read_text().splitlines())


@pytest.mark.timeout(120)
async def test_a_shipping_node_s_results_land_in_the_run_folder_as_a_local_node_s_do(tmp_path: Path) -> None:
    local = await _play(tmp_path / "local", ship=False)
    shipped = await _play(tmp_path / "shipped", ship=True)
    a, b = tmp_path / "local", tmp_path / "shipped"

    assert local["facts"] == {"via": "local"}
    facts = shipped["facts"]
    assert facts["via"] == "bus" and facts["received"]["step"] == 6 and facts["received"]["media"] == 2
    assert facts["sent"]["sent"]["step"] == 6 and facts["sent"]["sent"]["media"] == 2
    assert not facts["sent"]["dropped"] and not facts["sent"]["refused"] and not facts["sent"]["lost"]
    assert facts["write_failures"] == 0 and "refused" not in facts and not shipped["refused"]

    # step records: the same lines in steps/<node>.jsonl, the same rows in results.sqlite
    assert (a / "steps" / "reporter.jsonl").read_bytes() == (b / "steps" / "reporter.jsonl").read_bytes()
    assert _steps(a) == _steps(b) and len(_steps(b)) == 6
    # pictures: the same files, byte for byte, and the same index lines (but for the time written)
    assert _media(a) == _media(b) and len(_media(b)[1]) == 4
    # log lines and spans: the same events (their times and ids differ from run to run)
    assert _events(a) == _events(b) == [("played", "ep00000"), ("played", "ep00001")]
    assert _spans(a) == _spans(b) and "reporter.run" in _spans(b)
    # ... and the shipping node wrote none of it itself: its own folder (where its run folder points
    # on its machine) holds nothing
    assert not shipped["own"].exists() or not any(shipped["own"].rglob("*")), list(shipped["own"].rglob("*"))


BATCH = {"batch": 1, "items": [["log", b'{"event": "forged"}\n']]}


@pytest.mark.timeout(60)
async def test_results_from_a_node_that_writes_its_own_or_malformed_ones_are_refused_and_counted(
        tmp_path: Path) -> None:
    async with Harness(quiet=True, run_dir=tmp_path) as h:
        h.add("local", Sender)
        h.add("remote", Sender, ship_results=True)
        probe = h.probe()
        await h.start()
        # a node on the launching machine (and the probe, which is one too) may not ship results
        assert await probe.request("local", "send", {"batch": BATCH}) == "PermissionError"
        with pytest.raises(RemoteError) as refused:
            await probe.request("kernel", "results", BATCH)
        assert refused.value.remote_type == "PermissionError"
        # a node that ships them may not send a malformed batch
        for bad in ({"batch": 1, "items": [["log", "text, not bytes"]]}, {"batch": 1, "items": [["exe", b"x"]]},
                    {"batch": 1, "items": [["media", {"episode": "e", "caption": "", "row": None, "metrics": [],
                                                      "pictures": [["a", b"x", ".sh", 1, 1]], "time": 0.0}]]},
                    {"items": []}, ["not", "a", "map"]):
            assert await probe.request("remote", "send", {"batch": bad}) == "ValueError"
        assert await probe.request("remote", "send", {"batch": BATCH}) == "taken"  # the kernel is fine
        assert h.kernel.results_refused == {"local": 1, "probe": 1, "remote": 5}
        assert h.kernel.bad.counts["local"] == 1 and h.kernel.bad.counts["probe"] == 1
        assert h.kernel.bad.counts["remote"] == 5
        await h.stop()
    forged = (tmp_path / "logs" / "remote.jsonl").read_text()
    assert forged.count('"forged"') == 1  # only the batch it was allowed to send
    assert not (tmp_path / "logs" / "local.jsonl").read_text().count('"forged"')


@pytest.mark.timeout(90)
async def test_a_flood_is_held_back_by_the_kernel_s_bound_and_loses_nothing(tmp_path: Path, monkeypatch) -> None:
    """300 step records of 20 kB (12 MB with their rows) in one burst, against a kernel that holds at
    most 256 kB of a node's results unwritten, on a slow disk: the kernel says busy, the node sends again later, and every record
    arrives, once; the kernel's heartbeats go on (no node gives up on it)."""
    from kernel.graph import inbox

    monkeypatch.setattr(inbox, "NODE_BACKLOG", 256 * 1024)
    write = inbox.ResultsInbox._write

    gate_until = time.monotonic() + 30

    def slow_disk(self, node, items):
        # 50 ms a batch, and nothing written before the kernel has had to refuse one: the node always
        # outruns the writer then, however the run's processes share a loaded core (with the 50 ms
        # alone, a node slowed as much as the writer once met no refusal). A kernel that never says
        # busy stalls this disk 30 s, and the test fails on the count.
        while not self.busy[node] and time.monotonic() < gate_until:
            time.sleep(0.01)
        time.sleep(0.05)
        write(self, node, items)

    monkeypatch.setattr(inbox.ResultsInbox, "_write", slow_disk)
    async with Harness(quiet=True, episodes=1, run_dir=tmp_path) as h:
        h.add("flood", Flooder, ship_results=True, params={"n": 300, "size": 20_000})
        await h.start()
        status, reason = await h.wait_finished(60)
        assert status == "completed", reason
        await h.stop()
        facts = h.kernel.results_facts("flood")
    assert facts["received"] == {"step": 300} and facts["busy"] >= 1, facts
    assert facts["sent"]["busy"] == facts["busy"] and not facts["sent"]["dropped"], facts
    assert [t for (_, _, _, t, _) in _steps(tmp_path)] == list(range(300))
    assert len((tmp_path / "steps" / "flood.jsonl").read_text().splitlines()) == 300
    assert all(code == 0 for _, code, _ in h.exits)


@pytest.mark.timeout(60)
async def test_a_shipping_node_that_fails_its_setup_still_says_why_in_the_run_folder(tmp_path: Path) -> None:
    import asyncio

    async with Harness(quiet=True, run_dir=tmp_path) as h:
        h.add("broken", Broken, ship_results=True)
        with pytest.raises(asyncio.TimeoutError):
            await h.start(ready_timeout=4)
        for _ in range(300):  # never ready; on a loaded machine its exit can come after the 4 s wait
            if h.exits:
                break
            await asyncio.sleep(0.1)
        assert [(n, code) for n, code, _ in h.exits] == [("broken", 1)]
        await h.stop()
    events = [json.loads(line) for line in (tmp_path / "logs" / "broken.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["setting up", "setup failed"]
    assert "no such model" in json.dumps(events[1]["exception"])
