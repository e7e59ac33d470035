"""The judge base: one reading of the step stream for every benchmark's judge (docs/nodes.md).

Every judge used to open the same way: take ``msg.body`` apart by hand, keep what it needed of an
episode's steps until ``done``, work out steps, invalid and stopped again (each a little
differently), end the episode and put its table in summary.json. Here that is written once; a
judge says only how its benchmark scores an episode::

    class GuessJudge(JudgeNode):
        section = "guess"                                   # its table in summary.json

        async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
            ...                                             # the episode's metrics

        def summary(self) -> dict[str, Any] | None: ...     # the table (None: nothing to say yet)

The base parses each body once into a typed :class:`StepRecord` (a malformed one is counted and put
on the run's record, never a crash of the judge), keeps the records of each episode in play (a new
``t = 0`` or attempt starts it afresh: an abandoned episode dealt again), and on ``done`` calls
``score``, puts ``summary()`` under ``section``, ends the episode, and calls ``finished`` (to free
what scoring held). A ``score`` that cannot score raises :class:`Unscored`: the episode ends
``unscored`` with the reason, on the run's record: neither a silent 0 nor a ``failed`` run of the
world (it was played; only its score is missing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from kernel.sdk.node import Message, Node, NodeParams, on_input
from kernel.sdk.steps import Labels, StepRecord, StepRecordError, episode_labels, parse_step

__all__ = ["UNSCORED", "JudgeNode", "JudgedEpisode", "Unscored"]

UNSCORED = "unscored"  # the status of an episode played to its end whose score could not be computed


@dataclass(frozen=True, slots=True)
class JudgedEpisode:
    """An episode whose last step has arrived: its id, the node that played it (with replicas, which
    copy: the one to ask about it), its attempt, and the labels every episode carries."""

    id: str
    env: str
    attempt: int
    labels: Labels


class Unscored(Exception):
    """Raised by ``score``: the episode cannot be scored (the step lacks what the benchmark needs, a
    service it asked failed, a grader the benchmark needs was not given). It ends with status
    ``unscored``, ``reason`` and ``metrics`` beside the labels."""

    def __init__(self, reason: str, metrics: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.metrics = dict(metrics or {})


@dataclass(slots=True)
class _Playing:
    """The records of one episode so far, and the attempt they belong to."""

    attempt: int
    records: list[StepRecord] = field(default_factory=list)


class JudgeNode(Node):
    """Base of every judge. Override ``score`` (and ``summary`` with a ``section`` for a table in
    summary.json). A ``setup`` of your own sets its state and then calls ``await super().setup()``,
    which puts the first summary (if any) in place."""

    inputs: ClassVar[tuple[str, ...]] = ("step",)
    Params: ClassVar[type[NodeParams]] = NodeParams
    section: ClassVar[str | None] = None
    """The summary.json section ``summary()`` fills (one judge per graph should send it); None: none."""

    def __init__(self) -> None:
        self._playing: dict[str, _Playing] = {}  # episode id -> its records so far
        self.unscored = 0
        """Episodes ended ``failed`` because ``score`` raised Unscored."""
        self.malformed = 0
        """Step bodies that were no step record (counted; logged and on the run's record at 1, 2, 4 ...)."""

    # -- what a judge writes --------------------------------------------------------------------------------
    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        """The metrics of an ended episode from its records, in order (the last is ``done``). Keep the
        run's totals for ``summary`` here too: the episode is ended right after. Raise Unscored when
        the episode cannot be scored."""
        raise NotImplementedError

    def summary(self) -> dict[str, Any] | None:
        """The ``section`` of summary.json as it stands now; None while there is nothing to say."""
        return None

    async def finished(self, episode: JudgedEpisode) -> None:
        """Called once the episode has ended, scored or not (and when ``score`` failed): free what
        scoring held open. Here, not in ``score``, whatever must wait for the end (a page whose
        release lets the sites reset for the next episode)."""

    # -- the base ---------------------------------------------------------------------------------------------
    async def setup(self) -> None:
        self._summarize()

    @on_input("step")
    async def _on_step(self, msg: Message) -> None:
        try:
            record = parse_step(msg.body)
        except StepRecordError as exc:
            await self._malformed(msg, exc)
            return
        eid, attempt = record["episode"], record.get("attempt", 1)
        now = self._playing.get(eid)
        if now is None or record["t"] == 0 or now.attempt != attempt:
            now = self._playing[eid] = _Playing(attempt)
        now.records.append(record)
        if not record["done"]:
            return
        del self._playing[eid]
        episode = JudgedEpisode(eid, msg.src, attempt, episode_labels(record))
        try:
            await self._judge(episode, now.records)
        finally:
            await self.finished(episode)

    async def _judge(self, episode: JudgedEpisode, records: list[StepRecord]) -> None:
        try:
            metrics = await self.score(episode, records)
        except Unscored as exc:
            self.unscored += 1
            self.log.error("cannot score", episode=episode.id, reason=exc.reason)
            await self.record_error(f"{self.section or self.id}.unscored", exc.reason, episode.id)
            self._summarize()
            await self.end_episode(episode.id, status=UNSCORED,
                                   **{**episode.labels, **exc.metrics, "reason": exc.reason})
            return
        self._summarize()
        await self.end_episode(episode.id, **metrics)

    def _summarize(self) -> None:
        if self.section is not None and (data := self.summary()) is not None:
            self.summarize(self.section, data)

    async def _malformed(self, msg: Message, exc: StepRecordError) -> None:
        """Counted; the 1st, 2nd, 4th ... logged and put on the run's record (a flood costs a few rows).
        A body that still names its episode and says ``done`` ends that episode ``failed``: left
        open, it would hold the run until its timeout."""
        self.malformed += 1
        n = self.malformed
        body = msg.body
        eid = body.get("episode") if isinstance(body, dict) else None
        if n & (n - 1) == 0:
            self.log.error("not a step record", src=msg.src, error=str(exc), count=n)
            await self.record_error("judge.malformed_step", f"{msg.src}/{msg.topic}: {exc} ({n}x)",
                                    eid if isinstance(eid, str) else None)
        if isinstance(eid, str) and eid and isinstance(body, dict) and body.get("done") is True:
            self._playing.pop(eid, None)
            await self.end_episode(eid, status="failed", reason=f"its last step record is malformed: {exc}")
