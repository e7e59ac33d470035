"""A node written from docs/protocol.md alone (tests/foreign_node.py: zmq + msgpack, no framebus
package) joins a real graph next to Python nodes: the doc is enough to implement the protocol."""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kernel.sdk.node import RemoteError
from kernel.testing import Harness
from tests.helpers import until

FOREIGN = [sys.executable, str(Path(__file__).with_name("foreign_node.py"))]


def add_foreign(h: Harness, **inputs) -> None:
    h.add("foreign", "unused", cmd=FOREIGN, inputs=inputs or None)


async def test_foreign_node_serves_requests():
    async with Harness(quiet=True) as h:
        add_foreign(h)
        probe = h.probe()
        await h.start()
        assert await probe.request("foreign", "upper", "hello, bus") == "HELLO, BUS"
        with pytest.raises(RemoteError, match="upper needs a string"):
            await probe.request("foreign", "upper", 42)
        with pytest.raises(RemoteError, match="no service 'nope'"):
            await probe.request("foreign", "nope", "x")


async def test_foreign_node_echoes_data_with_its_step():
    async with Harness(quiet=True) as h:
        add_foreign(h, **{"in": "probe/out"})
        probe = h.probe(inputs={"back": "foreign/out"}, outputs=["out"])
        await h.start()
        await probe.publish("out", {"text": "hi", "n": [1, 2]}, step=7)
        msg = await asyncio.wait_for(probe.recv("back"), 5)
        assert msg.src == "foreign" and msg.topic == "out"
        assert msg.step == 7
        assert msg.body == {"echo": {"text": "hi", "n": [1, 2]}}

        # array frames pass through a node that never interprets them
        image = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        await probe.publish("out", {"image": image, "mask": np.array([True, False])}, step=8)
        msg = await asyncio.wait_for(probe.recv("back"), 5)
        assert msg.step == 8
        np.testing.assert_array_equal(msg.body["echo"]["image"], image)
        assert msg.body["echo"]["image"].dtype == np.float32
        np.testing.assert_array_equal(msg.body["echo"]["mask"], [True, False])


async def test_foreign_node_honours_block_credits_both_ways_and_reports_stats():
    n = 30
    async with Harness(quiet=True) as h:
        add_foreign(h, **{"in": {"from": "probe/out", "policy": "block", "size": 2}})
        probe = h.probe(inputs={"back": {"from": "foreign/out", "policy": "block", "size": 2}}, outputs=["out"])
        await h.start()
        # the probe can only run n - 2 messages ahead if the foreign node returns credits
        for i in range(n):
            await asyncio.wait_for(probe.publish("out", i, step=i), 5)
        got = [(await asyncio.wait_for(probe.recv("back"), 5)) for _ in range(n)]
        assert [m.body for m in got] == [{"echo": i} for i in range(n)]
        assert [m.step for m in got] == list(range(n))
        await asyncio.sleep(0.6)  # taps and a heartbeat carry the counts to the kernel
        edges = {e["edge"]: e for e in h.kernel.stats()["edges"]}
        assert edges["foreign/out -> probe/back"]["sent"] == n
        assert edges["probe/out -> foreign/in"]["received"] == n
        assert edges["probe/out -> foreign/in"]["dropped"] == 0


async def test_stopping_the_harness_ends_the_foreign_process():
    h = Harness(quiet=True)
    add_foreign(h, **{"in": "probe/out"})
    h.probe(outputs=["out"])
    try:
        await h.start()
        assert h.supervisor.procs["foreign"].process.returncode is None
        t0 = time.monotonic()
    finally:
        await h.stop()  # Harness.stop is not idempotent, so no `async with` here
        shutil.rmtree(h.run_dir, ignore_errors=True)
    # exit code 0 within the stop grace period: it left on `stop`, not on SIGTERM/SIGKILL
    assert h.supervisor.procs["foreign"].exit_code == 0
    assert time.monotonic() - t0 < 2.0
    assert h.kernel.nodes["foreign"].state == "stopped"


async def test_foreign_node_exits_when_the_kernel_goes_silent():
    # no probe here: the probe runs inside this test process and would os._exit on the same silence
    async with Harness(quiet=True, grace=3.0) as h:  # the welcome's grace: how long silence is borne
        add_foreign(h)
        await h.start()
        h.kernel._hb_task.cancel()  # the kernel stops talking, as if it had hung
        t0 = time.monotonic()
        process = h.supervisor.procs["foreign"].process
        code = await asyncio.wait_for(process.wait(), 10)
        assert code == 75
        assert 2.5 < time.monotonic() - t0 < 6.0


BROKEN_HELLO = """
import os, sys, time
import msgpack, zmq
node = os.environ["FRAMEBUS_NODE_ID"]
sock = zmq.Context().socket(zmq.DEALER)
sock.setsockopt(zmq.IDENTITY, node.encode())
sock.setsockopt(zmq.LINGER, 0)
sock.connect(os.environ["FRAMEBUS_KERNEL"])
header = {"v": 1, "k": "ctl", "src": node, "dst": "kernel", "topic": "hello", "seq": 0, "ts": time.time()}
# pid as a string, and no inbox: a peer that read the protocol wrong
sock.send_multipart([msgpack.packb(header), msgpack.packb({"pid": str(os.getpid()), "inputs": [], "outputs": []})])
if sock.poll(20000):
    frames = sock.recv_multipart()
    print(msgpack.unpackb(frames[0])["topic"], msgpack.unpackb(frames[1]).get("error"), flush=True)
sys.exit(2)
"""


async def test_a_malformed_hello_is_refused_naming_the_field(tmp_path):
    """The kernel checks a hello against its structure (kernel.bus.messages) and answers a node
    that got it wrong with a reject saying which fields, rather than a traceback or silence."""
    script = tmp_path / "broken_hello.py"
    script.write_text(BROKEN_HELLO)
    async with Harness(quiet=True, run_dir=tmp_path / "run") as h:
        h.add("broken", "unused", cmd=[sys.executable, str(script)])
        starting = asyncio.ensure_future(h.start(ready_timeout=30))  # never ready: the kernel fails the run
        try:
            assert await until(lambda: hasattr(h, "kernel"))
            status, reason = await h.wait_finished(30)
        finally:
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
        assert status == "failed"
        assert "hello body refused" in reason and "pid:" in reason and "inbox:" in reason, reason
        assert h.kernel.nodes["broken"].state == "failed"
        log = h.run_dir / "logs" / "broken.log"
        assert await until(lambda: log.exists() and "reject hello body refused" in log.read_text()), \
            log.read_text() if log.exists() else "no log"
        assert "pid:" in log.read_text()
