"""Every control message between the kernel and a node, as the typed structure both ends use.

The kernel builds a ``Welcome`` and the node's runtime reads one; a node builds its ``Hello`` and
the kernel reads one; and so on for peers, heartbeats, episode messages, credits, releases, taps
and shipped results. Each structure is a ``TypedDict``, so what travels is a plain msgpack map or
array (docs/protocol.md), which a node in another language writes and reads without this module,
and building one costs nothing on the sender. What arrives is checked once, on arrival, against
the same structure (``check``: pydantic in strict mode, whose errors name the offending field),
and from there on it is read by key with its type known.

Why not msgspec structs: measured here (2026-12-02, one core, bodies already decoded by the
envelope's msgpack), pydantic's strict validator takes 0.26 us for a credit and 1.2 us for a batch
of 8 taps, ``msgspec.convert`` into structs 0.54 us and 2.5 us. msgspec decoding straight from the
body's bytes would be faster still (0.09 us, 1.3 us), but the envelope decodes every body the same
way before its kind is known (kernel.bus.protocol); giving that up is a larger change than the
microseconds it saves on the hot path (credits and taps, once per message or batch).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

import pydantic
from typing_extensions import NotRequired, Required, TypedDict, is_typeddict  # pydantic wants these on < 3.12

from kernel.bus import episode_ids

Policy = Literal["latest", "fifo", "block"]
EpisodeId = Annotated[str, pydantic.StringConstraints(pattern=episode_ids.PATTERN)]
Attempt = Annotated[int, pydantic.Field(ge=1)]

# msgpack gives a list for a tuple: the records below are lax about that (and so about their items:
# hence the strict strings again)
_Str = Annotated[str, pydantic.Strict()]


# registration: node -> kernel, kernel -> node ---------------------------------------------------
class Hello(TypedDict, total=False):
    """node -> kernel, ``ctl hello``: who it is, where its inbox is, what it declares."""

    pid: Required[int]
    inbox: Required[str]  # the endpoint its peers connect to
    inputs: Required[list[str]]
    outputs: Required[list[str]]
    services: list[str]
    driver: bool  # it owns the episode loop (an environment)
    shm: bool  # it can read arrays from shared memory
    curve: str  # its CURVE public key, on a bus with CURVE


class Reject(TypedDict):
    """kernel -> node, ``ctl reject``: the hello was refused; the node prints why and exits 2."""

    error: str


class Features(TypedDict, total=False):
    shm: bool
    curve: str


class Peer(TypedDict):
    """Where a node's inbox is, and which of its incarnations (a restart is a new one) it is."""

    inbox: str
    incarnation: int
    features: Features


class Edge(TypedDict):
    """One reader of an output: the destination node and input, and that input's policy and size."""

    dst: str
    input: str
    policy: Policy
    size: int


class InputConfig(TypedDict):
    """One input of the node, as the launch file wires it."""

    sources: list[str]  # "node/output"
    policy: Policy
    size: int
    rate: Optional[float]


class ClockConfig(TypedDict, total=False):
    """An environment's clock (docs/launch.md, ``clock:``); the kernel sends every key."""

    mode: Required[Literal["lockstep", "realtime"]]
    fps: Optional[float]
    deadline: Optional[float]
    wait_for: Optional[list[str]]
    default_action: Any


class RunInfo(TypedDict):
    seed: Optional[int]
    episodes: Optional[int]
    name: str


class Welcome(TypedDict):
    """kernel -> node, ``ctl welcome``: everything the node learns from the launch file and the run."""

    params: dict[str, Any]
    run: RunInfo
    inputs: dict[str, InputConfig]
    outputs: dict[str, list[Edge]]  # output -> its readers
    observers: list[str]  # readers that only watch (the recorder, the console): no judges
    rates: dict[str, dict[str, dict[str, float]]]  # output -> dst -> input -> most messages a second
    peers: dict[str, Peer]
    clock: Optional[ClockConfig]
    heartbeat: float
    grace: float
    max_message_bytes: int
    records_delay: float
    trace: Optional[str]
    run_dir: str
    results: Literal["bus", "local"]  # "bus": ship results to the kernel (a node on another machine)


# while running --------------------------------------------------------------------------------
class Stats(TypedDict, total=False):
    """A node's counts, in every heartbeat: what ``launch stats`` and summary.json show."""

    inputs: dict[str, dict[str, dict[str, int]]]
    queued: dict[str, int]
    busy: dict[str, Any]
    sent: dict[str, int]
    send_dropped: dict[str, int]
    ctl_dropped: dict[str, int]
    ctl_waited: int
    backed_up: dict[str, int]
    thinned: dict[str, Any]
    records_batched: int
    decode_errors: dict[str, int]
    clock: Optional[dict[str, Any]]
    shm: Optional[dict[str, Any]]
    curve_refused: int
    summary: dict[str, dict[str, Any]]
    results: dict[str, Any]


class Heartbeat(TypedDict, total=False):
    """node -> kernel, ``ctl hb`` (and ``ctl bye``, the last one, as it exits)."""

    state: str
    stats: Stats


class KernelHeartbeat(TypedDict, total=False):
    """kernel -> node, ``ctl hb``: the nodes the kernel has not heard from lately."""

    quiet: dict[str, float]


