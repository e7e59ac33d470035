"""Recovery from a dependency that dies mid-run, and a launcher whose memory stays flat.

* the embedded model's server is SIGKILLed mid-request: the model node starts it again and retries
  the request, and the run completes every episode with the death, the restart and the retries on
  record;
* a node an episode needs dies mid-episode: the environment abandons that episode (it is not
  scored from default actions), and it is dealt again once the node is back;
* the environment waits for episodes still in flight rather than stopping early, and a missing
  judge still fails the run after the drain time.

The killed model server is a soak test (two vLLM starts; ``bash setup.sh test --soak``); the 100k-episode
memory run is in tests/test_soak.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kernel.testing import Harness
from tests.fault_proxy import FaultProxy
from tests.helpers import ROOT, alive, children_of, launch, launch_bg, wait_until


def node_pid(launcher: int, node: str) -> int | None:
    """The pid of node ``node`` of the run started by process ``launcher``."""
    for pid in children_of(launcher):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if parent == launcher and f"FRAMEBUS_NODE_ID={node}".encode() in environ:
            return pid
    return None


def direct_children(pid: int) -> list[int]:
    found = []
    for p in children_of(pid):
        try:
            if int(Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(p)
        except (OSError, ValueError, IndexError):
            continue
    return found


def errors(out: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(out / "results.sqlite")
    try:
        return db.execute("SELECT node, episode_id, kind FROM errors ORDER BY ts").fetchall()
    finally:
        db.close()


def episodes(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    return {r["episode_id"]: r for r in rows}


def finish(proc, timeout: float) -> str:
    try:
        output, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return output


# -- a dead model server ----------------------------------------------------------------------------

def requests_running(port: int) -> float:
    """vLLM's own gauge of requests being generated right now (its Prometheus /metrics)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
            text = r.read().decode()
    except OSError:
        return 0.0
    return sum(float(m.group(1)) for m in re.finditer(r"^vllm:num_requests_running\{[^}]*\} (\S+)$", text, re.M))


@pytest.mark.soak
@pytest.mark.timeout(1200)
def test_a_killed_model_server_is_restarted_and_its_request_retried(tmp_path):
    """hello_local.yaml exactly as bundled (restart: never on every node): the vLLM server is
    SIGKILLed while it generates an answer. The model node starts it again and retries the request;
    every episode completes, none is scored from default actions, and the death, the restart and
    the retry are on record."""
    out = tmp_path / "run"
    proc = launch_bg("run", "hello_local.yaml", "--episodes", "2", "--set", "env.max_steps=4",
                     "--set", "model.sampling.max_tokens=24", "--out", str(out))
    try:
        model = server = None
        port = 0

        def found_server() -> bool:
            nonlocal model, server, port
            model = model or node_pid(proc.pid, "model")
            kids = direct_children(model) if model else []
            for kid in kids:
                cmdline = Path(f"/proc/{kid}/cmdline").read_bytes().split(b"\0")
                if b"--port" in cmdline:
                    server, port = kid, int(cmdline[cmdline.index(b"--port") + 1])
                    return True
            return False

        assert wait_until(found_server, 300, 0.5), "no model server process under the model node"
        # kill it while it is answering the agent: the request in flight must be retried
        assert wait_until(lambda: requests_running(port) >= 1 or proc.poll() is not None, 600, 0.2)
        assert proc.poll() is None, "the run ended before a request was in flight"
        os.kill(server, signal.SIGKILL)
        output = finish(proc, 900)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output
    assert not alive(server)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 2, summary["reason"]
    assert summary["model"]["server_restarts"] == 1 and summary["model"]["failures"] == 0
    assert summary["model"]["retries"] >= 1
    assert summary["nodes"]["model"]["restarts"] == 0  # the node itself never went down
    assert summary["nodes"]["env"]["clock"]["timeouts"] == 0  # no step was played from a default action
    kinds = [(node, kind) for node, _, kind in errors(out)]
    assert ("model", "server_died") in kinds and ("model", "server_restarted") in kinds, kinds
    eps = episodes(out)
    assert sum(e["metrics"]["model_retries"] for e in eps.values()) >= 1  # the episode that was hit says so
    assert all(e["metrics"]["agent_model_errors"] == 0 for e in eps.values())  # the agent never saw a failure


# -- a dead node mid-episode -----------------------------------------------------------------------

def stalling_hello(tmp_path: Path, marker: Path) -> Path:
    path = tmp_path / "hello_stalling.yaml"
    path.write_text(f"""
name: hello_stalling
include: [{ROOT / "launch" / "hello.yaml"}]
nodes:
  - id: env
    clock: {{mode: lockstep, deadline: 120.0, default_action: stay}}
  - id: agent
    uses: tests.nodes_recovery:StallingAgent
    params: {{marker: {marker}, stall_episode: ep00001, stall_t: 0}}
    restart: {{policy: on-failure, max_restarts: 2, backoff: 0.1}}
run:
  episodes: 3
bus:
  heartbeat: 0.2
""")
    return path


