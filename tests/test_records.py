"""Records (an environment's ``step``) travel in small batches to nodes that read nothing else of
their sender, and at once to the ones that decide on what they get (docs/protocol.md, 3.1)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from kernel.testing import Harness

# Long enough that a record left waiting for its timer would show: the run would end that much later.
SLOW = 20.0


def _walk(h: Harness) -> None:
    """The hello graph's walker and its rule-based agent (episodes of a few steps)."""
    h.add("env", "hello.env", params={"length": 8, "max_steps": 20}, inputs={"action": "agent/action"},
          clock={"mode": "lockstep"})
    h.add("agent", "hello.agent", inputs={"obs": {"from": "env/obs", "policy": "latest"}})


async def _stats(h: Harness, node: str, done: Callable[[dict[str, Any], int], bool]) -> dict[str, Any]:
    """A node's counters once the kernel has heard them after the last step (a heartbeat or its bye)."""
    await h.wait_finished(60)
    steps = sum(int(r["metrics"]["steps"]) for r in h.kernel.book.records.values())
    deadline = time.monotonic() + 10
    while not done(h.kernel.nodes[node].stats, steps) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return h.kernel.nodes[node].stats


async def _env_stats(h: Harness) -> dict[str, Any]:
    return await _stats(h, "env", lambda s, steps: s.get("sent", {}).get("step", 0) >= steps)


async def test_a_judge_gets_every_step_in_order_in_batches_and_each_episode_ends_without_waiting():
    episodes = 8
    async with Harness(quiet=True, episodes=episodes, records_delay=SLOW) as h:
        _walk(h)
        h.add("judge", "hello.judge",
              inputs={"step": {"from": "env/step", "policy": "block", "size": 64}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo", "size": 1000}})
        await h.start(run=False)
        t = time.perf_counter()
        h.kernel.start()
        status, reason = await h.wait_finished(60)
        seconds = time.perf_counter() - t
        assert status == "completed", reason
        stats = await _env_stats(h)
        judge = await _stats(h, "judge", lambda s, steps: bool(s.get("inputs", {}).get("step")) and
                             s["inputs"]["step"]["env/step"]["received"] >= steps)
        records = list(h.kernel.book.records.values())
        seen = []
        while (msg := probe.recv_nowait("step")) is not None:
            seen.append((msg.seq, msg.body["episode"], msg.body["t"]))
    steps = sum(int(r["metrics"]["steps"]) for r in records)
    assert len(records) == episodes and all(r["status"] == "completed" for r in records)
    # Every step record was held for the judge and the probe (they read nothing else of the env),
    # none was lost, and they came in the order they were published.
    assert stats["records_batched"] == 2 * stats["sent"]["step"] == 2 * steps
    assert len(seen) == steps and [s[0] for s in seen] == sorted(s[0] for s in seen)
    by_episode: dict[str, list[int]] = {}
    for _, episode, t in seen:
        by_episode.setdefault(episode, []).append(t)
    assert len(by_episode) == episodes and all(ts == list(range(len(ts))) for ts in by_episode.values())
    assert not stats["send_dropped"]
    assert judge["inputs"]["step"] == {"env/step": {"received": steps, "dropped": 0}}
    # The env's request for the next episode sent what it held: the last steps did not wait for the
    # timer (they would have: the kernel answers that request once the judge has ended every episode).
    assert seconds < SLOW / 2, f"{episodes} episodes took {seconds:.1f} s"


async def test_a_node_that_reads_the_observations_gets_each_step_at_once():
    async with Harness(quiet=True, episodes=1, records_delay=SLOW) as h:
        h.add("env", "tests.toy_env:GuessEnv", params={"size": 4, "max_steps": 3, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": {"from": "env/step", "policy": "fifo", "size": 64}},
                        outputs=["action"])
        await h.start()
        for t in range(3):
            await probe.recv("obs")
            await probe.publish("action", "0", step=t)
            began = time.perf_counter()
            step = (await probe.recv("step")).body
            assert step["t"] == t and time.perf_counter() - began < SLOW / 2
        stats = await _env_stats(h)
    assert stats["records_batched"] == 0 and stats["sent"]["step"] == 3


async def test_a_latest_input_and_a_small_window_get_every_record_at_once():
    async with Harness(quiet=True, episodes=2, records_delay=SLOW) as h:
        _walk(h)
        h.add("judge", "hello.judge",
              inputs={"step": {"from": "env/step", "policy": "block", "size": 4}})
        h.probe(inputs={"step": {"from": "env/step", "policy": "latest"}})
        await h.start()
        status, reason = await h.wait_finished(60)
        assert status == "completed", reason
        stats = await _env_stats(h)
    assert stats["records_batched"] == 0 and not stats["send_dropped"]


async def test_records_delay_zero_sends_each_record_at_once():
    async with Harness(quiet=True, episodes=2, records_delay=0) as h:
        _walk(h)
        h.add("judge", "hello.judge",
              inputs={"step": {"from": "env/step", "policy": "block", "size": 64}})
        await h.start()
        status, reason = await h.wait_finished(60)
        assert status == "completed", reason
        stats = await _env_stats(h)
    assert stats["records_batched"] == 0 and stats["sent"]["step"] >= 2
