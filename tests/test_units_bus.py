"""Input queues and frame clocks on their own: no sockets, no processes, milliseconds each.

The process-level behaviour (the same policies across real sockets, ``launch ctl`` on a running
graph) is in test_bus.py and test_clock.py; these pin down the rules those rest on.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kernel.bus.errors import EpisodeAbandoned
from kernel.bus.inputs import InputQueue
from kernel.bus.protocol import DATA, Message
from kernel.sdk.clock import Clock


def msg(i: int, src: str = "a", topic: str = "out", step: int | None = None) -> Message:
    return Message(DATA, src, topic, {"i": i}, step=step)


def bodies(q: InputQueue) -> list[int]:
    out = []
    while (m := q.get_nowait()) is not None:
        out.append(m.body["i"])
    return out


# input queues ---------------------------------------------------------------------------------
def test_latest_keeps_only_the_newest_and_counts_the_rest():
    q = InputQueue("in", "latest", size=10)
    assert q.size == 1  # the size of a latest input is always 1
    for i in range(5):
        q.put(msg(i))
    assert len(q) == 1
    assert bodies(q) == [4]
    assert q.stats() == {"a/out": {"received": 5, "dropped": 4}}


def test_fifo_drops_the_oldest_when_full():
    q = InputQueue("in", "fifo", size=3)
    for i in range(7):
        q.put(msg(i))
    assert bodies(q) == [4, 5, 6]
    assert q.dropped["a/out"] == 4 and q.received["a/out"] == 7


def test_fifo_counts_per_source():
    q = InputQueue("in", "fifo", size=2)
    q.put(msg(0, src="a"))
    q.put(msg(1, src="b"))
    q.put(msg(2, src="b"))  # pushes out a's message
    assert q.stats() == {"a/out": {"received": 1, "dropped": 1}, "b/out": {"received": 2, "dropped": 0}}


def test_block_never_drops_even_past_its_size():
    q = InputQueue("in", "block", size=2)
    for i in range(5):  # the senders' credits bound this; the queue itself keeps everything
        q.put(msg(i))
    assert bodies(q) == [0, 1, 2, 3, 4]
    assert sum(q.dropped.values()) == 0


def test_size_is_at_least_one():
    assert InputQueue("in", "fifo", size=0).size == 1


def test_on_take_sees_every_message_taken_and_no_other():
    q = InputQueue("in", "block", size=4)
    taken: list[int] = []
    q.on_take = lambda m: taken.append(m.body["i"])
    for i in range(3):
        q.put(msg(i))
    assert taken == []  # queued is not taken: no credit goes back yet
    q.get_nowait()
    assert taken == [0]
    assert q.get_nowait() is not None and taken == [0, 1]


async def test_get_waits_for_a_put():
    q = InputQueue("in", "fifo", size=4)
    getter = asyncio.ensure_future(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.put(msg(7))
    assert (await asyncio.wait_for(getter, 1.0)).body == {"i": 7}


def test_get_nowait_on_empty_is_none():
    assert InputQueue("in").get_nowait() is None


def test_arrival_is_done_at_once_with_a_message_queued_and_on_the_next_put_without():
    loop = asyncio.new_event_loop()
    try:
        q = InputQueue("in", "fifo", size=4)
        waiting = q.arrival(loop.create_future())
        assert not waiting.done()
        q.put(msg(1))
        assert waiting.done()
        assert q.arrival(loop.create_future()).done()  # a message is queued: nothing to wait for
        assert q.get_nowait().body == {"i": 1} and q.get_nowait() is None
        given_up = q.arrival(loop.create_future())
        given_up.cancel()  # a wait given up (GraphEnv's timeout): a later put is still taken
        q.put(msg(2))
        assert q.arrival(loop.create_future()).done() and q.get_nowait().body == {"i": 2}
    finally:
        loop.close()


# clocks -------------------------------------------------------------------------------------
class Inputs:
    """What a runtime gives a clock: its queues by name, and who is wired into each."""

    def __init__(self, sources: list[str], size: int = 16) -> None:
        self.queues = {"action": InputQueue("action", "fifo", size)}
        self._sources = sources

    def clock(self, **spec: object) -> Clock:
        return Clock(dict(spec), self.queue, lambda name: list(self._sources))

    def queue(self, name: str) -> InputQueue:
        return self.queues[name]

    def act(self, agent: str, step: int, action: object) -> None:
        self.queues["action"].put(Message(DATA, agent, "act", action, step=step))


async def test_lockstep_waits_for_every_agent():
    world = Inputs(["p1", "p2"])
    clock = world.clock(mode="lockstep")
    world.act("p1", 0, "left")
    world.act("p2", 0, "right")
    assert await asyncio.wait_for(clock.actions(0), 1.0) == {"p1": "left", "p2": "right"}
    assert clock.frame == 1 and clock.decisions == 1 and clock.timeouts == 0


async def test_lockstep_deadline_gives_the_default_action():
    world = Inputs(["p1", "p2"])
    clock = world.clock(mode="lockstep", deadline=0.02, default_action="noop")
    world.act("p1", 0, "left")
    assert await clock.actions(0) == {"p1": "left", "p2": "noop"}
    assert clock.timeouts == 1


async def test_lockstep_waits_past_the_deadline_for_a_cut_off_agent_and_counts_the_stall():
    """The deadline is for slow agents, not lost ones (tests/test_clock.py shows it with a frozen
    process): while the kernel says an agent is cut off, its step waits, counted as a stall; once it
    is heard from again it gets a fresh deadline, and its answer is taken."""
    world = Inputs(["p1"])
    cut = {"p1": True}
    clock = Clock({"mode": "lockstep", "deadline": 0.05, "default_action": "noop"}, world.queue,
                  lambda name: ["p1"], cut_off=lambda node: cut.get(node, False))
    step = asyncio.ensure_future(clock.actions(0))
    await asyncio.sleep(0.3)  # six deadlines
    assert not step.done() and clock.timeouts == 0
    cut["p1"] = False  # back: a fresh deadline, inside which it answers
    world.act("p1", 0, "left")
    assert await asyncio.wait_for(step, 2.0) == {"p1": "left"}
    assert clock.stalls == 1 and clock.timeouts == 0


async def test_lockstep_skips_answers_to_earlier_steps():
    world = Inputs(["p1"])
    clock = world.clock(mode="lockstep")
    world.act("p1", 3, "late")
    world.act("p1", 4, "now")
    assert await asyncio.wait_for(clock.actions(4), 1.0) == {"p1": "now"}
    assert clock.stale == 1


async def test_lockstep_with_nobody_wired_steps_at_once():
    clock = Inputs([]).clock(mode="lockstep")
    assert await asyncio.wait_for(clock.actions(0), 1.0) == {}
    assert clock.frame == 1


async def test_realtime_newest_action_wins_and_frames_per_decision_are_counted():
    world = Inputs(["p1"])
    clock = world.clock(mode="realtime", fps=1000, default_action="idle")
    assert await clock.actions(0) == {"p1": "idle"}  # nothing yet: the world does not wait
    world.act("p1", 0, "a")
    world.act("p1", 0, "b")
    assert await clock.actions(1) == {"p1": "b"}
    assert clock.decisions == 2 and clock.frames_per_decision[1] == 2


async def test_pause_then_step_lets_exactly_n_steps_through():
    clock = Inputs([]).clock(mode="lockstep")
    clock.pause()
    blocked = asyncio.ensure_future(clock.gate())
    await asyncio.sleep(0.01)
    assert not blocked.done() and clock.paused
    clock.step(2)
    await asyncio.wait_for(blocked, 1.0)
    await asyncio.wait_for(clock.gate(), 1.0)
    assert clock.paused  # the budget is spent: paused again
    clock.resume()
    await asyncio.wait_for(clock.gate(), 1.0)
    assert not clock.paused


async def test_abandon_ends_the_step_waited_for_and_new_episode_drops_stale_actions():
    world = Inputs(["p1"])
    clock = world.clock(mode="lockstep")
    waiting = asyncio.ensure_future(clock.actions(0))
    await asyncio.sleep(0.01)
    clock.abandon("a node died")
    with pytest.raises(EpisodeAbandoned):
        await asyncio.wait_for(waiting, 1.0)
    with pytest.raises(EpisodeAbandoned):  # every later step too, until the next episode
        await clock.actions(1)
    world.act("p1", 0, "meant for the abandoned attempt")
    clock.new_episode()
    assert clock.abandoned is None and clock.stale == 1
    assert len(world.queues["action"]) == 0


async def test_actions_of_takes_every_agents_input_in_one_frame_and_a_new_episode_forgets_the_newest():
    """pettingzoo.env's clock call: an action input per agent, one frame (and one pause/step gate) for all."""
    queues = {n: InputQueue(n, "fifo", 8) for n in ("action_a", "action_b")}
    wired = {"action_a": ["a"], "action_b": ["b"]}
    names = list(queues)

    def put(name: str, agent: str, step: int, body: object) -> None:
        queues[name].put(Message(DATA, agent, "act", body, step=step))

    lockstep = Clock({"mode": "lockstep"}, queues.__getitem__, wired.__getitem__)
    put("action_b", "b", 0, "y")
    put("action_a", "a", 0, "x")
    got = await asyncio.wait_for(lockstep.actions_of(0, names), 1.0)
    assert got == {"action_a": {"a": "x"}, "action_b": {"b": "y"}} and lockstep.frame == 1
    realtime = Clock({"mode": "realtime", "fps": 1000}, queues.__getitem__, wired.__getitem__)
    put("action_a", "a", 0, {"stop": True})
    assert await realtime.actions_of(0, names) == {"action_a": {"a": {"stop": True}}, "action_b": {"b": None}}
    assert await realtime.actions_of(1, names) == {"action_a": {"a": {"stop": True}}, "action_b": {"b": None}}
    assert realtime.frame == 2  # the newest action holds from frame to frame, within the episode
    realtime.new_episode()  # not into the next one: a stop there would end every later episode at once
    assert await realtime.actions_of(0, names) == {"action_a": {"a": None}, "action_b": {"b": None}}


