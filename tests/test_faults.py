"""Bad input on the wire: malformed and oversized messages are dropped and counted, never fatal;
and `launch stats` shows a running graph's traffic."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time

import msgpack
import numpy as np
import pytest
import zmq

from kernel.bus import protocol
from kernel.bus.protocol import MessageTooLarge
from kernel.sdk.node import RemoteError
from kernel.testing import Harness
from kernel.tools.client import KernelClient
from tests.helpers import LONG_HELLO, announced, launch, launch_bg, wait_until
from tests.nodes import Chatter, Emitter, Services, SlowSink


def _header(**fields) -> bytes:
    return msgpack.packb({"v": protocol.PROTOCOL_VERSION, "src": "intruder", "seq": 1, "ts": 0.0, **fields})


BAD_MESSAGES = {
    "header not msgpack": [b"\xc1\xc1 not msgpack", msgpack.packb(None)],
    "header not a map": [msgpack.packb([1, 2, 3]), msgpack.packb(None)],
    "wrong protocol version": [msgpack.packb({"v": 99, "k": "req", "src": "intruder", "topic": "echo", "cid": 1}),
                               msgpack.packb("hi")],
    "unknown kind": [_header(k="gossip", topic="echo"), msgpack.packb(None)],
    "arrays missing": [_header(k="req", topic="echo", cid=2, arr=[["|u1", [4]]]), msgpack.packb({"a": 1})],
    "body not msgpack": [_header(k="req", topic="echo", cid=3), b"\xc1\xc1\xc1"],
    "single frame": [_header(k="req", topic="echo", cid=4)],
    # an array said to be in shared memory: a path out of the shm folder, and a segment that does not exist
    "shared-memory path escape": [
        _header(k="req", topic="shape", cid=5, arr=[["|u1", [4], {"shm": "../../etc/passwd", "off": 0, "slot": 0}]]),
        msgpack.packb({"a": msgpack.ExtType(1, msgpack.packb(0))})],
    "shared-memory segment missing": [
        _header(k="req", topic="shape", cid=6, arr=[["|u1", [4], {"shm": "fb-no-such-segment", "off": 0, "slot": 0}]]),
        msgpack.packb({"a": msgpack.ExtType(1, msgpack.packb(0))})],
}


def _dealer(endpoint: str, identity: bytes = b"intruder") -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.IDENTITY, identity)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    return sock


async def _recv_or_none(sock: zmq.Socket, timeout: float) -> list[bytes] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sock.poll(0):
            return sock.recv_multipart()
        await asyncio.sleep(0.02)
    return None


async def _decode_errors(h: Harness, node: str, expected: int, timeout: float = 5.0) -> dict:
    """The node's decode_errors as the kernel last heard them (heartbeats), once they reach ``expected``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        errors = h.kernel.nodes[node].stats.get("decode_errors", {})
        if sum(errors.values()) >= expected:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # a few more heartbeats: nothing else gets counted
    return h.kernel.nodes[node].stats.get("decode_errors", {})


async def test_malformed_frames_are_dropped_counted_and_the_node_keeps_serving():
    async with Harness(quiet=True, heartbeat=0.2) as h:
        h.add("svc", Services)
        probe = h.probe()
        await h.start()
        sock = _dealer(h.kernel.nodes["svc"].inbox)
        try:
            # the raw socket does reach the node: a well-formed request gets its reply
            sock.send_multipart(protocol.encode("req", "intruder", "echo", "hello", dst="svc", cid=100))
            reply = await _recv_or_none(sock, 5.0)
            assert reply is not None, "the raw socket could not reach the node"
            assert protocol.decode(reply).body == "hello"

            for frames in BAD_MESSAGES.values():
                sock.send_multipart(frames)
            # nothing comes back for garbage (not even the requests among it)
            assert await _recv_or_none(sock, 0.5) is None
            # the node still serves, over the raw socket and through the SDK
            sock.send_multipart(protocol.encode("req", "intruder", "echo", [1, 2], dst="svc", cid=101))
            reply = await _recv_or_none(sock, 5.0)
            assert reply is not None and protocol.decode(reply).body == [1, 2]
            assert await probe.request("svc", "echo", {"still": "alive"}) == {"still": "alive"}
        finally:
            sock.close(linger=0)

        errors = await _decode_errors(h, "svc", len(BAD_MESSAGES))
        assert errors == {"intruder": len(BAD_MESSAGES)}, errors
        assert h.kernel.stats()["decode_errors"] == {"svc": {"intruder": len(BAD_MESSAGES)}}
        assert h.kernel.nodes["svc"].state == "running"
        assert not h.exits  # no node died


