"""Bad traffic costs bounded work: each bad message is counted in a bounded table and logged sparingly.

Sources are ZeroMQ routing identities or header fields, chosen by whoever connects: a flood may
invent a new one per message. So the table of counts keeps at most :data:`MAX_SOURCES` keys (the
rest add up under ``"other"``), and the log gets the first :data:`LOG_FIRST` messages of each
source, then one line per :data:`SUMMARY_S` seconds saying how many more were dropped unlogged:
a flood then neither fills the memory nor buries the run's log, nor spends the event loop's time
on writing lines nobody reads (measured: 217k warning lines starved the heartbeats of a run).

The body checks with a context (a credit for an edge this node has, a slot its pool holds) are here
too, on the structures of kernel.bus.messages, so the kernel and the node runtime refuse the same
shapes the same way. A credit or release check runs once per message on a ``block`` edge; measured,
it costs a microsecond or two, against the tens a message costs to receive.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from kernel.bus.messages import check

MAX_SOURCES = 100
LOG_FIRST = 5
SUMMARY_S = 5.0
KEY_CHARS = 80
OTHER = "other"


class BadTraffic:
    """Counts bad messages per source and logs them throttled, under ``event`` with ``context``."""

    def __init__(self, logger: Any, event: str, **context: Any) -> None:
        self.counts: Counter[str] = Counter()  # what ``stats()`` reports as decode_errors
        self._log = logger
        self._event = event
        self._context = context
        self._unlogged: Counter[str] = Counter()  # its keys are a subset of counts': bounded too
        self._timer: asyncio.TimerHandle | None = None

    def note(self, source: str, error: str, *, exc_info: bool = False) -> None:
        source = truncated(source)
        counts = self.counts
        if source not in counts and len(counts) >= MAX_SOURCES:
            source = OTHER
        n = counts[source] + 1
        counts[source] = n
        if n <= LOG_FIRST:
            extra: dict[str, Any] = {"exc_info": True} if exc_info else {}
            if n == LOG_FIRST:
                extra["more"] = f"the next ones from this source are summed up every {SUMMARY_S:g} s"
            self._log.warning(self._event, source=source, error=error, **self._context, **extra)
            return
        self._unlogged[source] += 1
        if self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(SUMMARY_S, self.flush)
            except RuntimeError:
                pass  # no loop (a test calling in directly): the counts still show in stats

    def flush(self) -> None:
        """Log how many bad messages went unlogged since the last such line."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unlogged:
            unlogged, self._unlogged = self._unlogged, Counter()
            self._log.warning(f"{self._event} (more, not logged one by one)", dropped=sum(unlogged.values()),
                              by_source=dict(unlogged.most_common(5)), **self._context)


def truncated(text: str, limit: int = KEY_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


# node runtime and kernel: the shapes in pydantic's strict mode, the rest by hand ------------------
def credit_error(body: Any, src: str, credits: dict[tuple[str, str], int]) -> str | None:
    """Why a ``credit`` body is refused, or None. ``credits`` holds this node's block edges."""
    error = check("credit", body)
    if error is None and (src, body["input"]) not in credits:
        mine = sorted(inp for dst, inp in credits if dst == src)
        return (f"credit for input {truncated(repr(body['input']))} of {src!r}, which no block edge of "
                f"this node feeds; its block edges to {src!r}: {mine or 'none'}")
    return error


def release_error(body: Any, nslots: int | None) -> str | None:
    """Why a ``rel`` body is refused, or None; ``nslots``: the sender's slot count (None: no pool)."""
    if nslots is None:
        return "a release of shared-memory slots, but this node sends none (it has no shared-memory pool)"
    error = check("rel", body)
    if error is None and body["slots"] and max(body["slots"]) >= nslots:
        return f"release of slot {max(body['slots'])}; slots are ints in [0, {nslots})"
    return error

