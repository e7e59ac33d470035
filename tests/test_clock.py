"""Frame clocks with real processes: lockstep holds the world, realtime does not, and the kernel
(and `launch ctl`) can pause, step and resume a running environment."""

from __future__ import annotations

import asyncio
import json
import time

from kernel.testing import Harness
from kernel.tools.client import KernelClient
from tests.helpers import LONG_HELLO, announced, launch, launch_bg, until, wait_until
from tests.nodes import ClockEnv
from tests.nodes_extra import SilentAgent, ThinkingAgent

LOG = {"from": "env/log", "policy": "fifo", "size": 1000}


async def _logs(probe, timeout: float = 20.0) -> tuple[list[dict], dict]:
    """Every per-step log of a ClockEnv, and its final clock stats."""
    steps: list[dict] = []
    deadline = time.monotonic() + timeout
    while True:
        msg = await asyncio.wait_for(probe.recv("log"), max(0.1, deadline - time.monotonic()))
        if "stats" in msg.body:
            return steps, msg.body["stats"]
        steps.append(msg.body)


async def test_lockstep_holds_the_world_while_the_agent_thinks():
    think = 0.3
    async with Harness(quiet=True) as h:
        h.add("env", ClockEnv, params={"steps": 4}, inputs={"action": "agent/action"},
              clock={"mode": "lockstep", "deadline": 10.0, "default_action": "timeout"})
        h.add("agent", ThinkingAgent, params={"think_s": think}, inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        probe = h.probe(inputs={"log": LOG})
        await h.start()
        steps, stats = await _logs(probe)
        seen = await probe.request("agent", "seen")

    assert [s["t"] for s in steps] == [0, 1, 2, 3]
    for s in steps:
        # the env got exactly this step's answer, after waiting for the whole think time
        assert s["actions"] == {"agent": {"t": s["t"]}}, s
        assert s["waited"] >= think - 0.05, s
    # the agent saw every observation, one at a time, in order
    assert [o["step"] for o in seen] == [0, 1, 2, 3]
    assert [o["body_t"] for o in seen] == [0, 1, 2, 3]
    # and the world never moved on to t+1 before the answer to t had left the agent
    for prev, nxt in zip(seen, seen[1:]):
        assert nxt["arrived"] >= prev["answered"], (prev, nxt)
    assert stats["mode"] == "lockstep"
    assert stats["frame"] == 4 and stats["decisions"] == 4
    assert stats["timeouts"] == 0 and stats["stale"] == 0


async def test_lockstep_deadline_uses_the_default_action_and_counts_timeouts():
    deadline = 0.3
    async with Harness(quiet=True) as h:
        h.add("env", ClockEnv, params={"steps": 3}, inputs={"action": "agent/action"},
              clock={"mode": "lockstep", "deadline": deadline, "default_action": "noop"})
        h.add("agent", SilentAgent, inputs={"obs": "env/obs"})
        probe = h.probe(inputs={"log": LOG})
        await h.start()
        steps, stats = await _logs(probe)
        observed = await probe.request("agent", "count")

    assert [s["t"] for s in steps] == [0, 1, 2]
    for s in steps:
        assert s["actions"] == {"agent": "noop"}, s
        assert s["waited"] >= deadline - 0.05, s
        assert s["waited"] < deadline + 5.0, s  # it did give up (generous: a noisy VM)
    assert observed == 3  # the agent was there and got every observation; it just never answered
    assert stats["timeouts"] == 3
    assert stats["decisions"] == 3 and stats["frame"] == 3


async def test_realtime_keeps_stepping_and_counts_frames_per_decision():
    fps, frames, think = 20.0, 30, 0.12
    async with Harness(quiet=True) as h:
        h.add("env", ClockEnv, params={"steps": frames}, inputs={"action": "agent/action"},
              clock={"mode": "realtime", "fps": fps, "default_action": "idle"})
        h.add("agent", ThinkingAgent, params={"think_s": think},
              inputs={"obs": {"from": "env/obs", "policy": "latest"}})
        probe = h.probe(inputs={"log": LOG})
        await h.start()
        steps, stats = await _logs(probe)
        seen = await probe.request("agent", "seen")

    assert [s["t"] for s in steps] == list(range(frames))
    assert stats["mode"] == "realtime" and stats["frame"] == frames
    # the world did not wait for the agent: 30 frames took about 1.5 s, not 30 * think
    assert steps[-1]["at"] - steps[0]["at"] >= (frames - 1) / fps * 0.8
    assert all(s["waited"] < 1.0 for s in steps), [s["waited"] for s in steps]
    # it started with the default action and then used whatever the agent last answered
    assert steps[0]["actions"] == {"agent": "idle"}
    answered = [s["actions"]["agent"]["t"] for s in steps if s["actions"]["agent"] != "idle"]
    assert answered, "no action reached the environment"
    assert answered == sorted(answered)
    # each decision took several frames to arrive: the world kept moving while the agent thought
    fpd = {int(k): v for k, v in stats["frames_per_decision"].items()}
    assert stats["decisions"] == sum(fpd.values())
    assert 4 <= stats["decisions"] <= len(seen)
    assert min(fpd) >= 2, fpd
    assert stats["mean_frames_per_decision"] >= 2
    # an action answering step t can only be in use from frame t+2 on (think 0.12 s > 2 frames)
    for s in steps:
        action = s["actions"]["agent"]
        if action != "idle":
            assert s["t"] - action["t"] >= 2, s
    # far fewer decisions than frames: several frames per decision
    assert stats["decisions"] <= frames // 2


def _call(endpoint: str, svc: str, body: dict | None = None) -> dict:
    with KernelClient(endpoint, timeout=10.0) as client:
        return client.call(svc, body or {})


async def test_pause_step_resume_through_the_kernel_services():
    async with Harness(quiet=True, heartbeat=0.2) as h:
        h.add("env", ClockEnv, params={"steps": 1_000_000}, inputs={"action": "agent/action"},
              clock={"mode": "lockstep", "deadline": 10.0})
        h.add("agent", ThinkingAgent, params={"think_s": 0.01}, inputs={"obs": "env/obs"})
        h.probe()
        await h.start()
        ep = h.kernel.endpoint

        def clock() -> dict:
            return h.kernel.nodes["env"].stats.get("clock") or {"frame": 0, "paused": False}

        assert await until(lambda: clock()["frame"] >= 5), clock()

        status = await asyncio.to_thread(_call, ep, "ctl.pause")
        assert status["paused"] is True
        assert await until(lambda: clock()["paused"]), clock()
        await asyncio.sleep(0.5)  # a step that was under way when the pause came may finish
        frozen = clock()["frame"]
        await asyncio.sleep(1.2)  # six heartbeats
        assert clock()["frame"] == frozen, "the world moved while paused"
        status = await asyncio.to_thread(_call, ep, "status")
        assert status["paused"] is True and status["nodes"]["env"]["clock"]["frame"] == frozen

        await asyncio.to_thread(_call, ep, "ctl.step", {"n": 3})
        assert await until(lambda: clock()["frame"] >= frozen + 3), (frozen, clock())
        await asyncio.sleep(1.2)
        assert clock()["frame"] == frozen + 3, (frozen, clock())
        assert clock()["paused"] is True

        status = await asyncio.to_thread(_call, ep, "ctl.resume")
        assert status["paused"] is False
        assert await until(lambda: clock()["frame"] >= frozen + 3 + 10), (frozen, clock())
        assert clock()["paused"] is False
        assert clock()["timeouts"] == 0


def _ctl(run_dir, *args: str) -> dict:
    """`launch ctl ...` as a user types it; its stdout is the kernel's JSON reply."""
    result = launch("ctl", *args, "--run", str(run_dir), timeout=30)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_launch_ctl_pause_step_resume_and_stop_a_running_graph(tmp_path):
    run_dir = tmp_path / "run"
    proc = launch_bg("run", *LONG_HELLO, "--set", "agent.think_s=0.02", "--out", str(run_dir))
    try:
        assert wait_until(lambda: announced(run_dir) is not None, 60), "the graph never announced itself"
        # polling goes straight to the kernel (fast); every command and check below is the real CLI
        poll = KernelClient(announced(run_dir)["endpoint"], timeout=10.0)

        def env_clock() -> dict:
            return poll.call("status", {})["nodes"]["env"]["clock"] or {"frame": 0, "paused": False}

        try:
            assert wait_until(lambda: env_clock()["frame"] >= 5, 30), env_clock()

            assert _ctl(run_dir, "pause")["paused"] is True
            assert wait_until(lambda: env_clock()["paused"], 10), env_clock()
            time.sleep(0.5)  # a step that was under way when the pause came may finish
            frozen = _ctl(run_dir, "status")["nodes"]["env"]["clock"]["frame"]
            time.sleep(0.8)  # four heartbeats
            status = _ctl(run_dir, "status")
            assert status["nodes"]["env"]["clock"]["frame"] == frozen, "the world moved while paused"
            assert status["paused"] is True

            assert _ctl(run_dir, "step", "3")["paused"] is True
            assert wait_until(lambda: env_clock()["frame"] >= frozen + 3, 10), (frozen, env_clock())
            time.sleep(0.8)
            status = _ctl(run_dir, "status")
            assert status["nodes"]["env"]["clock"]["frame"] == frozen + 3
            assert status["paused"] is True and status["nodes"]["env"]["clock"]["paused"] is True

            assert _ctl(run_dir, "resume")["paused"] is False
            assert wait_until(lambda: env_clock()["frame"] >= frozen + 3 + 10, 10), (frozen, env_clock())
            assert env_clock()["paused"] is False
        finally:
            poll.close()

        _ctl(run_dir, "stop")
        assert proc.wait(timeout=30) == 0, proc.output()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "stopped", summary["reason"]
    assert summary["nodes"]["env"]["clock"]["frame"] >= frozen + 13
    assert announced(run_dir) is None  # the graph is no longer announced


def test_launch_ctl_without_a_running_graph_says_so(tmp_path):
    result = launch("ctl", "status", "--run", str(tmp_path / "nothing-runs-here"), timeout=30)
    assert result.returncode != 0
    assert "no running graph" in result.stderr
    assert "Traceback" not in result.stderr


async def test_lockstep_waits_for_an_agent_that_is_cut_off_and_still_defaults_a_slow_one():
    """The deadline is for slow agents, not lost ones. An agent frozen (SIGSTOP: it sends nothing,
    heartbeats included, as behind a network partition) past the deadline is not given the default
    action: the world waits, counting a stall, and takes its answer once it is back. An agent that
    is alive but never answers still gets the default at the deadline."""
    import os
    import signal

    async with Harness(quiet=True, heartbeat=0.2) as h:
        h.add("env", ClockEnv, params={"steps": 2}, inputs={"action": "agent/action"},
              clock={"mode": "lockstep", "deadline": 1.5, "default_action": "timeout"})
        h.add("agent", ThinkingAgent, params={"think_s": 1.0}, inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        probe = h.probe(inputs={"log": LOG})
        await h.start()
        await asyncio.sleep(0.3)  # step 0's observation arrived; the agent thinks
        pid = h.pid("agent")
        os.kill(pid, signal.SIGSTOP)
        try:
            await asyncio.sleep(3.0)  # twice the deadline, cut off
        finally:
            os.kill(pid, signal.SIGCONT)
        steps, stats = await _logs(probe)
    assert [s["actions"] for s in steps] == [{"agent": {"t": 0}}, {"agent": {"t": 1}}]
    assert steps[0]["waited"] > 3.0  # the world stood still through the partition
    assert stats["timeouts"] == 0 and stats["stalls"] == 1 and stats["stalled_s"] > 1.0, stats

    async with Harness(quiet=True, heartbeat=0.2) as h:
        h.add("env", ClockEnv, params={"steps": 2}, inputs={"action": "agent/action"},
              clock={"mode": "lockstep", "deadline": 1.0, "default_action": "timeout"})
        h.add("agent", SilentAgent, inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        probe = h.probe(inputs={"log": LOG})
        await h.start()
        steps, stats = await _logs(probe)
    assert [s["actions"] for s in steps] == [{"agent": "timeout"}] * 2
    assert stats["timeouts"] == 2 and stats["stalls"] == 0, stats