async def test_oversized_messages_fail_on_the_sender_and_are_dropped_by_the_receiver():
    limit = 64 * 1024
    async with Harness(quiet=True, heartbeat=0.2, max_message_bytes=limit) as h:
        h.add("src", Emitter)
        h.add("sink", SlowSink, inputs={"in": {"from": ["src/out", "probe/big"], "policy": "fifo", "size": 100}})
        h.add("svc", Services)
        probe = h.probe(outputs=["big"])
        await h.start()

        # the sender's own publish refuses, with an error that names the limit
        with pytest.raises(MessageTooLarge, match=f"at most {limit}.*max_message_bytes"):
            await probe.publish("big", {"a": np.zeros(limit + 1, np.uint8)})
        with pytest.raises(MessageTooLarge, match=str(limit)):
            await probe.request("svc", "echo", b"x" * (limit + 1))
        # in a node process: its service fails with the same error, and the node goes on
        with pytest.raises(RemoteError, match=f"MessageTooLarge.*at most {limit}"):
            await probe.request("src", "emit", {"n": 1, "array_bytes": limit + 1})
        assert await probe.request("src", "emit", {"n": 3, "array_bytes": 1000}) == 3
        assert await probe.request("svc", "shape", {"a": np.zeros((100, 100), np.uint8)}) == [100, 100]
        assert await probe.request("src", "emit", {"n": 2}) == 2
        await asyncio.sleep(0.3)
        assert await probe.request("sink", "seen") == [0, 1, 2, 0, 1]  # the oversized message never left

        # a message over the limit that arrives anyway (from a peer with another limit) is dropped
        sock = _dealer(h.kernel.nodes["svc"].inbox)
        try:
            big = np.zeros(limit * 2, np.uint8)
            sock.send_multipart(protocol.encode("req", "intruder", "shape", {"a": big}, dst="svc", cid=1))
            sock.send_multipart(protocol.encode("req", "intruder", "echo", b"y" * (limit + 10), dst="svc", cid=2))
            assert await _recv_or_none(sock, 0.5) is None
            sock.send_multipart(protocol.encode("req", "intruder", "echo", "small", dst="svc", cid=3))
            reply = await _recv_or_none(sock, 5.0)
            assert reply is not None and protocol.decode(reply).body == "small"
        finally:
            sock.close(linger=0)
        assert await probe.request("svc", "echo", 1) == 1
        errors = await _decode_errors(h, "svc", 2)
        assert errors == {"intruder": 2}, errors
        assert not h.exits


EDGES = ["agent/action -> env/action", "env/obs -> agent/obs", "env/step -> judge/step"]


