"""Bus overhead, measured side by side in one run: framebus vs raw pyzmq on the same machine.

* small request round trip: 100 B body, framebus ``request`` to a node's service vs a raw
  DEALER -> ROUTER echo between two processes;
* frame hop: a 1280x720x3 uint8 frame from one process to another (one-way latency, ping-pong
  paced so queues stay empty), framebus ``publish`` vs raw pyzmq multipart with the same payload.

Ratios are what to read: absolute times on a shared 2-core VM move a lot between runs.

    python bench/bus.py [--json] [--rtt-n 3000] [--frames 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.node import Message, Node, on_input, service  # noqa: E402
from kernel.testing import Harness  # noqa: E402

SHAPE = (720, 1280, 3)
SMALL = b"x" * 100


# -- framebus peers (run as node processes) ------------------------------------------------------
class Echo(Node):
    @service("echo")
    def echo(self, body: Any) -> Any:
        return body


class FrameSink(Node):
    inputs = ("frame",)
    outputs = ("ack",)

    async def setup(self) -> None:
        self.latencies: list[float] = []

    @on_input("frame")
    async def got(self, msg: Message) -> None:
        self.latencies.append(time.time() - msg.ts)
        assert msg.body["img"].shape == SHAPE
        await self.publish("ack", msg.seq)

    @service("latencies")
    def report(self, body: Any) -> list[float]:
        out, self.latencies = self.latencies, []
        return out


# -- raw pyzmq peers ----------------------------------------------------------------------------
def raw_echo_server(endpoint: str, ready: Any) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    ready.set()
    while True:
        frames = sock.recv_multipart(copy=False)
        if frames[-1].bytes == b"quit":
            return
        sock.send_multipart(frames, copy=False)


def raw_frame_sink(endpoint: str, ready: Any, out: Any) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    ready.set()
    latencies = []
    while True:
        frames = sock.recv_multipart(copy=False)
        now = time.time()
        header = msgpack.unpackb(frames[1].buffer)
        if header.get("quit"):
            out.put(latencies)
            return
        img = np.frombuffer(frames[2].buffer, np.uint8).reshape(header["shape"])
        assert img.shape == SHAPE
        latencies.append(now - header["ts"])
        sock.send_multipart([frames[0], b"ack"])


def raw_small_rtt(n: int, endpoint: str) -> list[float]:
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    server = ctx.Process(target=raw_echo_server, args=(endpoint, ready))
    server.start()
    ready.wait()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(endpoint)
    lat = []
    for _ in range(n):
        t = time.perf_counter()
        sock.send_multipart([msgpack.packb({"ts": time.time()}), SMALL])
        sock.recv_multipart()
        lat.append(time.perf_counter() - t)
    sock.send_multipart([b"", b"quit"])
    server.join()
    sock.close(0)
    return lat


def raw_frame_hop(n: int, endpoint: str, frame: np.ndarray) -> list[float]:
    ctx = mp.get_context("spawn")
    ready, out = ctx.Event(), ctx.Queue()
    sink = ctx.Process(target=raw_frame_sink, args=(endpoint, ready, out))
    sink.start()
    ready.wait()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(endpoint)
    for _ in range(n):
        sock.send_multipart([msgpack.packb({"ts": time.time(), "shape": list(SHAPE)}), frame], copy=False)
        sock.recv()
    sock.send_multipart([msgpack.packb({"quit": True})])
    lat = out.get()
    sink.join()
    sock.close(0)
    return lat


# -- framebus side ------------------------------------------------------------------------------
async def framebus_small_rtt(n: int) -> list[float]:
    async with Harness(quiet=True) as h:
        h.add("echo", "bench.bus:Echo")
        probe = h.probe()
        await h.start()
        for _ in range(200):  # warm up connections
            await probe.request("echo", "echo", SMALL)
        lat = []
        for _ in range(n):
            t = time.perf_counter()
            await probe.request("echo", "echo", SMALL)
            lat.append(time.perf_counter() - t)
        return lat


async def framebus_frame_hop(n: int, frame: np.ndarray) -> list[float]:
    async with Harness(quiet=True) as h:
        h.add("sink", "bench.bus:FrameSink", inputs={"frame": {"from": "probe/frame", "policy": "fifo", "size": 4}})
        probe = h.probe(inputs={"ack": "sink/ack"}, outputs=["frame"])
        await h.start()
        for i in range(20):
            await probe.publish("frame", {"img": frame})
            await probe.recv("ack")
        await probe.request("sink", "latencies")
        for i in range(n):
            await probe.publish("frame", {"img": frame})
            await probe.recv("ack")
        return await probe.request("sink", "latencies")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rtt-n", type=int, default=3000)
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3, help="alternate raw and framebus this many times")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="fbbench-", dir="/tmp")
    frame = np.random.default_rng(0).integers(0, 255, SHAPE, dtype=np.uint8)
    results: dict[str, list[float]] = {"raw_rtt": [], "fb_rtt": [], "raw_hop": [], "fb_hop": []}
    started = time.monotonic()
    try:
        import uvloop

        run = uvloop.run
    except ImportError:
        run = asyncio.run
    # Interleave so that drifts of a noisy machine hit both sides alike.
    for r in range(args.rounds):
        results["raw_rtt"] += raw_small_rtt(args.rtt_n, f"ipc://{tmp}/rtt{r}.sock")[200:]
        results["fb_rtt"] += run(framebus_small_rtt(args.rtt_n))
        results["raw_hop"] += raw_frame_hop(args.frames, f"ipc://{tmp}/hop{r}.sock", frame)[20:]
        results["fb_hop"] += run(framebus_frame_hop(args.frames, frame))
    out = {
        "small_rtt_p50_us": round(pct(results["fb_rtt"], 0.5), 1),
        "small_rtt_p99_us": round(pct(results["fb_rtt"], 0.99), 1),
        "raw_small_rtt_p50_us": round(pct(results["raw_rtt"], 0.5), 1),
        "raw_small_rtt_p99_us": round(pct(results["raw_rtt"], 0.99), 1),
        "small_rtt_ratio": round(pct(results["fb_rtt"], 0.5) / pct(results["raw_rtt"], 0.5), 3),
        "frame_hop_p50_us": round(pct(results["fb_hop"], 0.5), 1),
        "frame_hop_p99_us": round(pct(results["fb_hop"], 0.99), 1),
        "raw_frame_hop_p50_us": round(pct(results["raw_hop"], 0.5), 1),
        "raw_frame_hop_p99_us": round(pct(results["raw_hop"], 0.99), 1),
        "frame_hop_ratio": round(pct(results["fb_hop"], 0.5) / pct(results["raw_hop"], 0.5), 3),
        "frame_bytes": int(frame.nbytes),
        "samples": {k: len(v) for k, v in results.items()},
        "seconds": round(time.monotonic() - started, 1),
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"small request RTT (100 B):  framebus p50 {out['small_rtt_p50_us']:.0f} us, raw pyzmq p50 "
              f"{out['raw_small_rtt_p50_us']:.0f} us  -> ratio {out['small_rtt_ratio']:.2f} (p99 "
              f"{out['small_rtt_p99_us']:.0f} vs {out['raw_small_rtt_p99_us']:.0f} us)")
        print(f"frame hop (1280x720x3):     framebus p50 {out['frame_hop_p50_us']:.0f} us, raw pyzmq p50 "
              f"{out['raw_frame_hop_p50_us']:.0f} us  -> ratio {out['frame_hop_ratio']:.2f} (p99 "
              f"{out['frame_hop_p99_us']:.0f} vs {out['raw_frame_hop_p99_us']:.0f} us)")
        print(f"finished in {out['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