class Done(TypedDict, total=False):
    """node -> kernel, ``ctl done``: its ``run`` returned (ok) or raised (error)."""

    ok: bool
    error: Optional[str]


class Step(TypedDict, total=False):
    """kernel -> node, ``ctl step``: play N frames while paused (``launch ctl step``)."""

    n: Annotated[int, pydantic.Field(ge=1)]


# episodes ---------------------------------------------------------------------------------------
class EpisodeResult(TypedDict, total=False):
    """node -> kernel, the services ``episode.end`` and ``episode.report``."""

    episode: Required[EpisodeId]
    metrics: Optional[dict[str, Any]]
    status: str
    attempt: Attempt  # the attempt the sender played (Episode.attempt)


class Dealt(TypedDict):
    """kernel -> driver, the reply to ``episode.next`` (None when the deck is empty)."""

    id: str
    index: int
    seed: int
    attempt: NotRequired[int]  # from the second attempt on


class AttemptNotice(TypedDict):
    """kernel -> every node, ``ctl attempt``: an episode is dealt again; its records carry the attempt."""

    episode: str
    attempt: int


class Abandon(TypedDict, total=False):
    """kernel -> driver, ``ctl abandon``: a node the episode needed died; it goes back to the deck."""

    episode: Required[str]
    reason: str


# node -> node, and node -> kernel on the data plane ---------------------------------------------
class Credit(TypedDict):
    """receiver -> sender on a ``block`` edge: it took ``n`` messages off ``input``."""

    input: str
    n: Annotated[int, pydantic.Field(ge=1)]


class Release(TypedDict):
    """receiver -> sender: shared-memory slots it no longer reads."""

    slots: list[Annotated[int, pydantic.Field(ge=0)]]


Tap = Annotated[tuple[_Str, _Str, _Str, Any, Any, Any, Any], pydantic.Strict(False)]
"""node -> kernel, one header of a message it sent: ``[kind, dst, topic, seq, ts, nbytes, traceparent]``
(a ``tap`` message's body is a list of them)."""


# a batch of results from a node on another machine (kernel.bus.outbox): bytes of whole lines, a
# step record as its line and row, a set of encoded pictures
StepRow = Annotated[tuple[_Str, Union[float, int], Any, Any, _Str], pydantic.Strict(False)]
Picture = Annotated[tuple[_Str, bytes, Literal[".png", ".jpg"], int, int], pydantic.Strict(False)]


class MediaSet(TypedDict):
    episode: str
    caption: str
    row: Optional[str]
    metrics: list[str]
    pictures: Annotated[list[Picture], pydantic.Field(min_length=1)]
    time: Union[float, int]


ResultItem = Union[
    Annotated[tuple[Literal["log", "trace"], bytes], pydantic.Strict(False)],
    Annotated[tuple[Literal["step"], StepRow], pydantic.Strict(False)],
    Annotated[tuple[Literal["media"], MediaSet], pydantic.Strict(False)],
]


class Results(TypedDict):
    """node -> kernel, the service ``results``: one batch of what a node on another machine wrote."""

    batch: int
    items: list[ResultItem]


# checking on arrival ----------------------------------------------------------------------------
def _strict(schema: Any) -> pydantic.TypeAdapter[Any]:
    """Strict mode: a TypedDict takes it as its own config (the TypedDicts inside it inherit it),
    any other type through its adapter."""
    if is_typeddict(schema):
        return pydantic.TypeAdapter(pydantic.with_config(pydantic.ConfigDict(strict=True))(schema))
    return pydantic.TypeAdapter(schema, config=pydantic.ConfigDict(strict=True))


# what arrives, by ctl command, service or message kind
SCHEMAS: dict[str, Any] = {
    "hello": Hello, "reject": Reject, "welcome": Welcome, "peers": dict[str, Peer],
    "hb": Heartbeat, "bye": Heartbeat, "kernel.hb": KernelHeartbeat, "done": Done, "ready": dict[str, Any],
    "step": Step, "ctl.step": Step, "attempt": AttemptNotice, "abandon": Abandon,
    "episode.report": EpisodeResult, "episode.end": EpisodeResult,
    "credit": Credit, "rel": Release, "tap": list[Tap], "results": Results,
}
_ADAPTERS: dict[str, pydantic.TypeAdapter[Any]] = {what: _strict(schema) for what, schema in SCHEMAS.items()}
TRUNCATE = 300


def check(what: str, body: Any) -> str | None:
    """Why the body of ``what`` (a ctl command, a kernel service, a message kind) is refused, or None.

    A nil body counts as ``{}``; names without a structure accept any body. The hot path (credits,
    releases, taps) calls this once per message: it runs the validator alone, which is about twice
    as fast as building the validated copy."""
    adapter = _ADAPTERS.get(what)
    if adapter is None:
        return None
    try:
        adapter.validator.validate_python({} if body is None else body)
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'body'}: {e['msg']}" for e in exc.errors()[:3])
        if len(problems) > TRUNCATE:
            problems = problems[:TRUNCATE] + "..."
        return f"{what} body refused: {problems}"
    return None

