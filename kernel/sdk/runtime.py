"""The node runtime: one per node process, owning its lifecycle, its inbox, its input queues and
its line to the kernel (hello, welcome, commands, heartbeats).

Data travels peer to peer (measured faster than through a broker: see bench/bus.py): each node
binds an inbox ROUTER, and keeps a DEALER to the inbox of every node it sends to. The kernel is
told about every message anyway: each node batches the headers of what it sent into ``tap``
messages on its control socket, so the kernel can count, trace and record all traffic. The peer
side is kernel.bus.links, requests and services kernel.bus.calls, the socket reading
kernel.bus.reading; this module wires them to the node.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import os
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

import structlog
import zmq

from kernel.bus import messages, outlet, protocol, tracing
from kernel.bus import outbox as outbox_
from kernel.bus.badtraffic import BadTraffic, truncated
from kernel.bus.calls import Calls, current_traceparent, traceparent_var
from kernel.bus.curve import CurveServer, NodeCurve
from kernel.bus.errors import FramebusError, RemoteError
from kernel.bus.inputs import InputQueue
from kernel.bus.ipcpath import inbox_path
from kernel.bus.links import Links
from kernel.bus.protocol import CREDIT, CTL, DATA, ERR, RELEASE, REP, REQ, Message
from kernel.bus.reading import SocketReader
from kernel.bus.shm import shm_dir
from kernel.bus.sockets import inbox_router
from kernel.sdk.clock import Clock
from kernel.sdk.node import EpisodeAbandoned, Node

log = structlog.get_logger("framebus.runtime")

# Messages queued per connection to an inbox. A sender past it keeps the rest in its own queue
# (SNDHWM 10000), so a flood costs the flooder's memory; here it is at most this many messages.
INBOX_RCVHWM = 1000
SHIP_FLUSH_S = 1.5  # at the end, how long queued results may take to reach the kernel (SIGTERM comes at 2 s)
# episode.next may wait as long as episodes are in flight elsewhere; the kernel keeps one ask per
# node and the watchdog ends the node if the kernel dies, so this is only a backstop.
NEXT_EPISODE_TIMEOUT_S = 24 * 3600.0


ATTEMPTS_KEPT = 4096  # retried episodes whose attempt a node remembers (only retried ones are told)

class ConfigRejected(FramebusError, RuntimeError):
    """The kernel refused this node (e.g. the launch file wires an input the node does not have)."""


class NodeRuntime:
    """Runs one :class:`Node` against a kernel at ``kernel_endpoint``."""

    def __init__(self, node: Node, node_id: str, kernel_endpoint: str, *, inbox_dir: str | None = None,
                 tcp_host: str | None = None, exit_on_orphan: bool = True, curve: NodeCurve | None = None,
                 params: dict[str, Any] | None = None, outbox: outbox_.Outbox | None = None) -> None:
        self.node = node
        if params is not None:  # ports that depend on params must be known before the hello
            node.params = type(node).parse_params(params)
            ins, outs = node.ports(node.params)
            node.inputs, node.outputs = tuple(ins), tuple(outs)  # type: ignore[misc]
        self.curve = curve  # CurveZMQ keys when the bus is protected (kernel.bus.curve)
        self._curve_server: CurveServer | None = None
        self.id = node_id
        self.kernel_endpoint = kernel_endpoint
        self.inbox_dir = inbox_dir
        self.tcp_host = tcp_host
        self.exit_on_orphan = exit_on_orphan
        node.id = node_id
        node._rt = self
        self.ctx = zmq.Context.instance()
        self.state = "starting"
        self.run: dict[str, Any] = {}
        self.run_dir: str | None = None  # the run folder, on the launching machine
        # Results (step records, pictures, trace and log lines): written into the run folder by this
        # process, or shipped to the kernel when it runs on another machine (kernel.bus.outbox; the
        # welcome's "results" says which). ``outbox`` may come before the welcome, with log lines.
        self.ships = False
        self.observers: frozenset[str] = frozenset()  # readers that only watch (the welcome's)
        self.outbox = outbox
        self.own_dir: Path | None = None  # a shipping node's own folder, on its machine
        self._local_results: outbox_.LocalResults | None = None
        self.max_bytes = protocol.DEFAULT_MAX_MESSAGE_BYTES
        self.heartbeat = 0.5
        self.grace = 3.0  # until the welcome says the run's (bus.grace): a kernel never reached is not waited for
        self.queues: dict[str, InputQueue] = {}
        self._in_routes: dict[tuple[str, str], list[str]] = {}  # (src node, output) -> my inputs
        self._sources_of: dict[str, list[str]] = {}  # input -> its source nodes, sorted (``sources``)
        self.playing: str | None = None  # the episode this driver was dealt last
        self.bad = BadTraffic(log, "dropped a bad message", node=node_id)  # its counts: stats' decode_errors
        self.reader = SocketReader(self.bad)
        self.links = Links(node_id, self.ctx, curve=curve, shm_dir=None if tcp_host else shm_dir(), bad=self.bad,
                           kick=self.reader.kick)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._run_task: asyncio.Task[Any] | None = None
        self._started = asyncio.Event()
        self._stop = asyncio.Event()
        self._last_kernel = time.monotonic()
        self.exit_code = 0
        self.clock = Clock(None, self.queue, self.sources)
        # The kernel's commands (kernel.graph.core sends them); the clock is looked up at call time,
        # since the welcome replaces it.
        self._ctl_commands: dict[str, Callable[[Any], None]] = {
            "welcome": self._welcomed, "peers": self._update_peers,
            "reject": lambda body: self._welcomed(ConfigRejected(body["error"])),
            "start": lambda _: self._started.set(), "stop": lambda _: self._stop.set(),
            "pause": lambda _: self.clock.pause(), "resume": lambda _: self.clock.resume(),
            "step": lambda body: self.clock.step(body.get("n", 1)), "abandon": self._abandon,
            "attempt": self._attempt,
            "hb": self._on_kernel_hb,
        }
        self._quiet: dict[str, float] = {}  # nodes the kernel has not heard from lately (its last hb)
        # episodes dealt again after a dead node took them down -> the attempt now played (kernel's
        # ``attempt`` command); the newest ATTEMPTS_KEPT, in the order they came
        self.attempts: dict[str, int] = {}
        self.summary_sections: dict[str, dict[str, Any]] = {}  # merged into summary.json by the kernel
        self.services: dict[str, Callable[..., Any]] = {}
        self.handlers: dict[str, Callable[[Message], Awaitable[None]]] = {}
        self.handler_failures: dict[str, int] = {}  # input name -> its handler's exceptions
        self.busy: dict[str, bool] = {}  # input name -> its handler is running (for the kernel's drain)
        for name, member in inspect.getmembers(type(node)):
            if hasattr(member, "__framebus_service__"):
                self.services[member.__framebus_service__] = getattr(node, name)
            if hasattr(member, "__framebus_input__"):
                self.handlers[member.__framebus_input__] = getattr(node, name)
        self.calls = Calls(node_id, self.services, links=self.links, reader=self.reader, decode=self._decode,
                           max_bytes=lambda: self.max_bytes, spawn=self._spawn)
        self.is_driver = callable(getattr(type(node), "run", None))

    # public to Node ---------------------------------------------------------------------------
    def queue(self, input: str) -> InputQueue:
        if input not in self.queues:
            raise KeyError(f"node {self.id!r} has no wired input {input!r}; "
                           f"wired inputs: {sorted(self.queues) or 'none'}")
        return self.queues[input]

    def sources(self, input: str) -> list[str]:
        # A lockstep clock asks this once per step; the routes only change with the welcome
        # (``_configure`` empties the cache), so the sorted set is built once per input.
        cached = self._sources_of.get(input)
        if cached is None:
            cached = self._sources_of[input] = sorted({node for (node, _), inputs in self._in_routes.items()
                                                       if input in inputs})
        return list(cached)

    async def publish(self, output: str, body: Any, *, step: int | None = None) -> None:
        if not self.publish_nowait(output, body, step=step):  # a block edge: wait for a credit, then send
            await self.links.take_credits(output, self._check_abandoned)
            self._send(output, body, step)

    def publish_nowait(self, output: str, body: Any, *, step: int | None = None) -> bool:
        """``publish`` where nothing need be awaited: sent (or nobody listens), True; an output with
        credits to wait for (a ``block`` edge), nothing sent, False. For a caller that holds the loop
        but does not run it (kernel.gym)."""
        if output not in self.links.out_edges:
            if output not in self.node.outputs:
                raise ValueError(f"node {self.id!r} has no output {output!r}; declared outputs: {list(self.node.outputs)}")
            return True  # declared but not wired: nothing listens
        self._check_abandoned()
        if output in self.links.blocking:
            return False
        self._send(output, body, step)
        return True

    def _send(self, output: str, body: Any, step: int | None) -> None:
        self.links.send(output, body, step=step, max_bytes=self.max_bytes, traceparent=current_traceparent())

    def readers(self, output: str, *, observers: bool = True) -> list[str]:
        return [dst for dst in self.links.out_dsts.get(output, ()) if observers or dst not in self.observers]

    def node_run_dir(self) -> Path | None:
        """The run folder as this node sees it: on another machine, a folder of its own there."""
        if self.ships:
            return self.own_dir
        return Path(self.run_dir) if self.run_dir else None

    def record_step(self, record: dict[str, Any]) -> None:
        """Append a step record to the run's steps (kernel.bus.outbox); never waits. A record of an
        episode being played again is stamped with its attempt, so it stays apart from the records
        of the attempt that was abandoned."""
        attempt = self.attempts.get(record.get("episode")) if self.attempts else None  # type: ignore[arg-type]
        if attempt is not None and "attempt" not in record:
            record = {**record, "attempt": attempt}
        if self.ships and self.outbox is not None:
            self.outbox.put_step(record)
        elif self.run_dir:
            if self._local_results is None:
                self._local_results = outbox_.LocalResults(Path(self.run_dir), self.id)
            self._local_results.step(record)

    async def _ship_the_rest(self) -> None:
        """Send what the outbox still holds, waiting for the kernel's answers (bounded)."""
        if self.outbox is None:
            return
        tracing.flush()
        if not await self.outbox.flush(self._request_for_results, SHIP_FLUSH_S):
            log.warning("results not all shipped before exiting", node=self.id, **self.outbox.stats())

    async def _request_for_results(self, node: str, svc: str, body: Any, timeout: float) -> Any:
        return await self.calls.request(node, svc, body, timeout=timeout)

    async def request(self, node: str, svc: str, body: Any, *, timeout: float = 10.0) -> Any:
        return await self.calls.request(node, svc, body, timeout=timeout)

    async def next_episode(self) -> dict[str, Any] | None:
        reply = await self.request("kernel", "episode.next", {}, timeout=NEXT_EPISODE_TIMEOUT_S)
        self.clock.new_episode()
        self.playing = reply["id"] if reply else None
        if reply and "attempt" in reply:
            self._attempt({"episode": reply["id"], "attempt": reply["attempt"]})
        return reply

    def _check_abandoned(self) -> None:
        """Only the driver's own loop stops playing an abandoned episode; its services and input
        handlers go on as before."""
        if self.clock.abandoned is not None and self._run_task is not None and asyncio.current_task() is self._run_task:
            raise EpisodeAbandoned(self.clock.abandoned)

    def _attempt(self, body: dict[str, Any]) -> None:
        eid, attempt = body.get("episode"), body.get("attempt")
        if isinstance(eid, str) and isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 1:
            self.attempts.pop(eid, None)
            self.attempts[eid] = attempt
            while len(self.attempts) > ATTEMPTS_KEPT:
                del self.attempts[next(iter(self.attempts))]

    def _abandon(self, body: dict[str, Any]) -> None:
        eid = body.get("episode")
        if eid is None or eid != self.playing:
            return  # not the one being played: it was played out (the kernel keeps whichever result comes first)
        reason = f"episode {eid} was returned to the deck ({body.get('reason', 'a node it needed died')})"
        log.warning("abandoning the episode; it is dealt again", node=self.id, episode=eid, reason=reason)
        self.playing = None
        self.clock.abandon(reason)
        self.links.credit_event.set()  # a publish waiting for credits gives up too

    async def wait_started(self) -> None:
        """Until this node processed ``start`` (and so every ``peers`` update sent before it)."""
        await self._started.wait()

    # lifecycle ------------------------------------------------------------------------------
    async def main(self) -> int:
        """Register, set up, serve until told to stop; returns the process exit code."""
        self._welcome: asyncio.Future[messages.Welcome] = asyncio.get_running_loop().create_future()
        self._bind_inbox()
        self._ctl = self.ctx.socket(zmq.DEALER)
        self._ctl.setsockopt(zmq.IDENTITY, self.id.encode())
        self._ctl.setsockopt(zmq.LINGER, 500)
        if self.curve is not None:
            self.curve.connect_kernel(self._ctl)
        self._ctl.connect(self.kernel_endpoint)
        self.links.ctl = self._ctl
        self.reader.watch(self._ctl, self._on_ctl, "kernel")
        hello = messages.Hello(pid=os.getpid(), inbox=self.inbox_endpoint, inputs=list(self.node.inputs),
                               outputs=list(self.node.outputs), services=sorted(self.services),
                               driver=self.is_driver, shm=self.links.shm_dir is not None)
        if self.curve is not None:
            hello["curve"] = self.curve.keys.public
        self._send_ctl("hello", hello)
        watchdog = self._spawn(self._watchdog())
        try:
            welcome = await asyncio.wait_for(self._welcome, 30.0)
        except asyncio.TimeoutError:
            log.error("no answer from the kernel", node=self.id, endpoint=self.kernel_endpoint)
            return 70
        except ConfigRejected as exc:
            outlet.stderr().write(f"{self.id}: {exc}\n")  # after the log lines queued before it
            return 2
        self._configure(welcome)
        try:
            await self.node.setup()
        except Exception:
            log.exception("setup failed", node=self.id)
            await self._ship_the_rest()  # a node on another machine: its log lines say why, in the run folder
            return 1
        self._spawn(self._heartbeat())
        self._spawn(self.links.tap_flusher())
        self.state = "ready"
        self._send_ctl("ready", {})
        await self._wait_started_or_stopped()
        if not self._stop.is_set():
            self.state = "running"
            # Handlers run only once ``start`` is processed, and so every ``peers`` update the kernel
            # sent before it: data can reach the inbox before the control socket is read, and a
            # handler that asks a node announced meanwhile must find it (messages wait in the queue).
            for name, handler in self.handlers.items():
                if name in self.queues:
                    self._spawn(self._consume(name, handler))
            if self.is_driver:
                self._run_task = self._spawn(self._drive())
            await self._stop.wait()
        await self._shutdown()
        watchdog.cancel()
        return self.exit_code

    async def _wait_started_or_stopped(self) -> None:
        started = asyncio.ensure_future(self._started.wait())
        stopped = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({started, stopped}, return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        stopped.cancel()

    async def _drive(self) -> None:
        try:
            with tracing.span(f"{self.id}.run"):
                while True:
                    # Abandoned: run() again; it asks for the next episode, which may be the abandoned one.
                    with contextlib.suppress(EpisodeAbandoned):
                        await self.node.run()  # type: ignore[attr-defined]
                        break
        except Exception as exc:  # (not a cancellation: that is no Exception)
            if _run_folder_refused(exc):
                log.error("the kernel could not write a result; the run is ending", node=self.id, error=str(exc))
            else:
                log.exception("run failed", node=self.id)
            self._send_ctl("done", messages.Done(ok=False, error=f"{type(exc).__name__}: {exc}"))
            self.exit_code = 1
            self._stop.set()
            return
        self._send_ctl("done", messages.Done(ok=True))

    async def _shutdown(self) -> None:
        self.state = "stopping"
        self.reader.drain_now([self._inbox, *self.links.peers.values()])  # what arrived before stopping
        for task in list(self._tasks):  # the driver's run among them
            if task is not asyncio.current_task():
                task.cancel()
        self.clock.step_span.close()  # the last step of the run still gets exported
        try:
            await asyncio.wait_for(self.node.teardown(), 2.0)
        except Exception:
            log.warning("teardown failed", node=self.id, exc_info=True)
        if self._local_results is not None:
            self._local_results.close()
        self.links.flush_records()  # what the judges have not had yet, before the peers' sockets close
        await self._ship_the_rest()  # before the bye, on the same socket: the kernel has them all first
        self.links.flush_taps()
        self._send_ctl("bye", messages.Heartbeat(stats=self.stats()))
        for sock in [*self.links.peers.values(), self._inbox, self._ctl]:
            with contextlib.suppress(Exception):  # the loop may outlive us (in-process nodes in tests):
                asyncio.get_running_loop().remove_reader(sock.getsockopt(zmq.FD))  # its fd number will be reused
            sock.close(linger=200)
        if self._curve_server is not None:
            self._curve_server.stop()
        self.links.close()
        self.bad.flush()

    def _configure(self, w: messages.Welcome) -> None:
        self.node.params = type(self.node).parse_params(dict(w["params"]))
        self.run = dict(w["run"])
        self.run_dir = w["run_dir"]
        self.ships = w["results"] == "bus"
        if self.ships:
            self.outbox = self.outbox or outbox_.Outbox()
            self.own_dir = outbox_.own_run_dir(self.run_dir or self.id)
        elif self.outbox is not None:
            log.warning("started to ship results, but the kernel says this node writes them itself; "
                        "the log lines sent are refused", node=self.id)
        if self.outbox is not None:
            self._spawn(self.outbox.run(self._request_for_results, timeout=lambda: max(10.0, self.grace + 5),
                                        max_bytes=lambda: self.max_bytes))
        self.max_bytes = w["max_message_bytes"]
        self.heartbeat = w["heartbeat"]
        self.grace = w["grace"]
        self._sources_of.clear()
        for name, spec in w["inputs"].items():
            sources = spec["sources"]
            size = spec["size"] * (len(sources) if spec["policy"] == "block" else 1)
            q = InputQueue(name, spec["policy"], size)
            if spec["policy"] == "block":
                q.on_take = functools.partial(self.links.return_credit, name, spec["size"])
            self.queues[name] = q
            for src in sources:
                node, output = src.split("/", 1)
                self._in_routes.setdefault((node, output), []).append(name)
        self.clock = Clock(w["clock"], self.queue, self.sources, cut_off=self.cut_off)
        self.observers = frozenset(w["observers"])
        run_tag = os.path.basename(os.environ.get("FRAMEBUS_IPC_DIR", "fb-local"))
        self.links.configure(w["outputs"], f"{run_tag}-{self.id}-{os.getpid()}", w["rates"],
                             records=tuple(type(self.node).records), records_delay=w["records_delay"])
        tracing.configure(w["trace"], self.id, self.run_dir,
                          ship=outbox_.LineSink(self.outbox, "trace") if self.ships and self.outbox else None)
        self._update_peers(w["peers"])

    # sockets ----------------------------------------------------------------------------------
    def _bind_inbox(self) -> None:
        self._inbox = inbox_router(self.ctx, INBOX_RCVHWM)
        if self.curve is not None:
            self._curve_server = self.curve.server()
            self._curve_server.serve(self._inbox)
        if self.tcp_host:
            self._inbox.bind(f"tcp://{self.tcp_host}:0")
        else:
            directory = self.inbox_dir or os.environ.get("FRAMEBUS_IPC_DIR", "/tmp")
            self._inbox.bind(f"ipc://{inbox_path(directory, self.id, os.getpid())}")
        self.inbox_endpoint = self._inbox.getsockopt_string(zmq.LAST_ENDPOINT)
        self.reader.watch(self._inbox, self._on_inbox, None)

    def _update_peers(self, peers: dict[str, messages.Peer]) -> None:
        for node in self.links.update(peers, lambda sock, peer: self.reader.watch(sock, self.calls.on_peer_reply, peer)):
            self.calls.fail_requests_to(node)

    def _decode(self, frames: list[Any], source: str) -> Message | None:
        try:
            reader = self.links.shm_reader
            return protocol.decode(frames, self.max_bytes, reader.attach if reader else None)
        except protocol.ProtocolError as exc:
            self.bad.note(source, str(exc))
            return None

    # incoming ---------------------------------------------------------------------------------
    def _on_inbox(self, frames: list[Any], _: str | None) -> None:
        identity = frames[0]
        name = identity.decode(errors="replace")
        msg = self._decode(frames[1:], name)
        if msg is None:
            return
        kind = msg.kind
        stranger = kind != REQ and msg.src not in self.links.peers
        if identity != msg.src.encode() or stranger:
            # Peers connect with IDENTITY = their node id (kernel.bus.links); only they send data,
            # credits and releases. Requests may come from anyone, but under their own name.
            known = ", which is no peer the kernel announced" if stranger else ""
            self.bad.note(f"{name} (as {msg.src})" if name != msg.src else name,
                          f"{kind} {truncated(msg.topic)} claims src {truncated(msg.src)!r}{known}, but came from "
                          f"a connection whose ZeroMQ identity is {truncated(name)!r}")
            return
        if kind == DATA:
            inputs = self._in_routes.get((msg.src, msg.topic))
            if inputs is None:
                self.bad.note(f"{msg.src}/{truncated(msg.topic)} (not wired)",
                              f"data on {msg.src}/{truncated(msg.topic)}, which no input of this node reads")
                return
            body = msg.body
            if type(body) is dict and "attempt" in body:  # an episode dealt again: before its handler records
                self._attempt(body)
            for name in inputs:
                self.queues[name].put(msg)
        elif kind == REQ:
            self.calls.serve(msg, lambda out: self.reader.send(self._inbox, [identity, *out]))
        elif kind == CREDIT:
            self.links.on_credit(msg)
        elif kind == RELEASE:
            self.links.on_release(msg)
        else:
            self.bad.note(msg.src, f"a {truncated(kind)!r} message on the inbox, which takes data, req, credit and rel")

    async def _consume(self, name: str, handler: Callable[[Message], Awaitable[None]]) -> None:
        queue = self.queues[name]
        while True:
            msg = await queue.get()
            token = traceparent_var.set(msg.traceparent)
            self.busy[name] = True
            try:
                with tracing.span(f"{self.id}.{name}", parent=msg.traceparent):
                    await handler(msg)
            except Exception as exc:
                if _run_folder_refused(exc):  # not this node's fault: one line, no traceback, no record
                    log.error("the kernel could not write a result; the run is ending", node=self.id,
                              input=name, error=str(exc))
                    continue
                log.exception("input handler failed", node=self.id, input=name)
                self._handler_failed(name, exc)
            finally:
                self.busy[name] = False
                traceparent_var.reset(token)
                del msg  # do not hold the last message (and its shared-memory slot) until the next one

    def _handler_failed(self, name: str, exc: Exception) -> None:
        """Put a failed input handler on the run's record: an episode it was to end stays open, and
        the run that then stalls names this as its last error. The 1st, 2nd, 4th, 8th ... failure of
        an input is sent: a flood of bad messages costs the kernel a few rows."""
        count = self.handler_failures[name] = self.handler_failures.get(name, 0) + 1
        if count & (count - 1) == 0:
            body = {"kind": "input_handler", "message": f"{self.id}.{name} failed ({count}x): "
                    f"{type(exc).__name__}: {str(exc)[:500]}"}
            self._spawn(self._quietly(self.request("kernel", "run.error", body)))

    @staticmethod
    async def _quietly(call: Awaitable[Any]) -> None:
        with contextlib.suppress(Exception):
            await call

    # kernel control ---------------------------------------------------------------------------
    def _on_ctl(self, frames: list[zmq.Frame], _: str | None) -> None:
        self._last_kernel = time.monotonic()
        msg = self._decode(frames, "kernel")
        if msg is None:
            return
        if msg.kind in (REP, ERR):
            self.calls.resolve(msg)
            return
        if msg.kind == REQ:
            self.calls.serve(msg, lambda out, topic=msg.topic: self.links.send_ctl(topic, out))
            return
        handler = self._ctl_commands.get(msg.topic)
        if handler is None:  # an unknown command is from a newer kernel: ignored
            return
        error = messages.check("kernel.hb" if msg.topic == "hb" else msg.topic, msg.body)
        if error is not None:  # checked once here: the handlers read the structure by key
            self.bad.note("kernel", error)
            if msg.topic == "welcome":
                self._welcomed(ConfigRejected(f"the kernel's welcome does not fit this node's runtime: {error}"))
            return
        handler(msg.body or {})

    def _welcomed(self, answer: messages.Welcome | ConfigRejected) -> None:
        if self._welcome.done():
            return
        if isinstance(answer, ConfigRejected):
            self._welcome.set_exception(answer)
        else:
            self._welcome.set_result(answer)

    def _send_ctl(self, cmd: str, body: Any, *, droppable: bool = False) -> None:
        """A ``droppable`` message (a heartbeat: the next one says the same, newer) is skipped and
        counted when the kernel's queue is full, rather than blocking the loop until it reads again."""
        if self._ctl.closed:
            return
        if droppable and not self.links.ctl_has_room():
            self.links.ctl_dropped[cmd] += 1
            return
        self.links.send_ctl(cmd, protocol.encode(CTL, self.id, cmd, body, dst="kernel"))

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            self._send_ctl("hb", messages.Heartbeat(state=self.state, stats=self.stats()), droppable=True)

    def _on_kernel_hb(self, body: messages.KernelHeartbeat) -> None:
        self._quiet = body.get("quiet", {})

    def cut_off(self, node: str) -> bool:
        """Whether ``node`` is out of reach rather than slow: the kernel has not heard from it for
        three heartbeats, or this node has not heard from the kernel for as long (then it cannot tell,
        and a partition is the likelier story)."""
        return node in self._quiet or time.monotonic() - self._last_kernel > 3 * self.heartbeat

    async def _watchdog(self) -> None:
        """Exit when the kernel is gone: no node outlives its graph.

        A dead launcher normally takes its nodes along at once (PR_SET_PDEATHSIG, kernel.graph.supervisor);
        a new parent pid says the same where that signal is missing (no prctl, or the launcher died
        between fork and prctl), sooner than the missing heartbeats.
        """
        parent = os.getppid()
        while True:
            await asyncio.sleep(0.25)
            limit = max(self.grace, 6 * self.heartbeat)  # both come with the welcome (bus.grace, bus.heartbeat)
            orphaned = self.exit_on_orphan and os.getppid() != parent
            if orphaned or time.monotonic() - self._last_kernel > limit:
                why = "the process that started it is gone" if orphaned else \
                    f"no heartbeat from the kernel for {limit:.1f} s"
                if not self.exit_on_orphan:  # a runtime inside someone else's process (kernel.testing)
                    log.error("no heartbeat from the kernel; stopping", node=self.id, silent_s=limit)
                    self._stop.set()
                    return
                try:  # stderr may be a pipe to a dead or stalled launcher: queue, wait a little, go
                    outlet.stderr().write(f"{self.id}: {why}; exiting\n")
                    outlet.drain(console_s=0.5, files_s=2.0)
                finally:
                    os._exit(75)

    def stats(self) -> messages.Stats:
        return {
            "inputs": {name: q.stats() for name, q in self.queues.items()},
            "queued": {name: len(q) for name, q in self.queues.items()},
            "busy": {name: busy for name, busy in self.busy.items() if busy},
            "sent": dict(self.links.sent),
            "send_dropped": dict(self.links.send_dropped),
            "ctl_dropped": dict(self.links.ctl_dropped),
            "ctl_waited": self.links.ctl_waited,
            "backed_up": dict(self.links.backed_up),
            "thinned": dict(self.links.thinner.thinned),
            "records_batched": self.links.records_batched,
            "decode_errors": dict(self.bad.counts),
            "clock": self.clock.stats(),
            "shm": self.links.shm_pool.stats() if self.links.shm_pool is not None else None,
            "curve_refused": self._curve_server.refused if self._curve_server is not None else 0,
            "summary": self.summary_sections,
            **({"results": {**self.outbox.stats(), "own_dir": str(self.own_dir)}} if self.outbox is not None else {}),
        }

    # helpers ----------------------------------------------------------------------------------
    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def _run_folder_refused(exc: BaseException) -> bool:
    """Whether ``exc`` is the kernel's answer that the run folder's disk refused a result
    (kernel.bus.resultsdb.ResultsNotWritten): the kernel ends the run and says why itself."""
    return isinstance(exc, RemoteError) and exc.remote_type == "ResultsNotWritten"
