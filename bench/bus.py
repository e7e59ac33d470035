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
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import zmq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernel.bus.shm import shm_dir  # noqa: E402
from kernel.sdk.node import Message, Node, on_input, service  # noqa: E402
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


class RawPeers:
    """The raw pyzmq side: an echo server and a frame sink, each its own process."""

    def __init__(self, tmp: str) -> None:
        ctx = mp.get_context("spawn")
        ready_echo, ready_sink = ctx.Event(), ctx.Event()
        self.results = ctx.Queue()
        self.echo = ctx.Process(target=raw_echo_server, args=(f"ipc://{tmp}/rtt.sock", ready_echo), daemon=True)
        self.sink = ctx.Process(target=raw_frame_sink, args=(f"ipc://{tmp}/hop.sock", ready_sink, self.results),
                                daemon=True)
        self.echo.start()
        self.sink.start()
        ready_echo.wait()
        ready_sink.wait()
        zctx = zmq.Context.instance()
        self.rtt = zctx.socket(zmq.DEALER)
        self.rtt.connect(f"ipc://{tmp}/rtt.sock")
        self.hop = zctx.socket(zmq.DEALER)
        self.hop.connect(f"ipc://{tmp}/hop.sock")

    def small_rtt(self, n: int) -> list[float]:
        lat = []
        for _ in range(n):
            t = time.perf_counter()
            self.rtt.send_multipart([msgpack.packb({"ts": time.time()}), SMALL])
            self.rtt.recv_multipart()
            lat.append(time.perf_counter() - t)
        return lat

    def frame_hop(self, n: int, frame: np.ndarray) -> None:
        for _ in range(n):
            self.hop.send_multipart([msgpack.packb({"ts": time.time(), "shape": list(SHAPE)}), frame], copy=False)
            self.hop.recv()

    def close(self) -> list[float]:
        self.rtt.send_multipart([b"", b"quit"])
        self.hop.send_multipart([msgpack.packb({"quit": True})])
        latencies = self.results.get()
        self.echo.join(5)
        self.sink.join(5)
        self.rtt.close(0)
        self.hop.close(0)
        return latencies


async def measure(args: argparse.Namespace, frame: np.ndarray, tmp: str) -> dict[str, list[float]]:
    """Alternate short blocks of raw and framebus traffic, so the drifts of a noisy machine
    (its p50 moves by 2x from one second to the next here) hit both sides alike."""
    raw = RawPeers(tmp)
    out: dict[str, list[float]] = {"raw_rtt": [], "fb_rtt": [], "raw_hop": [], "fb_hop": []}
    async with Harness(quiet=True) as h:
        h.add("echo", "bench.bus:Echo")
        h.add("sink", "bench.bus:FrameSink", inputs={"frame": {"from": "probe/frame", "policy": "fifo", "size": 4}})
        probe = h.probe(inputs={"ack": "sink/ack"}, outputs=["frame"])
        await h.start()
        for _ in range(100):  # warm up both sides
            await probe.request("echo", "echo", SMALL)
        raw.small_rtt(100)
        for _ in range(5):
            await probe.publish("frame", {"img": frame})
            await probe.recv("ack")
        raw.frame_hop(5, frame)
        await probe.request("sink", "latencies")
        for _ in range(args.blocks):
            out["raw_rtt"] += raw.small_rtt(args.rtt_n)
            for _ in range(args.rtt_n):
                t = time.perf_counter()
                await probe.request("echo", "echo", SMALL)
                out["fb_rtt"].append(time.perf_counter() - t)
            raw.frame_hop(args.frames, frame)
            for _ in range(args.frames):
                await probe.publish("frame", {"img": frame})
                await probe.recv("ack")
        out["fb_hop"] = (await probe.request("sink", "latencies"))
    out["raw_hop"] = raw.close()[5:]
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--blocks", type=int, default=20, help="alternating raw/framebus blocks")
    parser.add_argument("--rtt-n", type=int, default=250, help="requests per block")
    parser.add_argument("--frames", type=int, default=20, help="frames per block")
    args = parser.parse_args()
    frame = np.random.default_rng(0).integers(0, 255, SHAPE, dtype=np.uint8)
    started = time.monotonic()
    # the raw sockets' ipc paths: /tmp keeps them short, and the folder goes when the bench ends
    with tempfile.TemporaryDirectory(prefix="fbbench-", dir="/tmp") as tmp:
        try:
            import uvloop

            results = uvloop.run(measure(args, frame, tmp))
        except ImportError:
            results = asyncio.run(measure(args, frame, tmp))
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
        "frame_path": "shared memory" if shm_dir() else "zeromq frames",
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
              f"{out['frame_hop_p99_us']:.0f} vs {out['raw_frame_hop_p99_us']:.0f} us; {out['frame_path']})")
        print(f"finished in {out['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
