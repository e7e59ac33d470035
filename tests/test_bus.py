"""Streams and requests over real sockets between real processes."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from kernel.sdk.node import RemoteError, RequestTimeout
from kernel.testing import Harness
from tests.nodes import Emitter, Services, SlowSink


async def test_fan_out_reaches_every_wired_input():
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("a", SlowSink, inputs={"in": {"from": "src/out", "policy": "fifo", "size": 100}})
        h.add("b", SlowSink, inputs={"in": {"from": "src/out", "policy": "fifo", "size": 100}})
        probe = h.probe()
        await h.start()
        assert await probe.request("src", "emit", {"n": 50}) == 50
        await asyncio.sleep(0.5)
        assert await probe.request("a", "seen") == list(range(50))
        assert await probe.request("b", "seen") == list(range(50))


@pytest.mark.parametrize("policy,size", [("latest", 1), ("fifo", 5)])
async def test_lossy_policies_count_every_drop(policy, size):
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("sink", SlowSink, params={"sleep_s": 0.05}, inputs={"in": {"from": "src/out", "policy": policy, "size": size}})
        probe = h.probe()
        await h.start()
        await probe.request("src", "emit", {"n": 40})
        await asyncio.sleep(1.5)
        seen = await probe.request("sink", "seen")
        await asyncio.sleep(0.5)  # one more heartbeat carries the final counts
        edge = h.kernel.stats()["edges"][0]
        assert edge["sent"] == 40
        assert edge["received"] == 40
        assert edge["dropped"] == 40 - len(seen) > 0
        assert seen[-1] == 39  # the newest always survives
        if policy == "fifo":
            assert seen == sorted(seen)


async def test_block_policy_applies_back_pressure_and_never_drops():
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("sink", SlowSink, params={"sleep_s": 0.02}, inputs={"in": {"from": "src/out", "policy": "block", "size": 2}})
        probe = h.probe()
        await h.start()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await probe.request("src", "emit", {"n": 30}, timeout=30)
        elapsed = loop.time() - t0
        # the sender could only run ahead of the slow consumer by the queue size
        assert elapsed > 27 * 0.02 * 0.8
        await asyncio.sleep(0.3)
        assert await probe.request("sink", "seen") == list(range(30))
        await asyncio.sleep(0.4)
        assert h.kernel.stats()["edges"][0]["dropped"] == 0


async def test_requests_reply_time_out_and_report_errors():
    async with Harness(quiet=True) as h:
        h.add("svc", Services)
        probe = h.probe()
        await h.start()
        assert await probe.request("svc", "echo", {"x": [1, 2]}) == {"x": [1, 2]}
        with pytest.raises(RequestTimeout, match="svc.slow"):
            await probe.request("svc", "slow", 2.0, timeout=0.3)
        with pytest.raises(RemoteError, match="boom on purpose"):
            await probe.request("svc", "boom")
        with pytest.raises(RemoteError, match="no service 'nope'.*echo"):
            await probe.request("svc", "nope")
        frame = np.zeros((720, 1280, 3), np.uint8)
        assert await probe.request("svc", "shape", {"a": frame}) == [720, 1280, 3]
        # the node is still serving after all that
        assert await probe.request("svc", "echo", 7) == 7


async def test_a_rate_thins_at_the_sender_and_the_reader_ends_on_the_newest():
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("all", SlowSink, inputs={"in": {"from": "src/out", "policy": "fifo", "size": 5000}})
        h.add("watch", SlowSink, inputs={"in": {"from": "src/out", "policy": "latest", "rate": 10}})
        probe = h.probe()
        await h.start()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await probe.request("src", "emit", {"n": 3000}, timeout=30)
        elapsed = loop.time() - t0
        await asyncio.sleep(0.5)  # the newest goes at the next slot, and a heartbeat brings the counts
        assert await probe.request("all", "seen") == list(range(3000))
        seen = await probe.request("watch", "seen")
        assert seen[0] == 0 and seen[-1] == 2999  # the first at once, the newest last
        assert len(seen) <= 2 + 10 * (elapsed + 0.1), (len(seen), elapsed)
        edges = {e["edge"]: e for e in h.kernel.stats()["edges"]}
        watched = edges["src/out -> watch/in"]
        assert watched["sent"] == watched["received"] == len(seen)
        assert watched["thinned"] == 3000 - len(seen) and watched["dropped"] == 0
        assert "thinned" not in edges["src/out -> all/in"]