def test_clock_stats_without_decisions():
    stats = Inputs([]).clock().stats()
    assert stats["mode"] == "free" and stats["mean_frames_per_decision"] is None and stats["frame"] == 0


# shared memory on the sending side ------------------------------------------------------------
async def test_a_message_refused_on_encoding_gives_back_the_slots_it_filled(tmp_path):
    """An oversized message fails after its array already went to shared memory: that slot must be
    free again, not booked to the receivers of the next message (which would never release it)."""
    import numpy as np
    import structlog
    import zmq

    from kernel.bus.badtraffic import BadTraffic
    from kernel.bus.links import Links
    from kernel.bus.protocol import MessageTooLarge
    from kernel.bus.shm import THRESHOLD

    ctx = zmq.Context()
    links = Links("env", ctx, curve=None, shm_dir=tmp_path, bad=BadTraffic(structlog.get_logger(), "bad"),
                  kick=lambda sock: None)
    try:
        links.configure({"frame": [{"dst": "agent", "input": "obs", "policy": "latest", "size": 1}]}, "fb-test-env")
        links._peer_shm["agent"] = True  # the receiver said it reads shared memory
        big = np.zeros(THRESHOLD, np.uint8)
        with pytest.raises(MessageTooLarge, match="at most 1024"):
            links.send("frame", {"a": big, "pad": b"x" * 4096}, step=None, max_bytes=1024, traceparent=None)
        stats = links.shm_pool.stats()
        assert stats["slots"] > 0 and stats["free"] == stats["slots"]
        links.send("frame", {"a": big}, step=None, max_bytes=1 << 30, traceparent=None)  # no peer socket: dropped
        assert links.shm_pool.stats()["free"] == stats["slots"]
    finally:
        links.shm_pool.close()
        ctx.term()