def _json(*args: str) -> dict:
    result = launch(*args, timeout=30)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_launch_stats_shows_every_edge_of_a_running_graph(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich tables: do not wrap edge names
    run_dir = tmp_path / "run"
    proc = launch_bg("run", *LONG_HELLO, "--set", "agent.think_s=0.01", "--out", str(run_dir))
    try:
        assert wait_until(lambda: announced(run_dir) is not None, 60), "the graph never announced itself"

        def traffic() -> bool:
            edges = _json("stats", "--run", str(run_dir), "--json")["edges"]
            return all(e["sent"] >= 20 and e["received"] >= 20 for e in edges)

        assert wait_until(traffic, 30)

        table = launch("stats", "--run", str(run_dir), timeout=30)
        assert table.returncode == 0, table.stderr
        for header in ("edge", "policy", "sent", "received", "dropped", "queued"):
            assert header in table.stdout
        lines = {e: next((ln for ln in table.stdout.splitlines() if e in ln), None) for e in EDGES}
        assert all(lines.values()), table.stdout
        for line in lines.values():
            assert len([c for c in line.replace("│", " ").split() if c.isdigit()]) == 4, line

        # a paused graph is quiet: then every message sent was received, and none was dropped
        _json("ctl", "pause", "--run", str(run_dir))
        time.sleep(1.5)
        stats = _json("stats", "--run", str(run_dir), "--json")
        assert sorted(e["edge"] for e in stats["edges"]) == EDGES
        by_edge = {e["edge"]: e for e in stats["edges"]}
        assert by_edge["env/obs -> agent/obs"]["policy"] == "latest"
        assert by_edge["env/step -> judge/step"]["policy"] == "block"
        for e in stats["edges"]:
            assert e["sent"] == e["received"] > 0, e
            assert e["dropped"] == 0, e
        assert stats["decode_errors"] == {}
        _json("ctl", "stop", "--run", str(run_dir))
        assert proc.wait(timeout=30) == 0, proc.output()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "stopped"
    assert sorted(e["edge"] for e in summary["stats"]["edges"]) == EDGES


STALL_S = 26.0  # the kernel reads nothing this long: a node heartbeating every 2 ms fills its queue in ~3 s
THINK_S = 1.6  # the agent's time per decision: the first episode (6 steps) ends ~8 s into the stall


def test_a_node_whose_kernel_reads_nothing_keeps_serving_and_loses_nothing_it_must_say(tmp_path):
    """The launcher (the kernel) is stopped with SIGSTOP while a run heartbeats every 2 ms, so each
    node's queue of control messages to the kernel fills up. Before, the node's next heartbeat then
    blocked its event loop until the kernel read again: it stopped answering its inbox. Now it still
    answers; it skips and counts the heartbeats that find no room, and what it must say (the first
    episode ends during the stall: the judge's end of it, the env's ask for the next) waits in order
    in its memory.
    Once the kernel is back, the run completes with every episode."""
    run_dir = tmp_path / "run"
    proc = launch_bg("run", "hello.yaml", "--episodes", "2", "--set", "bus.heartbeat=0.002",
                     "--set", "env.target=6", "--set", f"agent.think_s={THINK_S}", "--out", str(run_dir))
    asker = None
    try:
        assert wait_until(lambda: announced(run_dir) is not None, 60), proc.output()
        endpoint = announced(run_dir)["endpoint"]
        with KernelClient(endpoint, timeout=20.0) as poll:
            # The first episode must be in play when the kernel stops, not merely started: under load
            # the env's first ask for an episode may still be unanswered, and then the whole episode
            # waits out the stall with nothing to say (no ctl_waited). The env's clock counts its
            # decisions; one is enough.
            assert wait_until(lambda: (poll.call("status")["nodes"]["env"]["clock"] or {}).get("decisions", 0) >= 1,
                              60, 0.05), proc.output()
            inbox = poll.call("status")["nodes"]["env"]["inbox"]
        asker = _dealer(inbox, b"asker")
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            cid = 0
            while time.monotonic() - started < STALL_S:
                cid += 1
                asker.send_multipart(protocol.encode(protocol.REQ, "asker", "spaces", None, dst="env", cid=cid))
                assert asker.poll(3000), f"env stopped answering {time.monotonic() - started:.1f} s into the stall"
                assert protocol.decode(asker.recv_multipart()).cid == cid
                time.sleep(0.5)
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        assert proc.wait(timeout=90) == 0, proc.output()
    finally:
        if asker is not None:
            asker.close(linger=0)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait(timeout=10)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "completed", summary["reason"]
    assert summary["episodes"] == {"total": 2, "completed": 2, "failed": 0}
    # the queue was full (else no heartbeat would be skipped) when the episode's end had to be said
    assert summary["stats"]["ctl_dropped"]["env"]["hb"] > 0, summary["stats"]
    assert summary["stats"]["ctl_waited"]["env"] >= 1 and summary["stats"]["ctl_waited"]["judge"] >= 1, summary["stats"]


async def test_a_request_to_a_peer_that_reads_nothing_fails_at_once_and_the_caller_keeps_serving():
    """src published to sink until its queue to sink was full (sink is stopped: it reads nothing),
    then asks sink something. Before, that request's send blocked src's event loop until sink read
    again: src answered nobody. Now the request fails at once with the reason, src keeps serving,
    the refusal is counted (``backed_up``), and once sink is back src's requests go through again."""
    async with Harness(quiet=True) as h:
        h.add("src", Chatter)
        h.add("sink", SlowSink, inputs={"in": {"from": "src/out", "policy": "fifo", "size": 100}})
        probe = h.probe()
        await h.start()
        ask = {"node": "sink", "svc": "seen"}
        assert await probe.request("src", "ask", ask, timeout=30) == []  # src's connection to sink is up
        sink = h.pid("sink")
        os.kill(sink, signal.SIGSTOP)
        try:
            for _ in range(10):  # until src's sends to sink drop: its queue to sink is full
                await probe.request("src", "emit", {"n": 20000}, timeout=120)
                await asyncio.sleep(0.3)  # a heartbeat carries src's counters
                if h.kernel.nodes["src"].stats.get("send_dropped", {}).get("out->sink"):
                    break
            else:
                pytest.fail("src's queue to the stopped sink never filled")
            started = time.monotonic()
            with pytest.raises(RemoteError, match="stopped, hung or cut off"):
                await probe.request("src", "ask", ask, timeout=20)
            assert time.monotonic() - started < 5
            assert await probe.request("src", "echo", {"still": "here"}, timeout=5) == {"still": "here"}
            await asyncio.sleep(0.3)
            assert h.kernel.nodes["src"].stats["backed_up"] == {"sink": 1}
        finally:
            os.kill(sink, signal.SIGCONT)
        assert await _ask_until_answered(probe, ask) == "answered"


async def _ask_until_answered(probe, ask: dict, within: float = 60.0) -> str:
    """Ask until sink, working through what queued up for it while stopped, answers src."""
    deadline = time.monotonic() + within
    while True:
        try:
            await probe.request("src", "ask", ask, timeout=30)
            return "answered"
        except RemoteError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)
