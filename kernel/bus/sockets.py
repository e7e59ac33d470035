"""Multipart send/receive on pyzmq's Cython layer.

pyzmq's Python layer wraps every flag in an ``enum.Flag`` and checks options per frame; on a
small request that bookkeeping costs more than the message itself (profiled: ~10 us per side).
These functions do the same work with plain ints.
"""

from __future__ import annotations

from typing import Any, Sequence

import zmq
from zmq.backend import Socket as _Raw

_EVENTS = int(zmq.EVENTS)
_POLLIN = int(zmq.POLLIN)
_POLLOUT = int(zmq.POLLOUT)
_SNDMORE = int(zmq.SNDMORE)
_NOBLOCK = int(zmq.NOBLOCK)
_send = _Raw.send
_recv = _Raw.recv
_get = _Raw.get
COPY_THRESHOLD = 64 * 1024  # below this pyzmq copies faster than it can track zero-copy buffers


def inbox_router(ctx: zmq.Context[Any], rcvhwm: int) -> zmq.Socket[Any]:
    """The ROUTER a node's inbox and the kernel bind: a restarted peer takes over its identity's route
    (ROUTER_HANDOVER), nothing lingers at close, and at most ``rcvhwm`` messages queue per connection
    (a flooder keeps the rest in its own send queue)."""
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.ROUTER_HANDOVER, 1)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVHWM, rcvhwm)
    return sock


def readable(sock: zmq.Socket) -> bool:
    """True if a message waits (this also lets zmq process its pending commands)."""
    return bool(_get(sock, _EVENTS) & _POLLIN)


def writable(sock: zmq.Socket) -> bool:
    """True if a message can be queued without blocking (the socket's send queue is below its HWM)."""
    return bool(_get(sock, _EVENTS) & _POLLOUT)


def recv_frames(sock: zmq.Socket, copy_threshold: int = 2) -> list[Any]:
    """Receive one multipart message without blocking; raises zmq.Again if there is none.

    The first ``copy_threshold`` frames (routing id, header, body: small) are copied into bytes;
    later frames (array payloads) stay zero-copy ``zmq.Frame`` objects.
    """
    return _with_rest(sock, _recv(sock, _NOBLOCK, False), copy_threshold)


def _with_rest(sock: zmq.Socket, first: zmq.Frame, copy_threshold: int) -> list[Any]:
    """``first`` (as bytes) and the frames that follow it in its message.

    Each frame comes as a zmq.Frame, whose ``more`` is a field: asking the socket (RCVMORE) instead
    costs an option lookup and a pass through libzmq's command queue per frame (measured: 2.3 ->
    1.55 us for a three-frame message)."""
    frames: list[Any] = [first.bytes]
    frame = first
    while frame.more:
        frame = _recv(sock, _NOBLOCK, False)
        frames.append(frame.bytes if len(frames) < copy_threshold else frame)
    return frames


def recv_frames_keyed(sock: zmq.Socket, copy_threshold: int = 2) -> tuple[list[Any], str | None]:
    """``recv_frames``, plus the User-Id of the connection the message came on: on a CURVE socket,
    the sender's public key as the ZAP handler passed it (pyzmq's default: its Z85 text). That key,
    unlike the routing id and the header's ``src``, is not the sender's to choose."""
    first = _recv(sock, _NOBLOCK, False)
    try:
        user = first.get("User-Id")
    except zmq.ZMQError:  # no such property: the connection had no ZAP handshake
        user = None
    return _with_rest(sock, first, copy_threshold), user if isinstance(user, str) and user else None


def send_frames(sock: zmq.Socket, frames: Sequence[Any], copy: bool = True, flags: int = 0) -> None:
    last = len(frames) - 1
    for i, frame in enumerate(frames):
        _send(sock, frame, (flags | _SNDMORE) if i < last else flags, copy, False)


def nbytes_of(frames: Sequence[Any]) -> int:
    if len(frames) == 2:  # header and body only: both bytes
        return len(frames[0]) + len(frames[1])
    return sum(f.nbytes if hasattr(f, "nbytes") else len(f) for f in frames)