# the edge-triggered zmq FD ------------------------------------------------------------------------
@pytest.mark.parametrize("send", ["nothing", "credit", "release", "data", "taps"])
async def test_a_reply_arriving_just_before_another_send_on_its_socket_is_still_read(tmp_path, send):
    """zmq's FD signals an arrival once, and any send on the socket may consume that signal. A reply
    that lands while the loop is busy, followed on the same socket by a credit, a shared-memory
    release, a data message or the taps (the control socket), must still be read: before the fix
    it sat unread until some later request touched the socket, so a judge's vwa.task request timed
    out after 60 s although the env had answered at once."""
    import time

    import structlog
    import zmq

    from kernel.bus import protocol
    from kernel.bus.badtraffic import BadTraffic
    from kernel.bus.links import Links
    from kernel.bus.protocol import CREDIT, RELEASE, REP
    from kernel.bus.reading import SocketReader

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    bad = BadTraffic(structlog.get_logger(), "bad")
    reader = SocketReader(bad)
    links = Links("judge", ctx, curve=None, shm_dir=None, bad=bad, kick=reader.kick)
    got: list[Any] = []
    try:
        links.configure({"score": [{"dst": "env", "input": "scores", "policy": "fifo", "size": 8}]}, "fb-test-judge")
        links.update({"env": {"inbox": f"tcp://127.0.0.1:{port}", "incarnation": 1, "features": {}}},
                     lambda sock, node: reader.watch(sock, lambda frames, peer: got.append(frames), node))
        sock = links.peers["env"]
        if send == "taps":  # the control socket is a watched DEALER too
            links.ctl = sock
        reader.send(sock, protocol.encode(protocol.REQ, "judge", "vwa.task", {}, dst="env", cid=1))
        assert router.poll(5000)
        identity, *_ = router.recv_multipart()
        await asyncio.sleep(0.05)  # the loop reads nothing more and waits on the FD
        router.send_multipart([identity, *protocol.encode(REP, "env", "vwa.task", {"task": 1}, dst="judge", cid=1)])
        time.sleep(0.2)  # the reply arrives while the loop is busy; the FD now signals it
        if send == "credit":
            links._send_back("env", CREDIT, "credit", {"input": "step", "n": 1})
        elif send == "release":
            links._send_back("env", RELEASE, "release", {"slots": [0]})
        elif send == "data":
            links.send("score", {"reward": 1.0}, step=None, max_bytes=1 << 20, traceparent=None)
        elif send == "taps":
            links.tap(protocol.DATA, "env", "score", 1, 10, None)
            links.flush_taps()
        for _ in range(100):
            await asyncio.sleep(0.01)
            if got:
                break
        assert len(got) == 1, "the reply was never read: a send consumed the FD's only signal"
    finally:
        for s in links.peers.values():
            asyncio.get_running_loop().remove_reader(s.getsockopt(zmq.FD))
            s.close(linger=0)
        router.close(linger=0)
        ctx.term()


