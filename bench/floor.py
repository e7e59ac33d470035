"""The least two processes can spend passing one decision (a request out, a small reply back) over
ZeroMQ on this machine, now: the floor the step benches set the bus against, measured in their run.

Two floors, because a node is an event-loop process:

* ``blocking``: both sides block in ``recv``; the kernel wakes the reader straight out of the
  socket's poll. Nothing that also serves timers, services and other inputs can wait this way.
* ``loop``: both sides wait in a uvloop event loop that watches the socket's file descriptor and
  drains it without blocking, as a node's runtime does, and nothing else: no headers, credits,
  taps or clock. A bus step sits above this one only by what framebus itself does per message.

With ``record``, the loop floor also sends a step record to a third event-loop process each round
trip, which decodes it: the shape of a step in a graph where a judge (or a bench's probe) reads the
environment's ``step`` stream, three processes and their ZeroMQ threads sharing the machine.

The echo decodes the request's first frame with msgpack (as a node decodes a header) and replies a
short msgpack map, so the payload's cost is in every floor.
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


def _sink(endpoint: str, ready: Any) -> None:
    sock = zmq.Context().socket(zmq.ROUTER)
    sock.bind(endpoint)
    ready.set()

    async def read() -> None:
        readable = _Readable(sock, asyncio.get_running_loop())
        while True:
            frames = await readable.recv()
            if frames[-1] == b"quit":
                return
            msgpack.unpackb(frames[1])

    _run_loop(read())


def _start(target: Any, *args: Any) -> Any:
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    proc = ctx.Process(target=target, args=(*args, ready), daemon=True)
    proc.start()
    ready.wait()
    return proc


def round_trips(request: list[Any], n: int, *, loop: bool, record: bytes | None = None) -> list[float]:
    """Seconds per round trip of ``request`` (a list of frames; the first is msgpack) to an echo in
    another process, ``n`` of them after a warm-up; ``loop`` picks the event-loop floor, and
    ``record`` (msgpack) also goes to a third process each round trip (event loops only)."""
    if record is not None and not loop:
        raise ValueError("a record to a third process is measured between event loops only")
    tmp = tempfile.mkdtemp(prefix="fbfloor-", dir="/tmp")
    procs = [_start(_echo, f"ipc://{tmp}/echo.sock", loop)]
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.connect(f"ipc://{tmp}/echo.sock")
    reader: zmq.Socket | None = None
    if record is not None:
        procs.append(_start(_sink, f"ipc://{tmp}/sink.sock"))
        reader = zmq.Context.instance().socket(zmq.DEALER)
        reader.connect(f"ipc://{tmp}/sink.sock")
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
                    if reader is not None:
                        reader.send(record, zmq.NOBLOCK)
                    msgpack.unpackb((await readable.recv())[0])
                    if i >= WARMUP:
                        lat.append(time.perf_counter() - t)

            _run_loop(ask())
    finally:
        for s in (sock, reader):
            if s is not None:
                s.send_multipart([b"quit"])
        for proc in procs:
            proc.join(5)
        for s in (sock, reader):
            if s is not None:
                s.close(0)
        shutil.rmtree(tmp, ignore_errors=True)
    return lat


def p50_us(request: list[Any], n: int, *, loop: bool, record: bytes | None = None) -> float:
    return statistics.median(round_trips(request, n, loop=loop, record=record)) * 1e6
