"""Leases on one site, so browser replicas can share it and still reset it safely.

Several browser environments (replicas) play episodes on one site at once; a task with
``require_reset`` puts the site back to its seeded state before it starts, which would pull the
state from under every other episode running there. So every episode holds a lease on each site it
may touch for as long as it runs (and until its judge has read the final page):

* ``shared`` for an episode that only browses: any number at once;
* ``exclusive`` for an episode whose task resets the site: alone, and only its holder may reset.

Requests are served first come, first served: a request is granted when it is compatible with every
lease held *and* no earlier request is still waiting, so a stream of shared leases cannot starve an
exclusive one. Waits are bounded; a request that times out says who holds the site and for how long.
Every grant, release and reset is kept with its wall-clock time (``events``), so the rule can be
checked from outside the process.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["shared", "exclusive"]
MODES = ("shared", "exclusive")


class LeaseTimeout(TimeoutError):
    """A lease was not granted in time; the message names the holders in the way."""


@dataclass
class Held:
    holder: str
    mode: Mode
    since: float  # time.time() at the grant


@dataclass
class _Waiter:
    holder: str
    mode: Mode
    asked: float
    granted: asyncio.Future[Held] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class LeaseBook:
    """The leases of one site: who holds it, who waits, and the record of what happened."""

    def __init__(self, site: str, keep_events: int = 10_000,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.site = site
        self.on_event = on_event
        self.held: dict[str, Held] = {}
        self.waiting: deque[_Waiter] = deque()
        self.events: deque[dict[str, Any]] = deque(maxlen=keep_events)
        self.grants = 0
        self.waits = 0  # grants that had to wait
        self.max_wait_s = 0.0

    # -- asking and giving back ----------------------------------------------------------------
    async def acquire(self, holder: str, mode: str, timeout_s: float) -> dict[str, Any]:
        """Wait (at most ``timeout_s``) for a lease; a holder asking again gives its old lease back first."""
        if mode not in MODES:
            raise ValueError(f"site {self.site}: lease mode {mode!r} is not one of {', '.join(MODES)}")
        if not holder:
            raise ValueError(f"site {self.site}: a lease needs a holder name")
        self.release(holder)
        waiter = _Waiter(holder, mode, time.time())  # type: ignore[arg-type]
        self.waiting.append(waiter)
        self._grant()
        try:
            held = await asyncio.wait_for(asyncio.shield(waiter.granted), timeout_s)
        except asyncio.TimeoutError:
            if waiter.granted.done():  # granted in the same instant: keep it
                held = waiter.granted.result()
            else:
                self.waiting.remove(waiter)
                self._grant()  # it may have been the one in front
                raise LeaseTimeout(self._blocked(waiter, timeout_s)) from None
        except asyncio.CancelledError:
            self._drop(waiter)
            raise
        waited = held.since - waiter.asked
        if waited > 0.001:
            self.waits += 1
            self.max_wait_s = max(self.max_wait_s, waited)
        return {"site": self.site, "holder": holder, "mode": mode, "since": held.since, "waited_s": waited}

    def release(self, holder: str) -> bool:
        held = self.held.pop(holder, None)
        if held is None:
            return False
        self._event("release", holder, held.mode)
        self._grant()
        return True

    def holds_exclusive(self, holder: str) -> bool:
        held = self.held.get(holder)
        return held is not None and held.mode == "exclusive"

    def reset_done(self, holder: str, started: float, seconds: float) -> None:
        """Record a reset (wall-clock start and end) made under ``holder``'s exclusive lease."""
        self._keep({"event": "reset", "site": self.site, "holder": holder, "t": started, "end": started + seconds,
                    "others": sorted(h for h in self.held if h != holder)})

    def state(self) -> dict[str, Any]:
        now = time.time()
        return {"site": self.site,
                "held": [{"holder": h.holder, "mode": h.mode, "for_s": now - h.since} for h in self.held.values()],
                "waiting": [{"holder": w.holder, "mode": w.mode, "for_s": now - w.asked} for w in self.waiting],
                "grants": self.grants, "waits": self.waits, "max_wait_s": self.max_wait_s}

    # -- inside ----------------------------------------------------------------------------------
    def _compatible(self, mode: Mode) -> bool:
        if not self.held:
            return True
        return mode == "shared" and all(h.mode == "shared" for h in self.held.values())

    def _grant(self) -> None:
        """Grant from the front of the queue while the front fits (first come, first served)."""
        while self.waiting and self._compatible(self.waiting[0].mode):
            waiter = self.waiting.popleft()
            if waiter.granted.done():  # given up meanwhile
                continue
            held = Held(waiter.holder, waiter.mode, time.time())
            self.held[waiter.holder] = held
            self.grants += 1
            self._event("grant", waiter.holder, waiter.mode, asked=waiter.asked)
            waiter.granted.set_result(held)

    def _drop(self, waiter: _Waiter) -> None:
        if waiter in self.waiting:
            self.waiting.remove(waiter)
        elif waiter.granted.done() and not waiter.granted.cancelled():
            self.release(waiter.holder)  # granted while being cancelled: give it back
        self._grant()

    def _blocked(self, waiter: _Waiter, timeout_s: float) -> str:
        now = time.time()
        held = ", ".join(f"{h.holder} ({h.mode}, {now - h.since:.1f} s)" for h in self.held.values()) or "nobody"
        ahead = [w.holder for w in self.waiting if w.asked < waiter.asked]
        return (f"site {self.site}: a {waiter.mode} lease for {waiter.holder} was not granted within {timeout_s:g} s; "
                f"held by {held}" + (f"; waiting before it: {', '.join(ahead)}" if ahead else "")
                + ". An episode holds its sites until its judge releases the final page (page.release) "
                "or the environment closes it")

    def _event(self, event: str, holder: str, mode: str, **extra: Any) -> None:
        self._keep({"event": event, "site": self.site, "holder": holder, "mode": mode, "t": time.time(), **extra})

    def _keep(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)
