"""Bad traffic costs bounded work: each bad message is counted in a bounded table and logged sparingly.

Sources are ZeroMQ routing identities or header fields, chosen by whoever connects: a flood may
invent a new one per message. So the table of counts keeps at most :data:`MAX_SOURCES` keys (the
rest add up under ``"other"``), and the log gets the first :data:`LOG_FIRST` messages of each
source, then one line per :data:`SUMMARY_S` seconds saying how many more were dropped unlogged:
a flood then neither fills the memory nor buries the run's log, nor spends the event loop's time
on writing lines nobody reads (measured: 217k warning lines starved the heartbeats of a run).

The body checks live here too, so the kernel and the node runtime refuse the same shapes the same
way: by pydantic in strict mode, whose errors name the offending key. A credit or release check
runs once per message on a ``block`` edge; measured, it costs a microsecond or two, against the
tens a message costs to receive.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Annotated, Any, Literal, Optional, Union

import pydantic
from typing_extensions import Required, TypedDict, is_typeddict  # pydantic needs these on Python < 3.12

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
    error = body_error("credit", body)
    if error is None and (src, body["input"]) not in credits:
        mine = sorted(inp for dst, inp in credits if dst == src)
        return (f"credit for input {truncated(repr(body['input']))} of {src!r}, which no block edge of "
                f"this node feeds; its block edges to {src!r}: {mine or 'none'}")
    return error


def release_error(body: Any, nslots: int | None) -> str | None:
    """Why a ``rel`` body is refused, or None; ``nslots``: the sender's slot count (None: no pool)."""
    if nslots is None:
        return "a release of shared-memory slots, but this node sends none (it has no shared-memory pool)"
    error = body_error("rel", body)
    if error is None and body["slots"] and max(body["slots"]) >= nslots:
        return f"release of slot {max(body['slots'])}; slots are ints in [0, {nslots})"
    return error


def tap_error(body: Any) -> str | None:
    """Why a ``tap`` body is refused: a list of ``[kind, dst, topic, seq, ts, nbytes, traceparent]``."""
    return body_error("tap", body)


# kernel: control and service bodies ---------------------------------------------------------------
_STRICT = pydantic.ConfigDict(strict=True)


class _Stats(TypedDict, total=False):
    inputs: dict[str, dict[str, dict[str, int]]]
    queued: dict[str, int]
    sent: dict[str, int]
    send_dropped: dict[str, int]
    ctl_dropped: dict[str, int]
    ctl_waited: int
    backed_up: dict[str, int]
    decode_errors: dict[str, int]
    clock: Optional[dict[str, Any]]
    shm: Optional[dict[str, Any]]
    summary: dict[str, dict[str, Any]]


class _Hello(TypedDict, total=False):
    pid: Required[int]
    inbox: Required[str]
    inputs: Required[list[str]]
    outputs: Required[list[str]]
    services: list[str]
    driver: bool
    shm: bool
    curve: str


class _Hb(TypedDict, total=False):
    state: str
    stats: _Stats


class _Done(TypedDict, total=False):
    ok: bool
    error: Optional[str]


class _Episode(TypedDict, total=False):
    episode: Required[Annotated[str, pydantic.StringConstraints(pattern=r"^ep\d{5,}$")]]
    metrics: Optional[dict[str, Any]]
    status: str
    attempt: Annotated[int, pydantic.Field(ge=1)]  # the attempt the sender played (Episode.attempt)


class _Step(TypedDict, total=False):
    n: Annotated[int, pydantic.Field(ge=1)]


class _Credit(TypedDict):
    input: str
    n: Annotated[int, pydantic.Field(ge=1)]


class _Release(TypedDict):
    slots: list[Annotated[int, pydantic.Field(ge=0)]]


# msgpack gives a list for a tuple: the record is lax about that (and so about its items: hence
# the strict strings again)
_Str = Annotated[str, pydantic.Strict()]
_TapRecord = Annotated[tuple[_Str, _Str, _Str, Any, Any, Any, Any], pydantic.Strict(False)]


# a batch of results from a node on another machine (kernel.bus.results): bytes of whole lines, a
# step record as its line and row, a set of encoded pictures
_StepRow = Annotated[tuple[_Str, Union[float, int], Any, Any, _Str], pydantic.Strict(False)]
_Picture = Annotated[tuple[_Str, bytes, Literal[".png", ".jpg"], int, int], pydantic.Strict(False)]


class _MediaSet(TypedDict):
    episode: str
    caption: str
    row: Optional[str]
    metrics: list[str]
    pictures: Annotated[list[_Picture], pydantic.Field(min_length=1)]
    time: Union[float, int]


_ResultItem = Union[
    Annotated[tuple[Literal["log", "trace"], bytes], pydantic.Strict(False)],
    Annotated[tuple[Literal["step"], _StepRow], pydantic.Strict(False)],
    Annotated[tuple[Literal["media"], _MediaSet], pydantic.Strict(False)],
]


class _Results(TypedDict):
    batch: int
    items: list[_ResultItem]


def _strict(schema: Any) -> pydantic.TypeAdapter[Any]:
    """Strict mode: a TypedDict takes it as its own config (the TypedDicts inside it inherit it),
    any other type through its adapter."""
    if is_typeddict(schema):
        return pydantic.TypeAdapter(pydantic.with_config(_STRICT)(schema))
    return pydantic.TypeAdapter(schema, config=_STRICT)


BODIES: dict[str, pydantic.TypeAdapter[Any]] = {
    "hello": _strict(_Hello),
    "hb": _strict(_Hb),
    "done": _strict(_Done),
    "bye": _strict(_Hb),
    "ready": _strict(dict[str, Any]),
    "episode.report": _strict(_Episode),
    "episode.end": _strict(_Episode),
    "ctl.step": _strict(_Step),
    "credit": _strict(_Credit),  # the node's bodies: these run once per message
    "rel": _strict(_Release),
    "tap": _strict(list[_TapRecord]),
    "results": _strict(_Results),
}


def body_error(what: str, body: Any) -> str | None:
    """Why the body of control command, kernel service or message kind ``what`` is refused, or None.

    A nil body counts as ``{}``; commands and services without a schema accept any body."""
    adapter = BODIES.get(what)
    if adapter is None:
        return None
    try:
        adapter.validator.validate_python({} if body is None else body)  # skips the wrapper: 2x faster
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:3])
        return f"{what} body refused: {truncated(problems, 300)}"
    return None
