"""Frame clocks: whether the world waits for its agents (lockstep) or keeps moving (realtime).

An environment node asks its clock for the actions of step ``t``::

    await self.publish("obs", obs, step=t)
    actions = await self.clock.actions(t)      # {agent_id: action body}

* lockstep: waits until every agent in ``wait_for`` answered step ``t`` (the game is paused while
  the model thinks); after ``deadline`` seconds a missing agent gets ``default_action``, unless
  it is cut off (a network partition: the kernel has not heard from it either): then the world
  waits, counting a stall, and the agent gets a fresh deadline once it is heard from again;
* realtime: waits only for the next frame at ``fps``; the newest action of each agent wins, and the
  clock records how many frames each decision took to arrive.

Both honour the kernel's pause / resume / step N (``launch ctl``), before each step.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any, Callable, Sequence

from kernel.bus import tracing
from kernel.bus.inputs import InputQueue
from kernel.bus.messages import ClockConfig
from kernel.sdk.node import EpisodeAbandoned

STALL_CHECK_S = 0.25  # how often a stalled step looks again whether its agents are back


class Clock:
    def __init__(
        self,
        spec: ClockConfig | None,
        queue: Callable[[str], InputQueue],
        sources: Callable[[str], list[str]],
        cut_off: Callable[[str], bool] | None = None,
    ) -> None:
        """``spec``: the welcome's ``clock``; None for a node without one (it runs free)."""
        self.mode: str = spec["mode"] if spec else "free"
        self.fps: float | None = spec.get("fps") if spec else None
        self.deadline: float | None = spec.get("deadline") if spec else None
        self.wait_for: list[str] | None = spec.get("wait_for") if spec else None
        self.default_action: Any = spec.get("default_action") if spec else None
        self._queue = queue
        self._sources = sources
        self._cut_off = cut_off or (lambda node: False)
        self._running = asyncio.Event()
        self._running.set()
        self._budget = 0  # steps allowed while paused (launch ctl step N)
        self._next_frame: float | None = None
        self._latest: dict[tuple[str, str], Any] = {}  # (input, agent) -> its newest action (realtime)
        self.frame = 0
        self.decisions = 0
        self.frames_per_decision: Counter[int] = Counter()
        self.timeouts = 0
        self.stale = 0
        self.late_frames = 0
        self.stalls = 0  # lockstep steps that waited past the deadline for an agent that was cut off
        self.stalled_s = 0.0
        self.step_span = tracing.OpenSpan()
        self.abandoned: str | None = None  # why the episode being played was returned to the deck
        self._wait: asyncio.Timeout | None = None  # the step being waited for (lockstep)
        self._inputs: set[str] = set()

    # control from the kernel --------------------------------------------------------------
    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def pause(self) -> None:
        self._budget = 0
        self._running.clear()

    def resume(self) -> None:
        self._budget = 0
        self._next_frame = None  # a realtime world does not rush to catch up on paused time
        self._running.set()

    def step(self, n: int = 1) -> None:
        """Let ``n`` more steps happen, then stay paused."""
        self._budget += max(0, int(n))
        self._running.set()

    async def gate(self) -> None:
        """Wait while paused; consume one step of a ``step N`` budget."""
        if not self._running.is_set():  # running: no Event.wait coroutine to build and await per step
            await self._running.wait()
        if self._budget > 0:
            self._budget -= 1
            if self._budget == 0:
                self._running.clear()

    def abandon(self, reason: str) -> None:
        """The episode being played went back to the deck: the step waited for ends now, with
        EpisodeAbandoned instead of default actions, and so does every later one until
        ``new_episode``."""
        self.abandoned = reason
        if self._wait is not None:
            self._wait.reschedule(asyncio.get_running_loop().time())

    def new_episode(self) -> None:
        """A new episode was dealt. After an abandoned one, the actions still queued (answers to
        steps of the abandoned episode, some arriving late from a restarted agent) are dropped, so
        step 0 of the replay cannot take an answer meant for step 0 of the abandoned attempt."""
        if self.abandoned is not None:
            for name in filter(self._sources, self._inputs):  # a wired input: it has sources, and a queue
                queue = self._queue(name)
                while queue.get_nowait() is not None:
                    self.stale += 1
        self.abandoned = None
        self._latest.clear()  # realtime: the last episode's newest action (a stop request, say) is not this one's

    def _check_abandoned(self) -> None:
        if self.abandoned is not None:
            raise EpisodeAbandoned(self.abandoned)

    # the environment's side -----------------------------------------------------------------
    async def actions(self, step: int, input: str = "action") -> dict[str, Any]:
        """The actions for ``step``, one per agent, according to the clock's mode.

        With tracing on, what the environment does from here until it asks again is the span
        ``env.step``, a child of the agent step whose action arrived first."""
        self.step_span.close()
        await self.gate()
        self._check_abandoned()
        self._inputs.add(input)
        self._parent: str | None = None
        agents = self.wait_for or self._sources(input)
        if self.mode == "realtime":
            got = await self._realtime(agents, input)
        else:
            got = await self._lockstep(step, agents, input)
        self.frame += 1
        if tracing.enabled():
            self.step_span.open("env.step", self._parent, **{"framebus.step": step, "framebus.frame": self.frame})
        return got

    async def actions_of(self, step: int, inputs: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The actions for ``step`` on several inputs at once, ``{input: {agent: body}}``, for a
        world with an action input per agent (pettingzoo.env): one frame, one pause/step gate.
        Lockstep waits for each input's agents in turn (``wait_for``: those of them wired into the
        input); realtime waits for the next frame once, then takes each input's newest actions."""
        self.step_span.close()
        await self.gate()
        self._check_abandoned()
        self._inputs.update(inputs)
        self._parent = None
        got: dict[str, dict[str, Any]] = {}
        if self.mode == "realtime":
            await self._tick()
        for name in inputs:
            wired = self._sources(name)
            agents = [a for a in self.wait_for if a in wired] if self.wait_for else wired
            realtime = self.mode == "realtime"
            got[name] = self._newest(agents, name) if realtime else await self._lockstep(step, agents, name)
        self.frame += 1
        if tracing.enabled():
            self.step_span.open("env.step", self._parent, **{"framebus.step": step, "framebus.frame": self.frame})
        return got

    async def _lockstep(self, step: int, agents: list[str], input: str) -> dict[str, Any]:
        if not agents:  # nobody acts in this world (an idle baseline, a replay)
            return {}
        queue = self._queue(input)
        got: dict[str, Any] = {}
        loop = asyncio.get_running_loop()
        until = None if self.deadline is None else loop.time() + self.deadline
        stalled_since: float | None = None
        while len(got) < len(agents):
            try:
                # One timer per wait (unlike wait_for, no task per message); abandon() fires it early.
                async with asyncio.timeout_at(until) as self._wait:
                    while len(got) < len(agents):
                        msg = await queue.get()
                        if msg.src not in agents:
                            continue
                        if msg.step is not None and msg.step != step:
                            self.stale += 1  # an answer to an earlier step that came after its deadline
                            continue
                        got[msg.src] = msg.body
                        self._parent = self._parent or msg.traceparent
            except TimeoutError:
                self._check_abandoned()  # woken by abandon(): the episode ends here, not with defaults
                now = loop.time()
                if any(self._cut_off(a) for a in agents if a not in got):
                    if stalled_since is None:  # the deadline is for slow agents, not lost links
                        stalled_since = now
                        self.stalls += 1
                    until = now + STALL_CHECK_S
                    continue
                if stalled_since is not None:  # heard from again: a whole deadline from now
                    self.stalled_s += now - stalled_since
                    stalled_since = None
                    until = now + (self.deadline or 0.0)
                    continue
                break
            finally:
                self._wait = None
        if stalled_since is not None:
            self.stalled_s += loop.time() - stalled_since
        for agent in agents:
            if agent not in got:
                self.timeouts += 1
                got[agent] = self.default_action
        self.decisions += 1
        return got

    async def _realtime(self, agents: list[str], input: str) -> dict[str, Any]:
        await self._tick()
        return self._newest(agents, input)

    async def _tick(self) -> None:
        """Wait for the next frame at ``fps`` (at once when the env itself is late, counted)."""
        period = 1.0 / float(self.fps or 30.0)
        now = time.monotonic()
        if self._next_frame is None:
            self._next_frame = now
        elif now < self._next_frame:
            await asyncio.sleep(self._next_frame - now)
        elif now > self._next_frame + period:
            self.late_frames += 1  # the environment itself could not keep the rate
            self._next_frame = now
        self._next_frame += period

    def _newest(self, agents: list[str], input: str) -> dict[str, Any]:
        """Each agent's newest action on ``input`` (kept from frame to frame until a newer one), or
        the default action for one that has sent none this episode."""
        while agents and (msg := self._queue(input).get_nowait()) is not None:
            self._latest[(input, msg.src)] = msg.body
            self._parent = msg.traceparent or self._parent
            if msg.step is not None:
                self.decisions += 1
                self.frames_per_decision[max(0, self.frame - msg.step)] += 1
        return {a: self._latest.get((input, a), self.default_action) for a in agents}

    def stats(self) -> dict[str, Any]:
        total = sum(self.frames_per_decision.values())
        mean = sum(k * v for k, v in self.frames_per_decision.items()) / total if total else None
        return {
            "mode": self.mode,
            "paused": self.paused,
            "frame": self.frame,
            "decisions": self.decisions,
            "timeouts": self.timeouts,
            "stale": self.stale,
            "late_frames": self.late_frames,
            "stalls": self.stalls,
            "stalled_s": round(self.stalled_s, 3),
            "frames_per_decision": {str(k): v for k, v in sorted(self.frames_per_decision.items())},
            "mean_frames_per_decision": mean,
        }
