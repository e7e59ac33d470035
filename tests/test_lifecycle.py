"""Restarts, teardown and orphan prevention, with real processes and signals."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import textwrap
import time

from kernel.testing import Harness
from tests.helpers import LONG_HELLO, alive, announced, children_of, launch, launch_bg, wait_until
from tests.nodes import CrashOnStart, Hung, Services


async def test_crashing_node_is_restarted_by_policy_with_its_last_lines_reported():
    async with Harness(quiet=True) as h:
        h.add("flaky", CrashOnStart, params={"crashes": 2},
              restart={"policy": "on-failure", "max_restarts": 3, "backoff": 0.1})
        probe = h.probe()
        await h.start(ready_timeout=30)
        assert await probe.request("flaky", "starts") == 3
        assert [e[1] for e in h.exits] == [1, 1]
        assert h.supervisor.procs["flaky"].restarts == 2
        assert any("crash number 2 on purpose" in line for line in h.supervisor.procs["flaky"].tail)


async def test_node_that_keeps_crashing_fails_the_run_after_max_restarts():
    async with Harness(quiet=True) as h:
        h.add("flaky", CrashOnStart, params={"crashes": 99},
              restart={"policy": "on-failure", "max_restarts": 1, "backoff": 0.05})
        h.add("svc", Services)
        h.probe()
        try:
            await h.start(ready_timeout=5)
        except asyncio.TimeoutError:
            pass
        # off the loop: the supervisor records the exits on this test's event loop, which a plain
        # wait_until would hold (under load the second crash came after the 5 s the start waited)
        assert await asyncio.to_thread(wait_until, lambda: len(h.exits) == 2, 30)
        assert await asyncio.to_thread(wait_until, lambda: h.kernel.nodes["flaky"].state == "failed", 10)
        assert h.supervisor.procs["flaky"].restarts == 1


async def test_teardown_with_a_hung_node_finishes_within_five_seconds():
    async with Harness(quiet=True) as h:
        h.add("hung", Hung)
        h.add("svc", Services)
        h.probe()
        await h.start()
        pids = [h.pid("hung"), h.pid("svc")]
        t0 = time.monotonic()
        await h.supervisor.stop_all(h.kernel.stop_nodes)
        assert time.monotonic() - t0 < 5.0
        assert not any(alive(p) for p in pids)


HANGING_GRAPH = """
name: hang
nodes:
  - id: svc
    uses: tests.nodes:Services
  - id: hung
    uses: tests.nodes:Hung
  - id: env
    uses: hello.env
    params: {max_steps: 1000000}
    inputs: {action: agent/action}
    clock: {mode: lockstep}
  - id: agent
    uses: hello.agent
    params: {think_s: 0.05}
    inputs: {obs: env/obs}
  - id: grandchild
    cmd: ["sh", "-c", "{python} -m kernel.sdk.run_node; sleep 30"]
    env: {FRAMEBUS_USES: "tests.nodes:Services"}
run: {episodes: 1000}
"""


def _start_graph(tmp_path):
    import sys

    path = tmp_path / "hang.yaml"
    path.write_text(textwrap.dedent(HANGING_GRAPH).replace("{python}", sys.executable))
    proc = launch_bg("run", str(path), "--out", str(tmp_path / "run"))
    # all five nodes (and the grandchild's python) up and running
    assert wait_until(lambda: len(children_of(proc.pid)) >= 6 and announced(tmp_path / "run") is not None, 60), \
        proc.output()
    return proc


def test_ctrl_c_stops_every_process_within_five_seconds_even_with_a_hung_node(tmp_path):
    proc = _start_graph(tmp_path)
    kids = children_of(proc.pid)
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=10)
    assert time.monotonic() - t0 < 5.0
    assert wait_until(lambda: not any(alive(k) for k in kids), 1.0), [k for k in kids if alive(k)]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert proc.returncode == 130


def test_nodes_exit_when_the_kernel_is_sigkilled(tmp_path):
    proc = _start_graph(tmp_path)
    kids = children_of(proc.pid)
    time.sleep(1.0)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=5)
    # direct children die with their parent; the grandchild sees its parent change (within 0.25 s,
    # then up to 2.5 s to drain its logs); the missing heartbeats would take bus.grace, 30 s. The
    # slack is for a loaded machine (four test workers on two cores once left it alive at 6 s).
    assert wait_until(lambda: not any(alive(k) for k in kids if not _is_sleep(k)), 15.0), \
        [(k, _comm(k)) for k in kids if alive(k)]


def _comm(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return "?"


def _is_sleep(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/comm").read().strip() == "sleep"
    except OSError:
        return True


def test_a_run_past_its_timeout_ends_as_timeout_with_exit_code_124(tmp_path):
    res = launch("run", *LONG_HELLO, "--set", "run.timeout=2", "--out", str(tmp_path / "run"), timeout=90)
    assert res.returncode == 124, res.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["status"], summary["reason"]) == ("timeout", "run.timeout of 2.0 s reached")
    assert "episodes returned to the deck" not in res.stderr  # a timed-out run stops; it does not retry


def test_a_node_that_cannot_be_started_is_named_with_the_reason(tmp_path: Path) -> None:
    """A node whose command does not exist fails the run before it starts; the reason says why (the
    operating system's word), not only that the node exited with code 127."""
    lf = tmp_path / "broken.yaml"
    lf.write_text("include: [hello.yaml]\nnodes:\n  - id: judge\n    cmd: [/nonexistent/framebus-judge]\n")
    res = launch("run", str(lf), "--out", str(tmp_path / "run"), "--json", cwd=tmp_path, timeout=90)
    assert res.returncode != 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["reason"].startswith("node 'judge' could not be started: ")
    assert "/nonexistent/framebus-judge" in summary["reason"] and "No such file" in summary["reason"]
    assert summary["nodes"]["judge"]["exit_code"] == 127 and "No such file" in summary["nodes"]["judge"]["error"]
