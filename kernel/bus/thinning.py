"""Edges that carry at most ``rate`` messages a second: thinned by the sender, newest kept.

A watcher (the live console, a dashboard, a logger of "what is it doing now") wants the newest
value, a few times a second. As an ordinary ``latest`` input it is still sent every message, and
decodes and drops nearly all of them: on a 2-core machine that is a core's tenth taken from the
run it watches. With ``rate`` on its input the sender never encodes or sends what the watcher
would drop: a message goes out when the edge's slot is free, and one that comes too soon waits as
the edge's newest (replacing, and counting as thinned, any older one waiting) until its slot
comes, so the watcher always ends up with the last state, at most ``1/rate`` seconds late.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any, Callable

Deliver = Callable[[str, Any, "int | None", "str | None", list[str]], None]
"""Send (output, body, step, traceparent) to these destinations now: the links' own send."""


class Thinner:
    """The send slots of the rate-limited edges of one node."""

    def __init__(self, deliver: Deliver) -> None:
        self._deliver = deliver
        self.interval: dict[tuple[str, str], float] = {}  # (output, dst) -> seconds between sends
        self._due: dict[tuple[str, str], float] = {}  # -> when the next send may go
        self._waiting: dict[tuple[str, str], tuple[Any, int | None, str | None]] = {}
        self._timers: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self.thinned: Counter[str] = Counter()  # "output->dst": messages that never went out

    def configure(self, output: str, dst: str, rates: list[float | None]) -> None:
        """Thin ``output`` to ``dst`` only if every input of ``dst`` reading it has a rate (the
        fastest one wins): an input without one wants every message."""
        if rates and all(r for r in rates):
            self.interval[(output, dst)] = 1.0 / max(r for r in rates if r)

    def now(self, output: str, dsts: list[str], body: Any, step: int | None,
            traceparent: str | None) -> list[str]:
        """Of ``dsts``, the ones to send this message to now; the rest keep it for their slot."""
        if not self.interval:
            return dsts
        out = []
        clock = time.monotonic()
        for dst in dsts:
            key = (output, dst)
            interval = self.interval.get(key)
            if interval is None:
                out.append(dst)
                continue
            if clock >= self._due.get(key, 0.0):
                self._due[key] = clock + interval
                if self._waiting.pop(key, None) is not None:
                    self.thinned[f"{output}->{dst}"] += 1
                timer = self._timers.pop(key, None)
                if timer is not None:
                    timer.cancel()
                out.append(dst)
                continue
            if key in self._waiting:
                self.thinned[f"{output}->{dst}"] += 1  # the older waiting one will never go
            self._waiting[key] = (body, step, traceparent)
            if key not in self._timers:
                delay = self._due[key] - clock
                self._timers[key] = asyncio.get_running_loop().call_later(delay, self._slot, key)
        return out

    def _slot(self, key: tuple[str, str]) -> None:
        self._timers.pop(key, None)
        waiting = self._waiting.pop(key, None)
        if waiting is None:
            return
        output, dst = key
        self._due[key] = time.monotonic() + self.interval[key]
        body, step, traceparent = waiting
        self._deliver(output, body, step, traceparent, [dst])

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._waiting.clear()
