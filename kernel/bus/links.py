"""A node's links to its peers: the DEALER to each peer's inbox, the credits of ``block`` edges,
the shared-memory leases of large arrays, and the taps that tell the kernel what was sent.

Kept apart from the runtime's lifecycle (kernel.sdk.runtime) because this is the data plane: what
one ``publish`` costs is decided here, and nothing here waits on the kernel.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any, Callable, Sequence

import zmq

from kernel.bus import protocol
from kernel.bus.badtraffic import BadTraffic, credit_error, release_error
from kernel.bus.curve import NodeCurve
from kernel.bus.messages import Edge, Peer
from kernel.bus.protocol import CREDIT, DATA, RELEASE, TAP, Message
from kernel.bus.shm import ShmPool, ShmReader
from kernel.bus.sockets import COPY_THRESHOLD, nbytes_of, send_frames, writable
from kernel.bus.thinning import Thinner

_NOBLOCK = int(zmq.NOBLOCK)
TAP_FLUSH_S = 0.1
TAP_BATCH = 512
# While the kernel reads nothing (stopped, or cut off past the send queue's HWM), taps wait here, the
# newest this many; older ones are counted in ``ctl_dropped["taps"]``: the node never blocks on them.
MAX_HELD_TAPS = 16 * TAP_BATCH
MAX_CTL_BACKLOG = 10_000  # other messages to the kernel waiting for room; past this, counted and dropped
CREDIT_DELAY_S = 0.005  # credits short of half a window wait this long for company
BACKED_UP_RETRY_S = 0.1  # credits and releases a peer could not take (its queue is full) go again this often
RELEASE_BATCH = 8  # shared-memory slots released per message at most ...
RELEASE_DELAY_S = 0.02  # ... or after this long
RECORDS_DELAY_S = 0.02  # a record for a peer that reads only records waits at most this long for company ...
RECORDS_BATCH = 32  # ... or for this many others (fewer where that peer's queue is smaller)

OutEdge = tuple[str, str, str, int]  # (dst node, its input, policy, queue size): messages.Edge unpacked
Watch = Callable[[zmq.Socket, str], None]


class Links:
    """Peer sockets, credits, leases and taps of one node; the runtime holds one."""

    def __init__(self, node_id: str, ctx: zmq.Context[Any], *, curve: NodeCurve | None, shm_dir: Path | None,
                 bad: BadTraffic, kick: Callable[[zmq.Socket], None]) -> None:
        self.id = node_id
        # Every socket here is also read (replies, the kernel's commands), and its FD is
        # edge-triggered: a send may consume the signal of a message that just arrived, so each send
        # is followed by ``kick`` (kernel.bus.reading), which schedules a read if one is waiting.
        self.kick = kick
        self.ctx = ctx
        self.curve = curve
        self.shm_dir = shm_dir
        self.bad = bad
        self._loop: asyncio.AbstractEventLoop | None = None  # where shared-memory leases end (configure)
        self.ctl: zmq.Socket | None = None  # where taps and requests to the kernel go: the runtime's socket
        self.peers: dict[str, zmq.Socket] = {}  # the peers the kernel announced, by node id
        self._peer_endpoints: dict[str, str] = {}
        self._peer_shm: dict[str, bool] = {}
        self.out_edges: dict[str, list[OutEdge]] = {}
        self.out_dsts: dict[str, list[str]] = {}
        # outputs with a ``block`` edge: only their publish has credits to take (and may wait)
        self.blocking: set[str] = set()
        self.credits: dict[tuple[str, str], int] = {}  # (dst, its input) of block edges -> credits left
        self._credit_sizes: dict[tuple[str, str], int] = {}  # ... -> credits a fresh receiver gives
        self.credit_event = asyncio.Event()
        self._credit_due: Counter[tuple[str, str]] = Counter()  # (src, my input) -> credits to return
        self._credit_timer: asyncio.TimerHandle | None = None
        self._released: dict[str, list[int]] = {}
        self._release_timer: asyncio.TimerHandle | None = None
        self._main_thread = threading.get_ident()
        self.shm_pool: ShmPool | None = None
        self.shm_reader: ShmReader | None = None
        self._taps: list[list[Any]] = []
        self._ctl_full = False  # the last flush found the kernel's queue full: only the timer retries
        self._ctl_backlog: deque[tuple[str, list[Any]]] = deque()  # (topic, frames) waiting for room, in order
        self.ctl_waited = 0  # messages to the kernel that had to wait in the backlog (none lost)
        self.ctl_dropped: Counter[str] = Counter()  # heartbeats and taps the kernel's full queue had no room for
        self.seq = 0
        self._max_bytes = 0  # the welcome's max_message_bytes, as the last send was given it
        self.sent: Counter[str] = Counter()
        self.send_dropped: Counter[str] = Counter()  # "output->dst" that could not be sent
        self.backed_up: Counter[str] = Counter()  # peer -> sends refused (credits, releases, requests): its queue was full
        self.thinner = Thinner(self._deliver_late)  # edges with a ``rate``
        # Records (``Node.records``) for peers that read nothing else of this node: held and sent a few at
        # a time, so that a judge wakes once per batch instead of competing for a core on every step.
        self.records_delay = RECORDS_DELAY_S  # the welcome's bus.records_delay; 0: every record goes at once
        self._hold_limits: dict[tuple[str, str], int] = {}  # (record output, peer) -> records held at most
        self._held: list[tuple[str, str, list[Any], int, int, str | None]] = []  # (output, dst, frames, nbytes, seq, tp)
        self._held_per_dst: Counter[str] = Counter()
        self._held_timer: asyncio.TimerHandle | None = None
        self.records_batched = 0  # records that travelled in a batch

    def configure(self, outputs: dict[str, list[Edge]], shm_name: str,
                  rates: dict[str, dict[str, dict[str, float]]] | None = None, *,
                  records: Sequence[str] = (), records_delay: float = RECORDS_DELAY_S) -> None:
        self._loop = asyncio.get_running_loop()
        for output, edges in outputs.items():
            # tuples on the send path: unpacked once per message and edge
            self.out_edges[output] = [(e["dst"], e["input"], e["policy"], e["size"]) for e in edges]
            if any(e["policy"] == "block" for e in edges):
                self.blocking.add(output)
            self.out_dsts[output] = sorted({e["dst"] for e in edges})
            for e in edges:
                if e["policy"] == "block":
                    self._credit_sizes[(e["dst"], e["input"])] = e["size"]
            wanted = (rates or {}).get(output, {})
            for dst in self.out_dsts[output]:
                self.thinner.configure(output, dst, [wanted.get(dst, {}).get(e["input"]) for e in edges
                                                     if e["dst"] == dst])
        self.credits = dict(self._credit_sizes)
        self.records_delay = records_delay
        self._hold_limits = self._record_holds(records) if records_delay > 0 else {}
        if self.shm_dir is not None:
            self.shm_pool = ShmPool(shm_name, self.shm_dir)
            self.shm_reader = ShmReader(self.shm_dir, self.lease_released)

    # sending ----------------------------------------------------------------------------------
    async def take_credits(self, output: str, check: Callable[[], None]) -> None:
        """One credit per ``block`` edge of ``output``, waiting for the slow ones; ``check`` may raise
        to give up (an abandoned episode)."""
        for dst, inp, policy, _ in self.out_edges[output]:
            if policy == "block":
                key = (dst, inp)
                while self.credits.get(key, 0) <= 0:
                    self.flush_records()  # never wait for credits that records held here would earn
                    self.credit_event.clear()
                    await self.credit_event.wait()
                    check()
                self.credits[key] -= 1

    def send(self, output: str, body: Any, *, step: int | None, max_bytes: int, traceparent: str | None) -> None:
        self._max_bytes = max_bytes
        dsts = self.thinner.now(output, self.out_dsts[output], body, step, traceparent)
        if dsts:
            self._send_to(output, body, step, traceparent, dsts)
        self.sent[output] += 1

    def _deliver_late(self, output: str, body: Any, step: int | None, traceparent: str | None,
                      dsts: list[str]) -> None:
        """A thinned edge's newest message, when its slot comes (from a timer: nobody to raise to)."""
        try:
            self._send_to(output, body, step, traceparent, dsts)
        except Exception:
            for dst in dsts:
                self.send_dropped[f"{output}->{dst}"] += 1

    def _send_to(self, output: str, body: Any, step: int | None, traceparent: str | None, dsts: list[str]) -> None:
        self.seq += 1
        max_bytes = self._max_bytes
        pool = self.shm_pool if self.shm_pool is not None and all(self._peer_shm.get(d) for d in dsts) else None
        try:
            frames = protocol.encode(DATA, self.id, output, body, seq=self.seq, traceparent=traceparent,
                                     step=step, max_bytes=max_bytes, place=pool.place if pool is not None else None)
        except Exception:  # e.g. over max_message_bytes: the slots already filled are nobody's, free them
            if pool is not None:
                pool.hold_placed(set())
            raise
        nbytes = nbytes_of(frames)
        copy = nbytes < COPY_THRESHOLD
        # Only plain bytes wait: an array frame is the sender's own buffer, and a slot needs its holders now.
        holdable = bool(self._hold_limits) and len(frames) == 2 and (pool is None or not pool.placing)
        delivered: set[str] = set()
        for dst in dsts:
            if holdable and (limit := self._hold_limits.get((output, dst))):
                self._hold(output, dst, frames, nbytes, traceparent, limit)
                continue
            sock = self.peers.get(dst)
            try:
                if sock is None:
                    raise zmq.Again()
                send_frames(sock, frames, copy, _NOBLOCK)
            except zmq.Again:
                if sock is not None:
                    self.kick(sock)
                self._undelivered(output, dst)
                continue
            self.kick(sock)
            delivered.add(dst)
            self.tap(DATA, dst, output, self.seq, nbytes, traceparent)
        if pool is not None:
            pool.hold_placed(delivered)

    def _undelivered(self, output: str, dst: str) -> None:
        self.send_dropped[f"{output}->{dst}"] += 1
        for edst, inp, policy, _ in self.out_edges[output]:
            if edst == dst and policy == "block":
                self.credits[(dst, inp)] += 1  # nothing was delivered, so nothing will be credited back

    # records ----------------------------------------------------------------------------------
    def _record_holds(self, records: Sequence[str]) -> dict[tuple[str, str], int]:
        """Which record edges may wait for company, and for how many records at most.

        A peer that also reads an output that is not a record decides on what it gets (an agent, a
        GraphEnv stand-in): it gets everything at once, in order. For the others a batch stays well
        inside the peer's queue: half a ``fifo`` (a burst must not push out what it has not read), a
        quarter of a ``block`` window (a batch and the peer's unreturned half window never use up the
        credits), never a ``latest`` (it keeps one message)."""
        deciders = {e[0] for output, edges in self.out_edges.items() if output not in records for e in edges}
        limits: dict[tuple[str, str], int] = {}
        for output in records:
            for dst in self.out_dsts.get(output, ()):
                if dst in deciders:
                    continue
                room = [size // 4 if policy == "block" else size // 2 if policy == "fifo" else 0
                        for edst, _, policy, size in self.out_edges[output] if edst == dst]
                limit = min([RECORDS_BATCH, *room])
                if limit >= 2:
                    limits[(output, dst)] = limit
        return limits

    def _hold(self, output: str, dst: str, frames: list[Any], nbytes: int, traceparent: str | None,
              limit: int) -> None:
        self._held.append((output, dst, frames, nbytes, self.seq, traceparent))
        self.records_batched += 1
        self._held_per_dst[dst] += 1
        if self._held_per_dst[dst] >= limit:
            self.flush_records()
        elif self._held_timer is None:
            self._held_timer = asyncio.get_running_loop().call_later(self.records_delay, self.flush_records)

    def flush_records(self) -> None:
        """Send the records held for readers of records only, in the order they were published.

        Called when a batch is full or its time is up, and before anything of this node that another
        may wait on: a request (the next episode, a service), a wait for credits, the end of the run.
        So a judge has an episode's last step before the environment asks for the next episode."""
        if self._held_timer is not None:
            self._held_timer.cancel()
            self._held_timer = None
        if not self._held:
            return
        held, self._held = self._held, []
        self._held_per_dst.clear()
        kicked: dict[str, zmq.Socket] = {}
        for output, dst, frames, nbytes, seq, traceparent in held:
            sock = self.peers.get(dst)
            if sock is None or sock.closed:
                self._undelivered(output, dst)
                continue
            kicked[dst] = sock
            try:
                send_frames(sock, frames, True, _NOBLOCK)
            except zmq.Again:
                self._undelivered(output, dst)
                continue
            self.tap(DATA, dst, output, seq, nbytes, traceparent)
        for sock in kicked.values():
            self.kick(sock)

    # peers ------------------------------------------------------------------------------------
    def update(self, peers: dict[str, Peer], watch: Watch) -> list[str]:
        """Connect to new or moved peers; returns the ones that restarted (their old socket is gone)."""
        restarted = []
        for node, peer in peers.items():
            endpoint, features = peer["inbox"], peer["features"]
            self._peer_shm[node] = features.get("shm", False) and self.shm_dir is not None
            if node == self.id or self._peer_endpoints.get(node) == endpoint:
                continue
            if self.shm_pool is not None:
                self.shm_pool.release_holder(node)  # a restarted receiver holds none of our slots
            old = self.peers.pop(node, None)
            if old is not None:
                asyncio.get_running_loop().remove_reader(old.getsockopt(zmq.FD))
                old.close(linger=0)
                restarted.append(node)
            sock = self.ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.IDENTITY, self.id.encode())
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, 10000)
            if self.curve is not None:
                self.curve.connect_peer(sock, node, features)
            sock.connect(endpoint)
            self.peers[node] = sock
            self._peer_endpoints[node] = endpoint
            watch(sock, node)
            if old is not None:  # a restarted peer has fresh, empty queues
                for (dst, inp), size in self._credit_sizes.items():
                    if dst == node:
                        self.credits[(dst, inp)] = size
                self.credit_event.set()
        return restarted

    # credits and leases -----------------------------------------------------------------------
    def on_credit(self, msg: Message) -> None:
        error = credit_error(msg.body, msg.src, self.credits)
        if error is not None:
            self.bad.note(msg.src, error)
            return
        self.credits[(msg.src, msg.body["input"])] += msg.body["n"]
        self.credit_event.set()

    def on_release(self, msg: Message) -> None:
        pool = self.shm_pool
        error = release_error(msg.body, pool.slot_count if pool is not None else None)
        if error is not None:
            self.bad.note(msg.src, error)
            return
        for slot in msg.body["slots"]:
            pool.release(slot, msg.src)  # type: ignore[union-attr]

    def return_credit(self, name: str, window: int, msg: Message) -> None:
        """A message of a ``block`` input was taken: its credit goes back once half the sender's
        ``window`` is due (so the sender never waits in steady state) or after ``CREDIT_DELAY_S``
        (the tail of a burst), not one message per message taken."""
        key = (msg.src, name)
        self._credit_due[key] += 1
        if self._credit_due[key] >= max(1, window // 2):
            n = self._credit_due.pop(key)
            if not self._send_back(msg.src, CREDIT, "credit", {"input": name, "n": n}):
                self._credit_due[key] += n
                self._arm_credit_timer(BACKED_UP_RETRY_S)
        else:
            self._arm_credit_timer(CREDIT_DELAY_S)

    def _arm_credit_timer(self, delay: float) -> None:
        if self._credit_timer is None:
            self._credit_timer = asyncio.get_running_loop().call_later(delay, self._flush_credits)

    def _flush_credits(self) -> None:
        self._credit_timer = None
        due, self._credit_due = self._credit_due, Counter()
        for (src, name), n in due.items():
            if not self._send_back(src, CREDIT, "credit", {"input": name, "n": n}):
                self._credit_due[(src, name)] += n  # its sender reads nothing now: it gets them later
        if self._credit_due:
            self._arm_credit_timer(BACKED_UP_RETRY_S)

    def lease_released(self, src: str, slot: int) -> None:
        """The last view of a shared-memory array died: tell its sender, in batches of
        ``RELEASE_BATCH`` slots or after ``RELEASE_DELAY_S``. A fast agent drops a frame per
        decision; a message per frame back to the environment was a third of its bus traffic, and
        the environment only needs its slots back before its pool would have to grow."""
        try:
            if threading.get_ident() != self._main_thread:
                self._loop.call_soon_threadsafe(self.lease_released, src, slot)  # type: ignore[union-attr]
                return
            slots = self._released.setdefault(src, [])
            slots.append(slot)
            if len(slots) >= RELEASE_BATCH:
                batch = self._released.pop(src)
                if not self._send_back(src, RELEASE, "release", {"slots": batch}):
                    self._released.setdefault(src, [])[:0] = batch
                    self._arm_release_timer(BACKED_UP_RETRY_S)
            else:
                self._arm_release_timer(RELEASE_DELAY_S)
        except RuntimeError:
            pass  # the loop is closed: the process is exiting and its sender frees everything

    def _arm_release_timer(self, delay: float) -> None:
        if self._release_timer is None:
            self._release_timer = self._loop.call_later(delay, self._flush_released)  # type: ignore[union-attr]

    def _flush_released(self) -> None:
        self._release_timer = None
        released, self._released = self._released, {}
        for src, slots in released.items():
            if not self._send_back(src, RELEASE, "release", {"slots": slots}):
                self._released.setdefault(src, [])[:0] = slots
        if self._released:
            self._arm_release_timer(BACKED_UP_RETRY_S)

    def _send_back(self, src: str, kind: str, topic: str, body: Any) -> bool:
        """A credit or release to the sender ``src``, if it is still a peer. Never blocks the loop:
        False when the DEALER to ``src`` is full (it reads nothing: stopped, hung or cut off), and
        the caller keeps what it had to say for a later try; a gone peer needs nothing back."""
        sock = self.peers.get(src)
        if sock is None or sock.closed:
            return True
        try:
            send_frames(sock, protocol.encode(kind, self.id, topic, body, dst=src), True, _NOBLOCK)
        except zmq.Again:
            self.backed_up[src] += 1
            return False
        finally:
            self.kick(sock)
        return True

    # taps -------------------------------------------------------------------------------------
    def tap(self, kind: str, dst: str, topic: str, seq: int, nbytes: int, traceparent: str | None) -> None:
        self._taps.append([kind, dst, topic, seq, time.time(), nbytes, traceparent])
        if len(self._taps) >= TAP_BATCH and not self._ctl_full:
            self.flush_taps()

    # the control DEALER: to the kernel, never blocking -----------------------------------------
    def send_ctl(self, topic: str, frames: list[Any]) -> None:
        """Send to the kernel without blocking the loop: while the DEALER's queue is full (the kernel
        reads nothing: stopped, or cut off) messages wait here in order and go out from the tap timer."""
        ctl = self.ctl
        if ctl is None or ctl.closed:
            return
        if self._ctl_backlog or not writable(ctl):
            if len(self._ctl_backlog) >= MAX_CTL_BACKLOG:
                self.ctl_dropped[topic] += 1
            else:
                self._ctl_backlog.append((topic, frames))
                self.ctl_waited += 1
            return
        send_frames(ctl, frames, nbytes_of(frames) < COPY_THRESHOLD)
        self.kick(ctl)

    def ctl_has_room(self) -> bool:
        """True if a message to the kernel would go out now (nothing waits before it)."""
        ctl = self.ctl
        return ctl is not None and not ctl.closed and not self._ctl_backlog and writable(ctl)

    def _flush_ctl_backlog(self, ctl: zmq.Socket) -> None:
        sent = False
        while self._ctl_backlog and writable(ctl):
            _, frames = self._ctl_backlog.popleft()
            send_frames(ctl, frames, nbytes_of(frames) < COPY_THRESHOLD)
            sent = True
        if sent:
            self.kick(ctl)

    def flush_taps(self) -> None:
        """Send the pending taps, after whatever waits for room on the control DEALER."""
        ctl = self.ctl
        if ctl is None or ctl.closed:
            return
        if self._ctl_backlog:
            self._flush_ctl_backlog(ctl)
        if not self._taps:
            return
        self._ctl_full = not self.ctl_has_room()
        if self._ctl_full:  # sending would block this node's loop until the kernel reads again
            excess = len(self._taps) - MAX_HELD_TAPS
            if excess > 0:
                del self._taps[:excess]
                self.ctl_dropped["taps"] += excess
            return
        taps, self._taps = self._taps, []
        send_frames(ctl, protocol.encode(TAP, self.id, "tap", taps, dst="kernel"))
        self.kick(ctl)

    async def tap_flusher(self) -> None:
        while True:
            await asyncio.sleep(TAP_FLUSH_S)
            self.flush_taps()

    def close(self) -> None:
        for timer in (self._credit_timer, self._release_timer, self._held_timer):
            if timer is not None:
                timer.cancel()
        self.thinner.close()
        if self.shm_pool is not None:
            self.shm_pool.close()
