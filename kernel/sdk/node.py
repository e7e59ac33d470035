"""The node SDK: what a framebus node author writes.

A node is a small class::

    class Echo(Node):
        inputs = ("text",)
        outputs = ("shout",)

        @on_input("text")
        async def handle(self, msg: Message) -> None:
            await self.publish("shout", msg.body.upper())

        @service("ping")
        def ping(self, body):
            return "pong"

Everything else (sockets, heartbeats, lifecycle, queues, tracing) is the runtime's job
(kernel.sdk.runtime), so a node stays testable on its own (kernel.testing).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping, Sequence, TypeVar

import structlog
from pydantic import BaseModel, ConfigDict, Field

from kernel.bus.errors import EpisodeAbandoned, RemoteError, RequestTimeout
from kernel.bus.protocol import Message

if TYPE_CHECKING:
    from kernel.sdk.clock import Clock
    from kernel.sdk.media import Picture
    from kernel.sdk.runtime import NodeRuntime

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["Node", "NodeParams", "Message", "Episode", "on_input", "service", "RequestTimeout", "RemoteError", "EpisodeAbandoned"]


@dataclass(frozen=True, slots=True)
class Episode:
    """One unit of work dealt by the kernel: its id is stable across re-runs, its seed fixed."""

    id: str
    index: int
    seed: int
    attempt: int = 1  # above 1: dealt again after a node died in it (its records stay apart)


class NodeParams(BaseModel):
    """Base of a node's ``Params`` model. Unknown keys are errors (a misspelt key must not fall back
    to a default silently); field descriptions are what ``launch describe`` prints."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    replica: int | None = Field(default=None, description="this copy's index in a replica group (the launch file "
                                "sets it on each copy of a group)")


def on_input(name: str) -> Callable[[F], F]:
    """Mark a method as the handler of an input; it is called once per message, in order."""

    def mark(fn: F) -> F:
        fn.__framebus_input__ = name  # type: ignore[attr-defined]
        return fn

    return mark


def service(name: str) -> Callable[[F], F]:
    """Mark a (sync or async) method as a named service; its return value is the reply body."""

    def mark(fn: F) -> F:
        fn.__framebus_service__ = name  # type: ignore[attr-defined]
        return fn

    return mark


