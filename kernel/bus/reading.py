"""Reading pyzmq sockets from an asyncio loop without zmq.asyncio.

Sockets are plain (sync) pyzmq sockets driven with ``add_reader``: this avoids the futures
zmq.asyncio creates per receive, which dominate latency for small messages. The zmq FD is
edge-triggered, so every read and every send has to leave the socket drained or a drain scheduled.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Sequence

import zmq

from kernel.bus.badtraffic import BadTraffic
from kernel.bus.sockets import COPY_THRESHOLD, nbytes_of, readable, recv_frames, send_frames

# Messages read from one socket per turn of the event loop: a flooded inbox must leave turns to the
# control socket (the watchdog exits after 3 s without a word from the kernel) and to timers.
DRAIN_BATCH = 256

Handler = Callable[[list[Any], "str | None"], None]


class SocketReader:
    """Calls a handler for every message of the sockets it watches, a bounded batch per loop turn."""

    def __init__(self, bad: BadTraffic) -> None:
        self.bad = bad

    def watch(self, sock: zmq.Socket, handler: Handler, peer: str | None) -> None:
        loop = asyncio.get_running_loop()
        copied = 3 if sock.type == zmq.ROUTER else 2  # routing id, header, body
        sock.__dict__["_fb_drain"] = (handler, peer, copied)
        loop.add_reader(sock.getsockopt(zmq.FD), self.drain, sock)
        loop.call_soon(self.drain, sock)

    def drain(self, sock: zmq.Socket, batch: int = DRAIN_BATCH) -> bool:
        """Read at most ``batch`` messages; True if that emptied the socket.

        Stopping with messages left means no new edge may come, so the drain reschedules itself
        for the loop's next turn."""
        handler, peer, copied = sock.__dict__["_fb_drain"]
        for _ in range(batch):
            if sock.closed or not readable(sock):
                return True
            try:
                frames = recv_frames(sock, copied)
            except zmq.Again:
                return True
            try:
                handler(frames, peer)
            except Exception as exc:
                self.bad.note(peer or "inbox", f"handler crashed: {type(exc).__name__}: {exc}", exc_info=True)
        if sock.closed or not readable(sock):
            return True
        self.drain_later(sock)
        return False

    def drain_later(self, sock: zmq.Socket) -> None:
        """Read what is waiting on the loop's next turn."""
        asyncio.get_running_loop().call_soon(self.drain, sock)

    def kick(self, sock: zmq.Socket) -> None:
        """A send can consume the FD's edge: re-check for input that arrived meanwhile."""
        if readable(sock):
            self.drain_later(sock)

    def send(self, sock: zmq.Socket, frames: Sequence[Any]) -> None:
        """Send on a watched socket (a reply, a control message), then ``kick`` it."""
        send_frames(sock, frames, nbytes_of(frames) < COPY_THRESHOLD)
        self.kick(sock)

    def drain_now(self, socks: list[zmq.Socket]) -> None:
        """What already arrived before stopping, bounded: a socket that stays flooded is left."""
        for sock in socks:
            self.drain(sock, 100 * DRAIN_BATCH)
