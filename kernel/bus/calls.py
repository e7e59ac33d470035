"""Requests and replies of one node: the requests it makes (to the kernel or a peer) and the
services it answers.

A reply finds its request by ``cid``; a request that gets none fails with RequestTimeout, and one
whose node restarts fails at once with RemoteError. A service that raises answers with the
exception's type and text (kernel.bus.errors.RemoteError.remote_type on the caller's side).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from typing import Any, Awaitable, Callable

import zmq

from kernel.bus import protocol, tracing
from kernel.bus.errors import RemoteError, RequestTimeout
from kernel.bus.links import Links
from kernel.bus.protocol import ERR, REP, REQ, Message
from kernel.bus.reading import SocketReader
from kernel.bus.sockets import COPY_THRESHOLD, nbytes_of, recv_frames, send_frames

traceparent_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("framebus_traceparent", default=None)
FAST_REPLY_MS = 1


class Calls:
    """The pending requests and the services of one node; the runtime holds one."""

    def __init__(self, node_id: str, services: dict[str, Callable[..., Any]], *, links: Links, reader: SocketReader,
                 decode: Callable[[list[Any], str], Message | None], max_bytes: Callable[[], int],
                 spawn: Callable[[Awaitable[Any]], asyncio.Task[Any]]) -> None:
        self.id = node_id
        self.services = services
        self._async = {name: inspect.iscoroutinefunction(fn) for name, fn in services.items()}
        self.links = links
        self.reader = reader
        self._decode = decode
        self.max_bytes = max_bytes
        self._spawn = spawn
        # cid -> the reply's future, and the node and service asked (failed at once if that node restarts)
        self.pending: dict[int, tuple[asyncio.Future[Any], str, str]] = {}
        self.cid = 0

    async def request(self, node: str, svc: str, body: Any, *, timeout: float = 10.0) -> Any:
        self.links.flush_records()  # whoever answers (the kernel dealing the next episode) has seen them
        self.cid += 1
        cid = self.cid
        frames = protocol.encode(REQ, self.id, svc, body, dst=node, cid=cid, traceparent=current_traceparent(),
                                 max_bytes=self.max_bytes())
        sock = self.links.ctl if node == "kernel" else self.links.peers.get(node)
        if sock is None:
            raise RemoteError(f"node {self.id!r} cannot reach node {node!r}: it is not in this graph "
                              f"(known: {sorted(self.links.peers)})")
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.pending[cid] = (fut, node, svc)
        nbytes = nbytes_of(frames)
        if node == "kernel":
            self.links.send_ctl(svc, frames)  # never blocks: waits in order while the kernel reads nothing
        else:
            try:  # never blocks the loop: a peer that reads nothing (stopped, hung, cut off) fails the request now
                send_frames(sock, frames, nbytes < COPY_THRESHOLD, zmq.NOBLOCK)
            except zmq.Again:
                self.pending.pop(cid, None)
                self.links.backed_up[node] += 1
                self.reader.kick(sock)
                raise RemoteError(f"request {node}.{svc} from {self.id} was not sent: node {node!r} has not read "
                                  f"what this node already sent it (its queue of {sock.get(zmq.SNDHWM)} messages "
                                  f"is full); it is stopped, hung or cut off") from None
            self.links.tap(REQ, node, svc, cid, nbytes, current_traceparent())
        if len(self.pending) == 1 and sock is not self.links.ctl:
            # A lone request (the usual sequential caller): wait for its reply right here, for at
            # most FAST_REPLY_MS, like a blocking pyzmq client would. A local service usually answers
            # within that window, and the reply then skips the event loop's wake-up and task switch.
            # Concurrent requests never block the loop like this.
            if _poll_in(sock, FAST_REPLY_MS):
                self.on_peer_reply(recv_frames(sock, 2), node)
                # Anything else that arrived is read on the loop's next turn, off this reply's path.
                self.reader.drain_later(sock)
            if fut.done():
                self.pending.pop(cid, None)
                return fut.result()
        self.reader.kick(sock)
        # A timer instead of asyncio.wait_for: wait_for wraps the future in a task, which costs more
        # than the whole round trip of a small request.
        timer = loop.call_later(timeout, _expire, fut, f"request {node}.{svc} from {self.id} got no reply "
                                f"within {timeout} s")
        try:
            return await fut
        finally:
            timer.cancel()
            self.pending.pop(cid, None)

    def fail_requests_to(self, node: str) -> None:
        """A restarted node will never answer what its previous process was asked: say so now,
        instead of after each request's timeout (an agent would otherwise sit out its model's
        restart, up to its full timeout, and miss the steps of the replayed episode too)."""
        for fut, dst, svc in list(self.pending.values()):
            if dst == node and not fut.done():
                fut.set_exception(RemoteError(f"{node}.{svc}: node {node!r} restarted before it answered "
                                              f"(request from {self.id}); ask again"))

    def on_peer_reply(self, frames: list[zmq.Frame], peer: str | None) -> None:
        msg = self._decode(frames, peer or "?")
        if msg is not None:
            self.resolve(msg)

    def resolve(self, msg: Message) -> None:
        pending = self.pending.get(msg.cid)  # type: ignore[arg-type]
        if pending is None or pending[0].done():
            return  # a late reply to a request that already timed out
        fut = pending[0]
        if msg.kind == REP:
            fut.set_result(msg.body)
        else:
            body = msg.body if isinstance(msg.body, dict) else {}
            kind = body.get("type")
            kind = kind if isinstance(kind, str) else None
            text = body.get("error", msg.body)
            fut.set_exception(RemoteError(f"{msg.src}.{msg.topic} failed: {kind}: {text}" if kind else
                                          f"{msg.src}.{msg.topic} failed: {text}", kind))

    def serve(self, msg: Message, reply: Callable[[list[Any]], None]) -> None:
        fn = self.services.get(msg.topic)
        if fn is None:
            reply(self._error(msg, f"node {self.id!r} has no service {msg.topic!r}; it offers {sorted(self.services)}",
                              "UnknownService"))
        elif self._async[msg.topic]:
            self._spawn(self._serve_async(fn, msg, reply))
        else:
            token = traceparent_var.set(msg.traceparent)
            try:
                with tracing.span(f"{self.id}.{msg.topic}", parent=msg.traceparent):
                    result = fn(msg.body)
                reply(self._reply(msg, result))
            except Exception as exc:
                reply(self._error(msg, str(exc), type(exc).__name__))
            finally:
                traceparent_var.reset(token)

    async def _serve_async(self, fn: Callable[..., Awaitable[Any]], msg: Message,
                           reply: Callable[[list[Any]], None]) -> None:
        traceparent_var.set(msg.traceparent)  # in this task's own context: no reset needed
        try:
            with tracing.span(f"{self.id}.{msg.topic}", parent=msg.traceparent):
                result = await fn(msg.body)
            reply(self._reply(msg, result))
        except Exception as exc:
            reply(self._error(msg, str(exc), type(exc).__name__))

    def _reply(self, msg: Message, result: Any) -> list[Any]:
        return protocol.encode(REP, self.id, msg.topic, result, dst=msg.src, cid=msg.cid, max_bytes=self.max_bytes())

    def _error(self, msg: Message, error: str, kind: str) -> list[Any]:
        return protocol.encode(ERR, self.id, msg.topic, {"error": error, "type": kind}, dst=msg.src, cid=msg.cid)


def current_traceparent() -> str | None:
    """The traceparent outgoing messages carry: the active span's, else the incoming message's."""
    return tracing.current_traceparent() or traceparent_var.get()


def _poll_in(sock: zmq.Socket, timeout_ms: int) -> bool:
    # Measured: spinning here instead steals the core the service needs on a 2-core machine (2x worse).
    return bool(zmq.zmq_poll([(sock, zmq.POLLIN)], timeout_ms))


def _expire(fut: asyncio.Future[Any], message: str) -> None:
    if not fut.done():
        fut.set_exception(RequestTimeout(message))