# credits and shared-memory releases go back in batches -----------------------------------------------
async def test_credits_go_back_at_half_the_window_and_the_tail_after_a_moment(monkeypatch):
    """A judge taking every step used to answer each with a credit message: a third of a fast graph's
    messages. Credits now go back once half the sender's window is owed (the sender never runs dry),
    and what is left of a burst after ``CREDIT_DELAY_S``, so a sender is never left waiting.

    The delays are stretched here: at their real 5 and 20 ms a loaded CI core (an xdist worker beside
    Chromium) overslept a 0.25 ms sleep past the tail timer, which sent the burst early (n=3, then 1)."""
    import structlog
    import zmq

    from kernel.bus import links as links_mod
    from kernel.bus import protocol
    from kernel.bus.badtraffic import BadTraffic
    from kernel.bus.links import RELEASE_BATCH, Links
    from kernel.bus.protocol import Message

    CREDIT_DELAY_S = RELEASE_DELAY_S = 0.5
    monkeypatch.setattr(links_mod, "CREDIT_DELAY_S", CREDIT_DELAY_S)
    monkeypatch.setattr(links_mod, "RELEASE_DELAY_S", RELEASE_DELAY_S)

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    links = Links("judge", ctx, curve=None, shm_dir=None, bad=BadTraffic(structlog.get_logger(), "bad"),
                  kick=lambda sock: None)

    def received(wait_ms: int = 0) -> list[tuple[str, Any]]:
        """What reached the sender's socket; with ``wait_ms``, waits that long for the first message."""
        out = []
        while router.poll(wait_ms if not out else 0):
            _, *frames = router.recv_multipart()
            msg = protocol.decode(frames)
            out.append((msg.kind, msg.body))
        return out

    try:
        links.configure({}, "fb-test-judge")
        links.update({"env": {"inbox": f"tcp://127.0.0.1:{port}", "incarnation": 1, "features": {}}}, lambda sock, node: None)
        step = Message(kind=protocol.DATA, src="env", topic="step", seq=1, ts=0.0, body={})
        for _ in range(3):
            links.return_credit("step", 8, step)
        await asyncio.sleep(0.05 * CREDIT_DELAY_S)
        assert received() == []  # 3 of a window of 8 owed: nothing yet
        links.return_credit("step", 8, step)
        assert received(2000) == [(protocol.CREDIT, {"input": "step", "n": 4})]
        links.return_credit("step", 8, step)  # the tail of the burst
        await asyncio.sleep(0.05 * CREDIT_DELAY_S)
        assert received() == []  # the tail waits for company ...
        await asyncio.sleep(CREDIT_DELAY_S + 0.1)
        assert received(2000) == [(protocol.CREDIT, {"input": "step", "n": 1})]  # ... then goes alone
        links.return_credit("obs", 1, step)  # a window of 1: at once
        assert received(2000) == [(protocol.CREDIT, {"input": "obs", "n": 1})]

        links._loop = asyncio.get_running_loop()
        for slot in range(RELEASE_BATCH + 2):
            links.lease_released("env", slot)
        assert received(2000) == [(protocol.RELEASE, {"slots": list(range(RELEASE_BATCH))})]
        await asyncio.sleep(RELEASE_DELAY_S + 0.1)
        assert received(2000) == [(protocol.RELEASE, {"slots": [RELEASE_BATCH, RELEASE_BATCH + 1]})]
    finally:
        links.close()
        for s in links.peers.values():
            s.close(linger=0)
        router.close(linger=0)
        ctx.term()