@pytest.mark.timeout(300)
def test_an_episode_whose_agent_dies_is_abandoned_then_replayed_in_full(tmp_path):
    """The agent hangs in ep00001 and is SIGKILLed while the environment waits for it (a 120 s
    deadline). The kernel sends the episode back to the deck and tells the environment to abandon
    it, so it is not played on from default actions; it is dealt again once the agent is back and
    scores what the agent really plays (the hello agent is optimal: 100)."""
    marker = tmp_path / "stalled"
    out = tmp_path / "run"
    started = time.monotonic()
    proc = launch_bg("run", str(stalling_hello(tmp_path, marker)), "--out", str(out))
    try:
        assert wait_until(lambda: marker.exists() or proc.poll() is not None, 60)
        assert marker.exists(), finish(proc, 10)
        agent = node_pid(proc.pid, "agent")
        assert agent is not None
        os.kill(agent, signal.SIGKILL)
        output = finish(proc, 100)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output
    assert time.monotonic() - started < 100, "the run sat out the 120 s deadline"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == {"total": 3, "completed": 3, "failed": 0}
    assert summary["nodes"]["agent"]["restarts"] == 1
    assert summary["nodes"]["env"]["clock"]["timeouts"] == 0
    eps = episodes(out)
    assert sorted(eps) == ["ep00000", "ep00001", "ep00002"]
    assert eps["ep00001"]["retries"] == 1 and [e["retries"] for e in (eps["ep00000"], eps["ep00002"])] == [0, 0]
    assert all(e["metrics"]["score"] == 100.0 and e["metrics"]["success"] == 1.0 for e in eps.values())
    assert ("agent", None, "node_exit") in errors(out) and ("agent", "ep00001", "retry") in errors(out)
    assert "abandoning the episode" in (out / "logs" / "env.log").read_text()


def test_a_missing_judge_still_fails_the_run_after_the_drain_time(tmp_path, monkeypatch):
    """The environment now waits for the episodes in flight instead of ending its run; when nothing
    will ever end them (``judge: true`` leaves the ending to a judge that is not there), the drain
    timer still says why."""
    path = tmp_path / "unjudged.yaml"
    path.write_text("""
name: unjudged
nodes:
  - id: env
    uses: hello.env
    params: {max_steps: 3, judge: true}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 5.0, default_action: stay}
  - id: agent
    uses: hello.agent
    inputs: {obs: env/obs}
run: {episodes: 2}
""")
    monkeypatch.setenv("FRAMEBUS_DRAIN_S", "2")
    result = launch("run", str(path), "--out", str(tmp_path / "run"), timeout=60)
    assert result.returncode == 1
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert "nothing left to play but only 0/2 episodes were ended, none in the last 2 s" in summary["reason"]


def test_a_judge_taking_longer_than_the_drain_time_for_one_episode_is_waited_for(tmp_path, monkeypatch):
    """One episode's scoring may outlast the drain time (a model grader on a loaded machine): while
    the judge's handler is still running, the run waits on."""
    path = tmp_path / "slower.yaml"
    path.write_text("""
name: slower
nodes:
  - id: env
    uses: hello.env
    params: {max_steps: 2}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 5.0, default_action: stay}
  - id: agent
    uses: hello.agent
    inputs: {obs: env/obs}
  - id: judge
    uses: tests.nodes_extra:SlowJudge
    params: {delay_s: 4.0}
    inputs: {step: {from: env/step, policy: block, size: 64}}
run: {episodes: 2}
""")
    monkeypatch.setenv("FRAMEBUS_DRAIN_S", "1.5")
    result = launch("run", str(path), "--out", str(tmp_path / "run"), timeout=90)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert result.returncode == 0, summary["reason"]
    assert summary["status"] == "completed" and len(episodes(tmp_path / "run")) == 2


def test_a_judge_whose_handler_raises_fails_the_run_naming_the_error(tmp_path, monkeypatch):
    """A judge's input handler that raises leaves its episode open: the run still ends (the drain
    timer), and its reason and errors table say which node's input failed and why."""
    path = tmp_path / "broken.yaml"
    path.write_text("""
name: broken
nodes:
  - id: env
    uses: hello.env
    params: {max_steps: 2}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 5.0, default_action: stay}
  - id: agent
    uses: hello.agent
    inputs: {obs: env/obs}
  - id: judge
    uses: tests.nodes_extra:BrokenJudge
    inputs: {step: {from: env/step, policy: block, size: 64}}
run: {episodes: 5}
""")
    monkeypatch.setenv("FRAMEBUS_DRAIN_S", "2")
    result = launch("run", str(path), "--out", str(tmp_path / "run"), timeout=60)
    assert result.returncode == 1
    reason = json.loads((tmp_path / "run" / "summary.json").read_text())["reason"]
    assert "only 0/5 episodes were ended" in reason
    assert "the last error on record: judge: input_handler: judge.step failed (" in reason
    assert "ValueError: cannot score ep0000" in reason
    with sqlite3.connect(tmp_path / "run" / "results.sqlite") as db:
        kinds = db.execute("SELECT node, kind, message FROM errors WHERE kind = 'input_handler'").fetchall()
    # failures 1, 2 and 4 of the five are sent; the 3rd and 5th are only counted
    assert [m.split(" failed ")[1].split(")")[0] for _, _, m in kinds] == ["(1x", "(2x", "(4x"], kinds
    assert all(node == "judge" for node, _, _ in kinds)


