"""The kernel: registry, wiring, lifecycle and bookkeeping of one running graph.

It never carries node-to-node data itself (that goes peer to peer), but every node reports the
headers of what it sent (``tap``), its queues' counts and drops (heartbeats), and asks it for
episodes; so the kernel can answer ``launch stats``, drive pause/resume/step, and end the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import structlog
import zmq

from kernel.bus import messages, protocol
from kernel.bus.badtraffic import BadTraffic, truncated
from kernel.bus.curve import CurveServer
from kernel.bus.messages import Dealt, Edge, Features, Heartbeat, Hello, Peer, Welcome
from kernel.bus.protocol import CTL, DATA, ERR, REP, REQ, TAP, Message
from kernel.bus.sockets import inbox_router, readable, recv_frames, recv_frames_keyed
from kernel.graph import services, trust
from kernel.graph.episodes import EpisodeBook
from kernel.graph.inbox import ResultsInbox
from kernel.graph.keys import RunKeys
from kernel.graph.summary import merge_sections
from kernel.launchfile import LaunchFile, NodeSpec

log = structlog.get_logger("framebus.kernel")
DRAIN_S = float(os.environ.get("FRAMEBUS_DRAIN_S", "30"))
DRAIN_BUSY_ROUNDS = 10  # drain times a judge still at work (a handler running, messages queued) may take
# Messages read per turn of the event loop: a flood on kernel.sock must leave turns to the
# heartbeat timer (nodes exit after 3 s without one) and to the other sockets of the launcher.
DRAIN_BATCH = 256
# Queued messages per connection to kernel.sock (ZeroMQ's default, made explicit): a sender past it
# waits, so a flood is held in the flooder's own memory, not the kernel's.
RCVHWM = 1000
UNSETTLED = ("restarting", "registered", "ready")  # a node on its way back after a restart
CONNECTED = ("registered", "ready", "running", "done")  # a node with a live control connection


@dataclass
class NodeState:
    spec: NodeSpec
    state: str = "pending"  # pending -> registered -> ready -> running -> done/stopped/failed
    pid: int | None = None
    inbox: str | None = None
    incarnation: int = 0
    driver: bool = False
    features: Features = field(default_factory=lambda: Features())
    stats: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    heard: float = 0.0  # time.monotonic() of its last message: how long it has been silent


class Kernel:
    def __init__(self, lf: LaunchFile, run_dir: Path, endpoint: str, *, trace: str | None = None,
                 keys: RunKeys | None = None) -> None:
        self.lf = lf
        self.keys = keys  # CurveZMQ keys (kernel.graph.keys) when the bus is protected
        self._curve: CurveServer | None = None
        self.run_dir = run_dir
        self.endpoint = endpoint
        self.trace = trace
        self.nodes = {spec.id: NodeState(spec) for spec in lf.nodes}
        # (status, reason) once the run ends; made here, so a Kernel is made inside its event loop
        self.finished: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
        self.book = EpisodeBook(lf.run.episodes, lf.run.seed, run_dir, on_problem=self._results_refused)
        self.edge_sent: Counter[tuple[str, str, str]] = Counter()  # (src, output, dst) from taps
        self.ready_event = asyncio.Event()
        self.paused = False
        self.started = False
        self._drain_timer: asyncio.TimerHandle | None = None
        self._drain_mark = 0  # episodes ended when the drain timer was armed: it re-arms while they grow
        self._drain_busy = 0  # drain times in a row that only a node still at work kept the run going
        self._drain_soon = False  # a _drain is already scheduled on the loop
        self.bad = BadTraffic(log, "dropped a bad control message")  # counts per source identity
        # service calls refused by kernel.graph.trust (an episode's end from a node that does not hold
        # or judge it), per sender: well-formed, so not among the bad messages, but shown beside them
        self.refused = BadTraffic(log, "refused a kernel service call")
        # per node, the nodes that may end the episodes dealt to it (kernel.graph.trust.judges)
        self.judges: dict[str, frozenset[str]] = trust.judges(lf)
        # episode.next asks answered later: node -> (routing id, cid). One per node: a newer ask
        # replaces an older one, whose asker gave up waiting.
        self._asks: dict[str, tuple[bytes, int | None]] = {}
        # Whether a node ships its results (it runs on another machine than the run folder): the
        # supervisor knows, having decided where it runs before starting it (runner, harness).
        self.ships: Callable[[str], bool] = lambda node_id: False
        self.results: ResultsInbox | None = None  # made when the first shipped batch comes
        self.results_refused: Counter[str] = Counter()  # batches refused, per node of the graph
        # Told of every node exit while the run goes on: (node, exit code, will restart, the episodes
        # it returned to the deck). An in-process caller (kernel.gym's GraphEnv) waiting on a node
        # hears here, at once, that what it waits for will not come.
        self.exit_listeners: list[Callable[[str, int | None, bool, Collection[str]], None]] = []

    # lifecycle ------------------------------------------------------------------------------
    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        self.sock = inbox_router(zmq.Context.instance(), RCVHWM)
        if self.keys is not None:
            self._curve = self.keys.kernel_server()
            self._curve.serve(self.sock)
        self.sock.bind(self.endpoint)
        self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        loop.add_reader(self.sock.getsockopt(zmq.FD), self._drain)
        loop.call_soon(self._drain)
        self._hb_task = asyncio.ensure_future(self._heartbeats())

    def close(self) -> None:
        self._hb_task.cancel()
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(self.sock.getsockopt(zmq.FD))
        self.sock.close(linger=0)
        if self._curve is not None:
            self._curve.stop()
        self.bad.flush()
        self.refused.flush()
        if self.results is not None and not self.results.close():  # before the store: it queues step rows there
            log.error("shipped results still being written at exit", run_dir=str(self.run_dir))
        self.book.close()

    def start(self) -> None:
        """Every node is ready: let the drivers run."""
        self.started = True
        for node_id, st in self.nodes.items():
            if st.state == "ready":
                self._run(node_id, st)

    def _run(self, node_id: str, st: NodeState) -> None:
        """Tell a ready node that the run is on (and paused, when it is)."""
        st.state = "running"
        self.send(node_id, "start", {})
        if self.paused:
            self.send(node_id, "pause", {})

    def stop_nodes(self) -> None:
        self.broadcast("stop", {})

    def finish(self, status: str, reason: str) -> None:
        if not self.finished.done():
            self.finished.set_result((status, reason))

    def _results_refused(self, problem: str) -> None:
        """The run folder's disk refused a result (from the loop or the store's writer thread): a run
        that goes on would play episodes nobody can see, so it ends here; what was written stays."""
        with contextlib.suppress(RuntimeError):  # the loop is closed: the run ended already
            self.finished.get_loop().call_soon_threadsafe(
                self.finish, "failed", f"results cannot be written: {problem}; no more episodes were dealt, "
                "and what was written is kept: make room and run the same command again to resume")

    # events from the supervisor -------------------------------------------------------------
    def node_exited(self, node_id: str, code: int | None, will_restart: bool, error: str | None = None) -> None:
        """``error``: why the node could not even be started (a missing command, no room on a Ray
        cluster), which says more than its exit code 127."""
        st = self.nodes[node_id]
        if error is not None:
            st.error = error
        if st.state not in ("done", "stopped"):
            st.state = "restarting" if will_restart else ("stopped" if code == 0 else "failed")
        if self.finished.done():
            return  # the graph is stopping: nothing to retry
        self.book.store.error("node_exit", f"exit code {code}" + ("; restarting" if will_restart else ""),
                              node=node_id)
        self._asks.pop(node_id, None)  # its process is gone: nobody waits for that answer
        drives = st.driver or self.book.owns_episodes(node_id)
        lost = self.book.node_lost(node_id, all_in_flight=not drives)
        if lost:
            log.warning("episodes returned to the deck", node=node_id, episodes=sorted(lost))
            self._abandon(lost, node_id)
        for listener in self.exit_listeners:
            listener(node_id, code, will_restart, set(lost))
        if st.state == "failed" and not self.started:
            self.finish("failed", f"node {node_id!r} could not be started: {error}" if error is not None else
                        f"node {node_id!r} exited with code {code} before the run started")
        self.check_done()
        self._answer_asks()

    def _abandon(self, lost: dict[str, str], dead: str) -> None:
        """Tell the drivers still playing returned episodes to drop them: a node the episode needed
        died, so what it played from here on (default actions, lost messages) is no result. The
        episode is dealt again, once the graph is whole (``next_episode``)."""
        for eid, owner in lost.items():
            if owner != dead and self.nodes.get(owner) is not None and self.nodes[owner].state == "running":
                self.send(owner, "abandon", {"episode": eid, "reason": f"node {dead} exited"})

    # messaging ------------------------------------------------------------------------------
    def send(self, node_id: str, cmd: str, body: Any) -> None:
        self._send(node_id.encode(), CTL, cmd, body, dst=node_id)

    def _send(self, identity: bytes, kind: str, topic: str, body: Any, *, dst: str | None = None,
              cid: int | None = None) -> None:
        """Every message the kernel sends. NOBLOCK: a peer that is gone never holds up the kernel."""
        try:
            self.sock.send_multipart([identity, *protocol.encode(kind, "kernel", topic, body, dst=dst, cid=cid)],
                                     flags=zmq.NOBLOCK)
        except zmq.ZMQError:
            pass  # the peer is gone: the supervisor reports a node's exit, and an asker asks again
        self._kick()

    def broadcast(self, cmd: str, body: Any) -> None:
        for node_id, st in self.nodes.items():
            if st.state in CONNECTED:
                self.send(node_id, cmd, body)

    def _kick(self) -> None:
        """A send can consume the FD's edge: drain soon if something waits. Once: a drain left with
        messages reschedules itself, and a second chain of them would double the reads per turn."""
        if not self._drain_soon and not self.sock.closed and readable(self.sock):
            self._drain_soon = True
            asyncio.get_running_loop().call_soon(self._drain)

    def _drain(self) -> None:
        """Read at most DRAIN_BATCH messages, then let the loop run timers and other sockets.

        The zmq FD is edge-triggered: stopping with messages left means no new edge may come, so
        the drain reschedules itself."""
        self._drain_soon = False
        for _ in range(DRAIN_BATCH):
            if self.sock.closed or not readable(self.sock):
                return
            try:
                if self._curve is not None:  # who sent it is the key it connected with
                    frames, key = recv_frames_keyed(self.sock, 3)
                else:
                    frames, key = recv_frames(self.sock, 3), None
            except zmq.Again:
                return
            identity = frames[0]
            try:
                msg = protocol.decode(frames[1:], self.lf.bus.max_message_bytes)
            except protocol.ProtocolError as exc:
                self.bad.note(identity.decode(errors="replace"), str(exc))
                continue
            try:
                self._handle(identity, msg, key)
            except Exception as exc:  # a bad peer must never take the kernel down
                self.bad.note(identity.decode(errors="replace"),
                              f"{msg.kind} {truncated(msg.topic)}: handler failed: {type(exc).__name__}: {exc}",
                              exc_info=True)
        self._kick()

    def _handle(self, identity: bytes, msg: Message, key: str | None = None) -> None:
        """``key``: the CURVE public key the message came with (None on a bus without CURVE)."""
        st = self.nodes.get(msg.src)
        who = identity.decode(errors="replace")
        error = None
        if identity != msg.src.encode():
            # Nodes connect with IDENTITY = their id, clients with their own name: anything else
            # lies about who sent it (on a plain bus, the header's src is the only name there is).
            error = (f"{msg.kind} {truncated(msg.topic)} claims src {truncated(msg.src)!r}, but came from a "
                     f"connection whose ZeroMQ identity is {truncated(who)!r}; "
                     "a node sets its control socket's identity to its node id")
        elif self.keys is not None:
            # A name is the sender's to choose, its key is not: under CURVE, src must be the key's.
            error = self.keys.speaker_error(msg.src, key, f"{msg.kind} {truncated(msg.topic)}")
        if error is not None:
            self.bad.note(who, error)
            if msg.kind == CTL and msg.topic == "hello":  # a misconfigured node waits for an answer
                self._send(identity, CTL, "reject", {"error": error})  # it waits for an answer, then exits
            return
        if st is not None:
            st.heard = time.monotonic()
        if msg.kind == REQ:
            self._serve(identity, msg)
        elif st is None:
            if msg.kind == CTL and msg.topic == "hello":
                error = (f"node id {truncated(msg.src)!r} is not in the launch file {self.lf.source.name}; "
                         f"its nodes are: {', '.join(self.nodes)}")
                self.bad.note(who, f"hello from an unknown node: {error}")
                self._send(identity, CTL, "reject", {"error": error})
            else:
                self.bad.note(who, f"{msg.kind} {truncated(msg.topic)} from {truncated(msg.src)!r}, which is no "
                              "node of this graph")
        elif msg.kind == TAP:
            error = messages.check("tap", msg.body)
            if error is not None:
                self.bad.note(msg.src, error)
                return
            for tap in msg.body:
                if tap[0] == DATA:
                    self.edge_sent[(msg.src, tap[2], tap[1])] += 1
        elif msg.kind == CTL:
            error = messages.check(msg.topic, msg.body)
            if error is not None:
                self.bad.note(msg.src, error)
                if msg.topic == "hello":  # the node waits for an answer: tell it why, and fail the run
                    self._refuse(msg.src, st, error)
                return
            self._control(msg.src, st, msg.topic, msg.body or {})
        else:
            self.bad.note(msg.src, f"a {truncated(msg.kind)!r} message: the kernel takes only ctl, tap and req")

    def _refuse(self, node_id: str, st: NodeState, error: str) -> None:
        st.state = "failed"
        st.error = error
        self.send(node_id, "reject", {"error": error})
        self.finish("failed", error)

    def _control(self, node_id: str, st: NodeState, cmd: str, body: Any) -> None:
        """``body`` was checked against its structure (kernel.bus.messages) on arrival."""
        if cmd == "hello":
            self._hello(node_id, st, body)
        elif cmd == "ready":
            st.state = "ready"
            if self.started:
                self._run(node_id, st)
            elif all(s.state == "ready" for s in self.nodes.values()):
                self.ready_event.set()
        elif cmd in ("hb", "bye"):  # bye: the last stats, as the node exits
            hb: Heartbeat = body
            st.stats = dict(hb.get("stats", st.stats))
        elif cmd == "done":
            if not body.get("ok", True) and self._restarts_left(st):
                # Its run raised: the process exits next and the supervisor starts it again, as for a
                # crash; the episodes it was playing go back to the deck then (node_exited).
                log.warning("node failed; its restart policy starts it again", node=node_id, error=body.get("error"))
                st.state = "restarting"
                return
            st.state = "done"
            if not body.get("ok", True):
                st.error = body.get("error")
            self.check_done()

    @staticmethod
    def _restarts_left(st: NodeState) -> bool:
        """Whether the node's ``restart: on-failure`` policy still restarts it after this failure."""
        policy = st.spec.restart
        return policy.policy == "on-failure" and st.incarnation - 1 < policy.max_restarts

    def _hello(self, node_id: str, st: NodeState, hello: Hello) -> None:
        spec = st.spec
        declared_in = set(hello["inputs"])
        problems = [
            f"the launch file ({self.lf.source.name}) wires input {name!r} of node {node_id!r}, "
            f"but the node declares inputs: {sorted(declared_in) or 'none'}"
            for name in spec.inputs if name not in declared_in
        ]
        outputs = hello["outputs"]
        for src_node, output, dst, inp in self.lf.edges():
            if src_node == node_id and output not in outputs:
                problems.append(f"node {dst!r} input {inp!r} reads '{src_node}/{output}', but node {node_id!r} "
                                f"declares outputs: {outputs or 'none'}")
        if self.keys is not None and hello.get("curve") != self.keys.nodes[node_id].public:
            problems.append(f"node {node_id!r} presented CURVE key {hello.get('curve')!r}, not the one issued to it")
        if problems:
            self._refuse(node_id, st, "; ".join(problems))
            return
        st.pid, st.inbox, st.driver = hello["pid"], hello["inbox"], hello.get("driver", False)
        st.features = Features(shm=hello.get("shm", False))
        if self.keys is not None:
            st.features["curve"] = hello["curve"]
        st.incarnation += 1
        st.state = "registered"
        self.send(node_id, "welcome", self._welcome(spec))
        update = {node_id: self._peer(st)}
        for other_id, other in self.nodes.items():
            if other_id != node_id and other.state in CONNECTED:
                self.send(other_id, "peers", update)

    @staticmethod
    def _peer(st: NodeState) -> Peer:
        assert st.inbox is not None
        return Peer(inbox=st.inbox, incarnation=st.incarnation, features=st.features)

    def _welcome(self, spec: NodeSpec) -> Welcome:
        outputs: dict[str, list[Edge]] = {}
        rates: dict[str, dict[str, dict[str, float]]] = {}  # output -> dst -> input -> its rate
        for src_node, output, dst, inp in self.lf.edges():
            if src_node == spec.id:
                ispec = self.lf.node(dst).inputs[inp]
                outputs.setdefault(output, []).append(Edge(dst=dst, input=inp, policy=ispec.policy, size=ispec.size))
                if ispec.rate is not None:
                    rates.setdefault(output, {}).setdefault(dst, {})[inp] = ispec.rate
        return Welcome(
            params=spec.params,
            run={"seed": self.lf.run.seed, "episodes": self.lf.run.episodes, "name": self.lf.name},
            inputs={name: {"sources": i.sources, "policy": i.policy, "size": i.size, "rate": i.rate}
                    for name, i in spec.inputs.items()},
            outputs=outputs,
            observers=sorted(dst for dst in {e["dst"] for edges in outputs.values() for e in edges}
                             if self.lf.node(dst).observer),  # readers that are no judges (docs/protocol.md)
            rates=rates,
            peers={n: self._peer(s) for n, s in self.nodes.items() if s.inbox and s.state != "failed"},
            clock=None if spec.clock is None else {
                "mode": spec.clock.mode, "fps": spec.clock.fps, "deadline": spec.clock.deadline,
                "wait_for": spec.clock.wait_for, "default_action": spec.clock.default_action},
            heartbeat=self.lf.bus.heartbeat,
            grace=self.lf.bus.grace,
            max_message_bytes=self.lf.bus.max_message_bytes,
            records_delay=self.lf.bus.records_delay,
            trace=self.trace,
            run_dir=str(self.run_dir),
            results="bus" if self.ships(spec.id) else "local",
        )

    def check_done(self) -> None:
        if not self.started:
            return
        if self.book.done:
            self._answer_asks()  # drivers waiting for an episode hear there is none left
            self.finish("completed", f"all {self.book.total} episodes ended")
            return
        failed = [n for n, s in self.nodes.items() if s.state == "failed"]
        if failed:
            self.finish("failed", f"node(s) failed: {', '.join(failed)}")
        elif any(s.driver for s in self.nodes.values()) and self._drivers_idle():
            errors = [f"{n}: {s.error}" for n, s in self.nodes.items() if s.error]
            if errors:
                self.finish("failed", "; ".join(errors))
            elif self.book.total is None:
                if all(s.state in ("done", "stopped") for s in self.nodes.values() if s.driver):
                    self.finish("completed", "every driver finished")
            elif self._drain_timer is None and self._settled() and not self.book.returned:
                # Judges may still be scoring the last episodes: give them time to end them.
                self._arm_drain()

    def _at_work(self) -> bool:
        """A node other than the drivers is running an input handler or has messages queued (as its
        last heartbeat said)."""
        return any(any((s.stats.get("busy") or {}).values()) or any((s.stats.get("queued") or {}).values())
                   for s in self.nodes.values() if not s.driver and s.state not in ("done", "stopped", "failed"))

    def _drivers_idle(self) -> bool:
        """Every driver finished, or waits for an episode that only an episode in flight can free."""
        return all(s.state in ("done", "stopped") or n in self._asks for n, s in self.nodes.items() if s.driver)

    def _settled(self) -> bool:
        """No node is on its way back from a restart."""
        return not any(s.state in UNSETTLED for s in self.nodes.values())

    def _arm_drain(self, busy_rounds: int = 0) -> None:
        self._drain_mark = self.book.ended_count
        self._drain_busy = busy_rounds
        self._drain_timer = asyncio.get_running_loop().call_later(DRAIN_S, self._drained)

    def _drained(self) -> None:
        self._drain_timer = None
        if self.book.done or not (self._drivers_idle() and self._settled() and not self.book.returned):
            return  # an episode came back to the deck meanwhile and is being played again
        if self.book.ended_count > self._drain_mark:
            self._arm_drain()  # a slow judge (one that renders pages, asks a model) is still ending them
            return
        if self._drain_busy < DRAIN_BUSY_ROUNDS and self._at_work():
            # One episode's scoring may take longer than DRAIN_S (a model grader on a loaded machine):
            # wait on while a node still handles or holds messages, a bounded number of times.
            self._arm_drain(self._drain_busy + 1)
            return
        last = self.book.store.last_error
        self.finish("failed", f"the drivers have nothing left to play but only {self.book.ended_count}/"
                    f"{self.book.total} episodes were ended, none in the last {DRAIN_S:.0f} s (is a judge "
                    "missing, or not calling end_episode?)" + (f"; the last error on record: {last[:300]}"
                                                                if last else ""))

    # dealing episodes -----------------------------------------------------------------------
    def next_episode(self, src: str) -> Any:
        """An episode for ``src``, None when none is left, or DEFERRED: nothing to deal now, but an
        episode in flight may still come back to the deck (its node dies), or a node is restarting
        (an episode dealt now would meet it half set up). The ask is answered by ``_answer_asks``."""
        if self.finished.done():
            return None  # the run is ending (e.g. its results cannot be written): nothing more is dealt
        if not self._settled():
            return services.DEFERRED
        episode = self.book.deal(src)
        if episode is not None:
            attempt = self.book.attempt(episode["id"])
            if attempt > 1:
                # The dealt node learns it from the deal and carries it in what it publishes of the
                # episode (obs, step), so its readers know it before they record a step of it; the
                # broadcast reaches the nodes that read no such body. Alone it was not enough: a ctl
                # and an observation come on different sockets, in either order.
                episode = Dealt(**episode, attempt=attempt)
                self.broadcast("attempt", messages.AttemptNotice(episode=episode["id"], attempt=attempt))
            if self._drain_timer is not None:
                self._drain_timer.cancel()
                self._drain_timer = None
            return episode
        if self.book.total is not None and self.book.in_flight:
            return services.DEFERRED
        return None

    def _answer_asks(self) -> None:
        """Answer the deferred episode.next asks that can be answered now."""
        if self.finished.done():
            return  # the graph is stopping: its nodes are told to stop instead
        for src, (identity, cid) in list(self._asks.items()):
            result = self.next_episode(src)
            if result is services.DEFERRED:
                continue
            del self._asks[src]
            self._send(identity, REP, "episode.next", result, dst=src, cid=cid)

    # kernel services ------------------------------------------------------------------------
    def _serve(self, identity: bytes, msg: Message) -> None:
        try:
            error = messages.check(msg.topic, msg.body)
            if error is not None:
                self.bad.note(msg.src, error)
                if msg.topic == "results" and msg.src in self.nodes:
                    self.results_refused[msg.src] += 1
                raise ValueError(error)
            result = services.call(self, msg.src, msg.topic, msg.body or {})
            if result is services.DEFERRED:
                self._asks[msg.src] = (identity, msg.cid)
                self.check_done()  # every driver may be waiting now: time for the drain timer
                return
            self._send(identity, REP, msg.topic, result, dst=msg.src, cid=msg.cid)
        except Exception as exc:
            self._send(identity, ERR, msg.topic, {"error": str(exc), "type": type(exc).__name__},
                       dst=msg.src, cid=msg.cid)

    def take_results(self, src: str, body: dict[str, Any], nbytes: int) -> dict[str, Any]:
        """A batch of results shipped by a node on another machine (kernel.bus.outbox), its body
        already checked: queued for the writer thread, or refused (a node that writes its results
        itself, or any other sender) and counted."""
        if not self.ships(src):
            if src in self.nodes:
                self.results_refused[src] += 1
            error = (f"results from {truncated(src)!r}, which is no node that ships them (a node ships its "
                     "results only when it runs on another machine than the run folder; this one writes its own)")
            self.bad.note(src, error)
            raise PermissionError(error)
        if self.results is None:
            self.results = ResultsInbox(self.run_dir, self.book.store)
        self.results.take(src, body["items"], nbytes)
        return {"batch": body["batch"]}

    def results_facts(self, node_id: str) -> dict[str, Any]:
        """How a node's results reached the run folder, for summary.json: ``via`` (``local``: it wrote
        them itself; ``bus``: shipped), what it says it sent, and what the kernel took and refused."""
        facts: dict[str, Any] = {"via": "bus" if self.ships(node_id) else "local"}
        sent = self.nodes[node_id].stats.get("results")
        if isinstance(sent, dict):
            facts["sent"] = {k: v for k, v in sent.items() if k != "via"}
        if self.results is not None and (self.results.batches[node_id] or self.results.busy[node_id]):
            facts.update(self.results.facts(node_id))
        if self.results_refused[node_id]:
            facts["refused"] = self.results_refused[node_id]
        return facts

    def summary_sections(self) -> dict[str, Any]:
        """What nodes put in summary.json (Node.summarize), merged by kernel.graph.summary's rule."""
        return merge_sections({n: s.stats["summary"] for n, s in self.nodes.items()
                               if isinstance(s.stats.get("summary"), dict)})

    def bus_facts(self) -> dict[str, Any]:
        """How this run's bus carried its messages, for summary.json: a reader of a multi-host run
        checks that CURVE was on and how many handshakes it refused."""
        refused = {n: int(s.stats.get("curve_refused") or 0) for n, s in self.nodes.items()}
        refused["kernel"] = self._curve.refused if self._curve is not None else 0
        return {"transport": self.lf.bus.transport, "endpoint": self.endpoint, "curve": self.keys is not None,
                "curve_refused": sum(refused.values()),
                "curve_refused_by": {n: k for n, k in refused.items() if k}}

    def status(self) -> dict[str, Any]:
        return {
            "run": self.lf.name, "pid": os.getpid(), "paused": self.paused, "started": self.started,
            "episodes": self.book.counts(),
            "endpoint": self.endpoint, "curve": self.keys is not None,
            "nodes": {n: {"state": s.state, "pid": s.pid, "incarnation": s.incarnation, "inbox": s.inbox,
                          "clock": s.stats.get("clock")} for n, s in self.nodes.items()},
        }

    async def settle(self, timeout: float = 5.0) -> None:
        """Before stopping a finished run, wait (bounded) until every ``block`` edge has delivered
        what was sent on it: those edges promise to lose nothing (judges, the recorder), and the
        last messages may still be in flight when the last episode ends. Counts travel with taps
        and heartbeats, so two matching readings a heartbeat apart are asked for."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        calm = 0
        while loop.time() < deadline and calm < 2:
            await asyncio.sleep(self.lf.bus.heartbeat)
            pending = [e for e in self.stats()["edges"]
                       if e["policy"] == "block" and e["sent"] > e["received"] + e["dropped"]]
            calm = 0 if pending else calm + 1
        if calm < 2:
            log.warning("stopping with messages still in flight on block edges", edges=[e["edge"] for e in pending])

    def stats(self) -> dict[str, Any]:
        """Per-edge traffic: what senders sent (taps) and what receivers kept and dropped."""
        edges = []
        for src_node, output, dst_node, inp in self.lf.edges():
            per_source = self.nodes[dst_node].stats.get("inputs", {}).get(inp, {})
            rstats = per_source.get(f"{src_node}/{output}") or per_source.get(src_node, {})
            sdrop = self.nodes[src_node].stats.get("send_dropped", {}).get(f"{output}->{dst_node}", 0)
            thinned = self.nodes[src_node].stats.get("thinned", {}).get(f"{output}->{dst_node}", 0)
            edges.append({
                "edge": f"{src_node}/{output} -> {dst_node}/{inp}",
                "policy": self.lf.node(dst_node).inputs[inp].policy,
                "sent": self.edge_sent[(src_node, output, dst_node)],
                "received": rstats.get("received", 0),
                "dropped": rstats.get("dropped", 0) + sdrop,
                "queued": self.nodes[dst_node].stats.get("queued", {}).get(inp, 0),
                **({"thinned": thinned} if thinned else {}),  # never sent: the input's ``rate``
            })
        decode_errors = {n: s.stats.get("decode_errors", {}) for n, s in self.nodes.items() if s.stats.get("decode_errors")}
        if self.bad.counts:
            decode_errors["kernel"] = dict(self.bad.counts)
        # well-formed calls the kernel refused (kernel.graph.trust), per sender
        refused = {"refused": dict(self.refused.counts)} if self.refused.counts else {}
        # heartbeats and taps a node skipped while this kernel read nothing (its queue was full)
        ctl_dropped = {n: s.stats["ctl_dropped"] for n, s in self.nodes.items() if s.stats.get("ctl_dropped")}
        ctl_waited = {n: s.stats["ctl_waited"] for n, s in self.nodes.items() if s.stats.get("ctl_waited")}
        # sends to a peer whose queue was full (it read nothing): credits and releases went again later,
        # requests failed at once
        backed_up = {n: s.stats["backed_up"] for n, s in self.nodes.items() if s.stats.get("backed_up")}
        return {"edges": edges, "decode_errors": decode_errors, **refused, **({"ctl_dropped": ctl_dropped} if ctl_dropped else {}),
                **({"ctl_waited": ctl_waited} if ctl_waited else {}), **({"backed_up": backed_up} if backed_up else {})}

    def quiet_nodes(self) -> dict[str, float]:
        """Connected nodes not heard from for over three heartbeats, with their silence in seconds:
        an environment's lockstep clock waits for such an agent instead of applying its default
        action (it is cut off, not slow)."""
        now, limit = time.monotonic(), 3 * self.lf.bus.heartbeat
        return {n: round(now - s.heard, 2) for n, s in self.nodes.items()
                if s.state in CONNECTED and s.heard and now - s.heard > limit}

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.lf.bus.heartbeat)
            quiet = self.quiet_nodes()
            self.broadcast("hb", {"quiet": quiet} if quiet else {})
            if self._asks:
                self._answer_asks()  # a restarted node came back (it says ready on the control path)

