"""The least two processes can spend passing one decision (a request out, a small reply back) over
ZeroMQ on this machine, now: the floor the step benches set the bus against, measured in their run.

Two floors, because a node is an event-loop process:

* ``blocking``: both sides block in ``recv``; the kernel wakes the reader straight out of the
  socket's poll. Nothing that also serves timers, services and other inputs can wait this way.
* ``loop``: both sides wait in a uvloop event loop that watches the socket's file descriptor and
  drains it without blocking, as a node's runtime does, and nothing else: no headers, credits,
  taps or clock. A bus step sits above this one only by what framebus itself does per message.

The echo decodes the request's first frame with msgpack (as a node decodes a header) and replies a
short msgpack map, so the payload's cost is in both floors.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import shutil
import statistics
import tempfile
import time
from typing import Any

import msgpack
import zmq

WARMUP = 200
REPLY = {"action": "noop"}


class _Readable:
    """Await a ZeroMQ socket's next multipart message on the running loop, without blocking it."""

    def __init__(self, sock: zmq.Socket, loop: asyncio.AbstractEventLoop) -> None:
        self.sock, self.loop = sock, loop
        self.waiter: asyncio.Future[None] | None = None
        loop.add_reader(sock.getsockopt(zmq.FD), self._wake)

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def recv(self) -> list[bytes]:
        while True:
            try:
                return self.sock.recv_multipart(zmq.NOBLOCK)
            except zmq.Again:
                pass
            # the descriptor is edge-triggered: look at the socket's events before sleeping on it
            self.waiter = self.loop.create_future()
            if self.sock.getsockopt(zmq.EVENTS) & zmq.POLLIN:
                continue
            await self.waiter


def _run_loop(main: Any) -> None:
    try:
        import uvloop

        uvloop.run(main)
    except ImportError:
        asyncio.run(main)


def _echo(endpoint: str, loop: bool, ready: Any) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    ready.set()
    reply = msgpack.packb(REPLY)
    if not loop:
        while True:
            frames = sock.recv_multipart()
            if frames[-1] == b"quit":
                return
            msgpack.unpackb(frames[1])
            sock.send_multipart([frames[0], reply])

    async def serve() -> None:
        readable = _Readable(sock, asyncio.get_running_loop())
        while True:
            frames = await readable.recv()
            if frames[-1] == b"quit":
                return
            msgpack.unpackb(frames[1])
            sock.send_multipart([frames[0], reply], zmq.NOBLOCK)

    _run_loop(serve())


def round_trips(request: list[Any], n: int, *, loop: bool) -> list[float]:
    """Seconds per round trip of ``request`` (a list of frames; the first is msgpack) to an echo in
    another process, ``n`` of them after a warm-up; ``loop`` picks the event-loop floor."""
    tmp = tempfile.mkdtemp(prefix="fbfloor-", dir="/tmp")
    endpoint = f"ipc://{tmp}/echo.sock"
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=_echo, args=(endpoint, loop, ready), daemon=True)
    proc.start()
    ready.wait()
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(endpoint)
    lat: list[float] = []
    try:
        if not loop:
            for i in range(n + WARMUP):
                t = time.perf_counter()
                sock.send_multipart(request, copy=False)
                msgpack.unpackb(sock.recv())
                if i >= WARMUP:
                    lat.append(time.perf_counter() - t)
        else:
            async def ask() -> None:
                readable = _Readable(sock, asyncio.get_running_loop())
                for i in range(n + WARMUP):
                    t = time.perf_counter()
                    sock.send_multipart(request, zmq.NOBLOCK, copy=False)
                    msgpack.unpackb((await readable.recv())[0])
                    if i >= WARMUP:
                        lat.append(time.perf_counter() - t)

            _run_loop(ask())
    finally:
        sock.send_multipart([b"quit"])
        proc.join(5)
        sock.close(0)
        shutil.rmtree(tmp, ignore_errors=True)
    return lat


def p50_us(request: list[Any], n: int, *, loop: bool) -> float:
    return statistics.median(round_trips(request, n, loop=loop)) * 1e6