async def test_a_thinned_edge_sends_at_its_rate_and_always_the_newest_last():
    from kernel.bus.thinning import Thinner

    sent: list[tuple[str, int, list[str]]] = []
    thinner = Thinner(lambda output, body, step, tp, dsts: sent.append((output, body, dsts)))
    thinner.configure("obs", "watcher", [20.0])
    thinner.configure("obs", "agent", [None])  # an input without a rate wants everything
    now = [thinner.now("obs", ["agent", "watcher"], i, i, None) for i in range(100)]
    assert now[0] == ["agent", "watcher"]  # a free slot: at once
    assert all(dsts == ["agent"] for dsts in now[1:])
    assert sent == []  # the newest waits for the watcher's slot ...
    await asyncio.sleep(0.08)
    assert sent == [("obs", 99, ["watcher"])]  # ... and comes then; the 98 between were never sent
    assert thinner.thinned == {"obs->watcher": 98}
    await asyncio.sleep(0.08)
    assert len(sent) == 1  # nothing waits: no timer sends twice
    assert thinner.now("obs", ["agent", "watcher"], 100, 100, None) == ["agent", "watcher"]
    thinner.close()


async def test_credits_and_releases_to_a_peer_that_reads_nothing_wait_without_blocking_the_loop():
    """A receiver owes its sender credits and shared-memory releases, and the DEALER to that sender is
    full (the sender is stopped, hung or cut off, and this node went on publishing to it). Before, the
    next credit or release blocked the receiver's loop until the sender read again. Now each is kept,
    counted in ``backed_up``, and goes out, summed, once there is room."""
    import time

    import structlog
    import zmq

    from kernel.bus import protocol
    from kernel.bus.badtraffic import BadTraffic
    from kernel.bus.links import BACKED_UP_RETRY_S, RELEASE_BATCH, Links
    from kernel.bus.protocol import CREDIT, RELEASE, Message

    ctx = zmq.Context()
    router = ctx.socket(zmq.ROUTER)
    router.setsockopt(zmq.RCVHWM, 10)
    port = router.bind_to_random_port("tcp://127.0.0.1")
    links = Links("judge", ctx, curve=None, shm_dir=None, bad=BadTraffic(structlog.get_logger(), "bad"),
                  kick=lambda sock: None)
    try:
        links.configure({"score": [{"dst": "env", "input": "scores", "policy": "fifo", "size": 8}]}, "fb-test-judge")
        links.update({"env": {"inbox": f"tcp://127.0.0.1:{port}", "incarnation": 1, "features": {}}}, lambda sock, node: None)
        for _ in range(200):  # the connection is up once a message gets through
            links.send("score", {"pad": 0}, step=None, max_bytes=1 << 20, traceparent=None)
            if router.poll(10):
                break
        pad = b"x" * 4096
        while not links.send_dropped:  # the env reads nothing: the DEALER's queue fills, then sends drop
            links.send("score", {"pad": pad}, step=None, max_bytes=1 << 20, traceparent=None)
        msg = Message(kind=protocol.DATA, src="env", topic="step", body=None)
        started = time.monotonic()
        for _ in range(10):
            links.return_credit("step", 2, msg)  # half a window each time: a credit message is due
        for slot in range(2 * RELEASE_BATCH):
            links.lease_released("env", slot)
        assert time.monotonic() - started < 1.0  # nothing blocked
        assert links.backed_up["env"] >= 2
        await asyncio.sleep(3 * BACKED_UP_RETRY_S)  # still no room: tries again, blocks nothing
        credits, released = 0, []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (credits < 10 or len(released) < 2 * RELEASE_BATCH):
            while router.poll(0):  # the env reads again: what was owed arrives
                _, *frames = router.recv_multipart()
                got = protocol.decode(frames)
                if got.kind == CREDIT:
                    credits += got.body["n"]
                elif got.kind == RELEASE:
                    released += got.body["slots"]
            await asyncio.sleep(0.01)
        assert credits == 10
        assert sorted(released) == list(range(2 * RELEASE_BATCH))
    finally:
        for s in links.peers.values():
            s.close(linger=0)
        router.close(linger=0)
        ctx.term()