class Node:
    """Base class of every Python node. Override ``setup``, ``run`` and ``teardown`` as needed.

    A node that defines ``run`` drives the graph (an environment usually does); a node without it
    only reacts to inputs and requests.
    """

    inputs: ClassVar[Sequence[str]] = ()
    outputs: ClassVar[Sequence[str]] = ()
    records: ClassVar[Sequence[str]] = ()
    """Outputs that tell what happened rather than ask for a decision (an environment's ``step``).
    A peer that reads only such outputs of this node (a judge, a recorder) gets them a few at a time,
    at most ``bus.records_delay`` seconds late and always before this node's next request, so it wakes
    once per batch rather than on every step; a peer that reads any other output gets them at once."""

    Params: ClassVar[type[BaseModel] | None] = None
    """The node's parameters (a :class:`NodeParams` subclass). ``launch validate`` and ``launch run``
    check every node's ``params:`` against it before any process starts, and the node gets the
    parsed instance as ``self.params``. A node without one gets the launch file's mapping unchecked."""

    launching_host: ClassVar[bool] = False
    """True for a node that reads and writes the run folder itself, beyond what reaches it from
    anywhere (``record_step``, ``attach_images``, logs, traces): the recorder's mcap file. On a
    cluster (``--backend ray``) such a node runs on the launching machine, where the run folder is,
    unless its ``placement:`` says otherwise (docs/scale.md)."""

    id: str
    params: Any
    _rt: NodeRuntime

    @classmethod
    def parse_params(cls, raw: Mapping[str, Any] | None) -> Any:
        """The launch file's ``params:`` as this node sees them (raises pydantic's ValidationError)."""
        return dict(raw or {}) if cls.Params is None else cls.Params.model_validate(dict(raw or {}))

    # lifecycle -------------------------------------------------------------------------------
    async def setup(self) -> None:
        """Called once after the node is wired and before it reports ready."""

    async def teardown(self) -> None:
        """Called once when the graph stops, also after an error in ``run``."""

    # messaging -------------------------------------------------------------------------------
    async def publish(self, output: str, body: Any = None, *, step: int | None = None) -> None:
        """Send ``body`` to every input wired to ``output``; waits only on ``block`` edges."""
        await self._rt.publish(output, body, step=step)

    async def request(self, node: str, svc: str, body: Any = None, *, timeout: float = 10.0) -> Any:
        """Call service ``svc`` on ``node`` and return its reply body.

        Raises RequestTimeout after ``timeout`` seconds and RemoteError if the service failed.
        """
        return await self._rt.request(node, svc, body, timeout=timeout)

    async def recv(self, input: str) -> Message:
        """The next message on an input that has no ``@on_input`` handler."""
        return await self._rt.queue(input).get()

    def recv_nowait(self, input: str) -> Message | None:
        return self._rt.queue(input).get_nowait()

    # episodes --------------------------------------------------------------------------------
    async def next_episode(self) -> Episode | None:
        """Ask the kernel for the next episode to play; None when every episode has ended.

        May wait: while episodes are still in flight elsewhere (one may come back to the deck), or
        a node is restarting. If the kernel returns the episode being played to the deck, ``run``
        is interrupted (EpisodeAbandoned) and called again, so keep one-time set-up in ``setup``."""
        reply = await self._rt.next_episode()
        return None if reply is None else Episode(**reply)

    async def report(self, episode: Episode | str, **metrics: Any) -> None:
        """Add metrics to an episode in flight (any node of the graph may: an agent's or a model
        server's usage; docs/protocol.md)."""
        await self._episode_call("episode.report", episode, {"metrics": metrics})

    async def end_episode(self, episode: Episode | str, status: str = "completed", **metrics: Any) -> None:
        """Close an episode; exactly one node of a graph should do this for each episode: the node
        it was dealt to, or one of that node's judges (the kernel refuses anyone else)."""
        await self._episode_call("episode.end", episode, {"status": status, "metrics": metrics})

    async def _episode_call(self, svc: str, episode: Episode | str, body: dict[str, Any]) -> None:
        """An episode's attempt travels with the call when the node has it, so a late word on an
        attempt the kernel took back (a node it needed died) is told apart and refused. That
        refusal is a race, no fault of this node: it is logged, not raised."""
        attempt = {"attempt": episode.attempt} if isinstance(episode, Episode) else {}
        try:
            await self._rt.request("kernel", svc, {"episode": _eid(episode), **body, **attempt})
        except RemoteError as exc:
            if exc.remote_type != TAKEN_BACK:
                raise
            self.log.warning("not counted: the episode was taken back and dealt again", episode=_eid(episode),
                             service=svc, reason=str(exc))

    async def record_error(self, kind: str, message: str, episode: Episode | str | None = None) -> None:
        """Put a failure the node recovered from on record: a row of the run's ``errors`` table
        (results.sqlite), beside the kernel's own (node exits, retried episodes)."""
        await self._rt.request("kernel", "run.error", {"kind": kind, "message": message,
                                                       "episode": None if episode is None else _eid(episode)})

    async def attach_images(self, episode: Episode | str, pictures: Sequence[tuple[str, Picture]], *,
                            caption: str = "", row: str | None = None, metrics: Sequence[str] = (),
                            max_px: int | None = 1280) -> list[Path]:
        """Keep labelled pictures of an episode in the run folder, for the report to show side by
        side (a generated page beside its target) with the episode's ``metrics`` under them.

        Pictures are PNG/JPEG bytes or uint8 frames, shrunk to ``max_px`` on their longer side; one
        call is one row, and a later call with the same ``row`` name (default: the caption) replaces
        it, as a replayed episode needs (kernel/sdk/media.py).
        Encoding and writing run in a thread, so the loop keeps serving. Call it before ending the
        episode: the run may stop once its last episode has ended. Without a run folder (a unit
        test's node) nothing is written and the list is empty. A node on another machine than the
        run folder encodes the pictures and ships them to the kernel, which writes them
        (kernel.bus.outbox); the paths returned are where they land in the run folder."""
        rt = self._rt
        if not rt.run_dir:
            return []
        from kernel.sdk.media import encode_set, set_paths, write_set

        if getattr(rt, "ships", False) and rt.outbox is not None:
            from kernel.bus.outbox import media_item

            encoded = await asyncio.to_thread(encode_set, list(pictures), max_px)
            item = media_item(_eid(episode), encoded, caption=caption, row=row, metrics=tuple(metrics))
            if not rt.outbox.put_media(item):
                self.log.warning("pictures not kept: the results outbox is full, or the set is over the bus's "
                                 "message size", episode=_eid(episode), caption=caption)
                return []
            return set_paths(Path(rt.run_dir), self.id, _eid(episode), encoded, caption=caption, row=row)
        return await asyncio.to_thread(write_set, Path(rt.run_dir), self.id, _eid(episode), list(pictures),
                                       caption=caption, row=row, metrics=tuple(metrics), max_px=max_px)

    def record_step(self, record: dict[str, Any]) -> None:
        """Append one step record (what the node saw, asked, got back and did) to the run: a row of
        the ``steps`` table of ``RUN/results.sqlite`` and a line of ``RUN/steps/<id>.jsonl``. Never
        waits: a thread writes them, or, for a node on another machine, the kernel does once they
        are shipped (kernel.bus.outbox). The record gets a ``ts`` unless it has one; without a run
        folder (a unit test's node) nothing is written."""
        self._rt.record_step({"ts": round(time.time(), 3), **record})

    def summarize(self, section: str, data: dict[str, Any]) -> None:
        """Put ``data`` into the run's summary.json under ``section`` (sent with heartbeats and at
        exit; a later call replaces the node's earlier data).

        A section only this node sends is written as sent. When several nodes send a section of the
        same name, adding their numbers would turn two means of 0.5 into 1.0, so the kernel adds up
        integers only (send integers for counts, floats for means, rates and other measures), keeps
        other values that every node agrees on, leaves floats out, and puts each node's data as sent
        under ``by_node`` (docs/nodes.md)."""
        self._rt.summary_sections[section] = data

    def ports(self, params: Any) -> tuple[Sequence[str], Sequence[str]]:
        """The node's inputs and outputs, asked once before it registers, given the parsed params.
        Override where they depend on params (a bridge whose topics are set in the launch file)."""
        return self.inputs, self.outputs

    @classmethod
    def fixed_ports(cls) -> tuple[Sequence[str], Sequence[str]] | None:
        """The inputs and outputs known without starting the node, so that ``launch validate`` can
        refuse a wire to a port the class lacks; None where ``ports`` is overridden (they depend on
        params or on the world, and the kernel checks them when the node says hello)."""
        if cls.ports is not Node.ports:
            return None
        return tuple(cls.inputs), tuple(cls.outputs)

    async def started(self) -> None:
        """Wait until the run has started (every node ready and wired)."""
        await self._rt.wait_started()

    @classmethod
    def preflight(cls, params: Any) -> list[str]:
        """Problems that must stop a run before any process starts (a missing API key, say).

        ``launch run`` and ``launch validate`` call this in the launcher with the parsed params
        (after the ``Params`` model accepted them), so keep it cheap."""
        return []

    # context ---------------------------------------------------------------------------------
    @property
    def clock(self) -> Clock:
        """The frame clock configured by the node's ``clock:`` entry in the launch file."""
        return self._rt.clock

    @property
    def seed(self) -> int:
        return int(self._rt.run.get("seed", 0))

    @property
    def run_dir(self) -> Path | None:
        """The run folder, for files a node writes itself. On another machine than the launching one
        (``--backend ray``), a folder of the node's own on its machine: what it writes there stays
        there. Step records, pictures, traces and log lines reach the run folder from anywhere
        (``record_step``, ``attach_images``)."""
        return self._rt.node_run_dir()

    @property
    def log(self) -> structlog.typing.FilteringBoundLogger:
        return structlog.get_logger(self.id)

    def sources(self, input: str) -> list[str]:
        """The node ids wired into an input (e.g. the agents an environment waits for)."""
        return self._rt.sources(input)

    def readers(self, output: str, *, observers: bool = True) -> list[str]:
        """The node ids wired to read an output; without ``observers``, only those the launch file
        put there to act on it: the nodes a flag added to watch (the recorder, the console) are left
        out, so that watching a graph never changes what it does (e.g. who ends the episodes)."""
        return self._rt.readers(output, observers=observers)


TAKEN_BACK = "EpisodeTakenBack"  # the kernel's refusal of a late word on a taken-back attempt (kernel.graph.trust)


def _eid(episode: Episode | str) -> str:
    return episode.id if isinstance(episode, Episode) else episode