def test_a_slow_judge_gets_the_drain_time_per_episode_not_for_all(tmp_path, monkeypatch):
    """The env plays its last episode long before a slow judge (one rendering pages or asking a
    model) has scored the queue: as long as episodes keep ending, the run waits for the rest."""
    path = tmp_path / "slow.yaml"
    path.write_text("""
name: slow
nodes:
  - id: env
    uses: hello.env
    params: {max_steps: 2}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 5.0, default_action: stay}
  - id: agent
    uses: hello.agent
    inputs: {obs: env/obs}
  - id: judge
    uses: tests.nodes_extra:SlowJudge
    params: {delay_s: 1.0}
    inputs: {step: {from: env/step, policy: block, size: 64}}
run: {episodes: 6}
""")
    monkeypatch.setenv("FRAMEBUS_DRAIN_S", "2.5")
    result = launch("run", str(path), "--out", str(tmp_path / "run"), timeout=90)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert result.returncode == 0, summary["reason"]
    assert summary["status"] == "completed" and len(episodes(tmp_path / "run")) == 6


async def test_episode_next_waits_while_an_episode_may_still_come_back():
    async with Harness(quiet=True, episodes=2) as h:
        probe = h.probe()
        await h.start()
        first, second = await probe.next_episode(), await probe.next_episode()
        assert (first.id, second.id) == ("ep00000", "ep00001")
        third = asyncio.ensure_future(probe.next_episode())
        await asyncio.sleep(0.5)
        assert not third.done()  # both are in flight: either may yet go back to the deck
        await probe.end_episode(first)
        await asyncio.sleep(0.3)
        assert not third.done()
        await probe.end_episode(second)
        assert await asyncio.wait_for(third, 10) is None  # every episode ended


# -- the test proxy's own count ---------------------------------------------------------------------

def test_the_fault_proxy_stops_counting_a_request_before_answering_it():
    """Two clients that each wait for their answer before the next request never have more than two
    requests in flight. The proxy once counted three under test_concurrency_limit_per_node's limit
    of two: it wrote an answer before it stopped counting the request, and while the handler thread
    waited for the GIL (the test's in-process kernel held it), the client read the answer and its
    next request arrived. A thread that keeps the GIL busy here makes that ordering likely (the old
    proxy failed 5 of 5 tries), but the count must hold whatever the ordering."""

    class Upstream(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = FaultProxy(f"http://127.0.0.1:{upstream.server_address[1]}")
    busy = threading.Event()

    def hold_the_gil() -> None:
        while not busy.is_set():
            sum(range(1000))

    threading.Thread(target=hold_the_gil, daemon=True).start()
    try:
        def client() -> None:
            for _ in range(150):
                req = urllib.request.Request(proxy.url + "/chat/completions", data=b"{}", method="POST")
                with urllib.request.urlopen(req, timeout=30) as r:
                    r.read()

        threads = [threading.Thread(target=client) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert proxy.requests == 300
        assert proxy.max_in_flight <= 2
    finally:
        busy.set()
        proxy.close()
        upstream.shutdown()
        upstream.server_close()


@pytest.mark.timeout(300)
def test_an_env_whose_run_raises_is_restarted_by_policy_and_its_episode_played_again(tmp_path):
    """``restart: on-failure`` covers a node whose run raises (not only one whose process dies): the
    kernel does not end the run on its failed ``done``, the supervisor starts it again, and the
    episode it was playing is dealt again and ends as it should."""
    marker = tmp_path / "failed"
    path = tmp_path / "hello_failing.yaml"
    path.write_text(f"""
name: hello_failing
include: [{ROOT / "launch" / "hello.yaml"}]
nodes:
  - id: env
    uses: tests.nodes_recovery:FailingOnceEnv
    params: {{marker: {marker}}}
    restart: {{policy: on-failure, max_restarts: 1, backoff: 0.1}}
run:
  episodes: 3
""")
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=240)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert marker.exists()
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["episode_id"] for r in rows) == ["ep00000", "ep00001", "ep00002"]
    assert all(r["status"] == "completed" and r["metrics"]["success"] == 1.0 for r in rows), rows
    assert next(r for r in rows if r["episode_id"] == "ep00001")["retries"] >= 1
