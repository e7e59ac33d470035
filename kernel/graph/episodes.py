"""The episode book: deals episodes to environment nodes and keeps their results on disk.

Results go to the run's SQLite store (kernel.graph.store) and its ``episodes.jsonl`` mirror the moment an
episode ends, so a crash loses nothing, and a re-run with the same output folder skips the
episodes that already ended.

The book itself keeps only what the launcher needs to go on: counts, metric sums (for the means in
summary.json), a bitmap of the ended episodes, the episodes in flight and the last few records.
A run of a million episodes costs the launcher about as much memory as a run of a thousand; the
store has every record.

A run counts and averages only the episodes of its own deal: ``ep00000`` up to its last index
(every ``epNNNNN`` when it has no end). Records in the folder outside it (a previous run of the same
folder with more episodes, an id the kernel never deals) stay in the store but are neither counted,
nor averaged, nor skipped as played; ``outside`` says how many there were.
"""

from __future__ import annotations

import contextlib
import math
from collections import Counter, deque
from pathlib import Path
from typing import Any, Callable

from kernel.bus.episode_ids import deal_span, episode_id, episode_index
from kernel.bus.messages import Dealt
from kernel.bus.resultsdb import ResultsNotWritten
from kernel.graph.store import ResultsStore

RECENT = 100  # ended records kept in memory (tests and `launch ctl` look at the latest ones)


class Bitmap:
    """One bit per episode index, growing as needed: 125 KB per million episodes, where a set of
    ints costs ~60 B per member."""

    __slots__ = ("_bits",)

    def __init__(self, size: int = 0) -> None:
        self._bits = bytearray((size + 7) // 8)

    def __contains__(self, index: int) -> bool:
        byte = index >> 3
        return 0 <= byte < len(self._bits) and bool(self._bits[byte] & (1 << (index & 7)))

    def add(self, index: int) -> None:
        byte = index >> 3
        if byte >= len(self._bits):
            self._bits.extend(bytes(max(byte + 1 - len(self._bits), len(self._bits) // 2)))
        self._bits[byte] |= 1 << (index & 7)


def in_deal(eid: Any, total: int | None) -> bool:
    """Whether ``eid`` is one of the ids a run of ``total`` episodes deals (None: no end)."""
    index = episode_index(eid)
    return index is not None and (total is None or index < total)


class EpisodeBook:
    def __init__(self, total: int | None, seed: int, run_dir: Path, max_retries: int = 2,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self.total = total
        self.seed = seed
        self.store = ResultsStore(run_dir, on_problem)
        self.max_retries = max_retries
        self.records: dict[str, dict[str, Any]] = {}  # the last RECENT ended episodes, oldest first
        # called with each ended record as it is counted (on the kernel's loop): a waiter for one
        # episode's result (GraphEnv at an episode's end) hears it at once instead of polling
        self.on_record: list[Callable[[dict[str, Any]], None]] = []
        self._ended = Bitmap(total or 0)
        self.ended_count = 0
        self._statuses: Counter[str] = Counter()
        self._sums: dict[str, float] = {}  # metric -> sum over completed episodes
        self._counts: Counter[str] = Counter()  # metric -> completed episodes that have it
        self._metrics: dict[str, dict[str, Any]] = {}
        self._owner: dict[str, str] = {}
        # episode -> the node it was taken back from (a node it needed died), until it ends: so a late
        # word of that earlier attempt is told apart from one of the attempt dealt now (kernel.graph.trust)
        self._taken: dict[str, str] = {}
        self._retries: dict[str, int] = {}
        self._returned: deque[int] = deque()  # sent back to the deck: dealt before any new one
        self._cursor = 0  # the lowest index never dealt
        self.content: Callable[[int], int] | None = None
        """Where a caller in the launch process picks what a dealt episode plays (GraphEnv's
        ``reset(seed=...)``): the dealt index -> the index (and so the seed) the environment is
        given. The id stays the dealt one, so the book's bookkeeping is unchanged."""
        self.outside = 0  # ended records in the folder that this run's deal does not cover
        for rec in self.store.each_ended():  # with what episodes.jsonl had and the database lacked
            if in_deal(rec["episode_id"], total):
                self._count(rec)
            else:
                self.outside += 1
        self.resumed = self.ended_count

    def index_of(self, eid: str) -> int:
        """The index in an episode id; a ValueError that says what ids look like otherwise."""
        index = episode_index(eid)
        if index is not None and (self.total is None or index < self.total):
            return index
        span = deal_span(self.total)
        raise ValueError(f"unknown episode {eid!r}: the kernel deals ids {span} (use the id episode.next gave)")

    def is_ended(self, eid: str) -> bool:
        return self.index_of(eid) in self._ended

    def deal(self, node: str) -> Dealt | None:
        index = self._next_index()
        if index is None:
            return None
        eid = episode_id(index)
        self._owner[eid] = node
        self._metrics.setdefault(eid, {})
        plays = index if self.content is None else int(self.content(index))
        return Dealt(id=eid, index=plays, seed=self.seed + plays)

    def holder(self, eid: str) -> str | None:
        """The node ``eid`` is dealt to now; None when it is not in flight."""
        return self._owner.get(eid)

    def taken_from(self, eid: str) -> str | None:
        """The node ``eid`` was last taken back from, while it has not ended."""
        return self._taken.get(eid)

    def attempt(self, eid: str) -> int:
        """Which attempt at ``eid`` is being played (1 until a dead node sent it back to the deck)."""
        return self._retries.get(eid, 0) + 1

    def _next_index(self) -> int | None:
        while self._returned:
            index = self._returned.popleft()
            if index not in self._ended:  # a retried episode whose first attempt ended after all is skipped
                return index
        while self.total is None or self._cursor < self.total:
            index = self._cursor
            self._cursor += 1
            if index not in self._ended:  # ended in an earlier, resumed run
                return index
        return None

    def report(self, eid: str, metrics: dict[str, Any]) -> None:
        if self.is_ended(eid):
            return  # late metrics for an ended episode are not allowed to change a written result
        self._metrics.setdefault(eid, {}).update(metrics)

    def end(self, eid: str, status: str, metrics: dict[str, Any]) -> None:
        index = self.index_of(eid)
        if index in self._ended:
            return  # ended twice (e.g. a retried node): the first result stands, nothing is counted twice
        merged = {**self._metrics.get(eid, {}), **metrics}
        retries = self._retries.get(eid, 0)
        rec = {"episode_id": eid, "status": status, "node": self._owner.get(eid), "retries": retries,
               "metrics": merged}
        # the attempt that ended: the one dealt now, or, for an episode returned to the deck and not
        # dealt again, the returned one (its first attempt ended after all)
        attempt = max(1, retries + (1 if eid in self._owner else 0))
        if attempt > 1:
            rec["attempt"] = attempt  # its step records are those of this attempt (kernel.bus.resultsdb)
        self.store.end(rec, index)  # first: an episode the disk did not take is not ended (ResultsNotWritten)
        self._metrics.pop(eid, None)
        self._owner.pop(eid, None)
        self._taken.pop(eid, None)
        self._retries.pop(eid, None)
        self._count(rec)

    def _count(self, rec: dict[str, Any]) -> None:
        """Fold one ended record of this run's deal into the aggregates, and keep it among the recent ones."""
        eid = rec["episode_id"]
        index = episode_index(eid)
        if index is not None:
            self._ended.add(index)
        self.ended_count += 1
        self._statuses[rec["status"]] += 1
        if rec["status"] == "completed":
            for key, value in rec["metrics"].items():
                if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                    self._sums[key] = self._sums.get(key, 0.0) + float(value)
                    self._counts[key] += 1
        self.records[eid] = rec
        if len(self.records) > RECENT:
            del self.records[next(iter(self.records))]
        for listener in list(self.on_record):
            listener(rec)

    def node_lost(self, node: str, *, all_in_flight: bool = False) -> dict[str, str]:
        """Give the unfinished episodes a dead node took part in back to the deck (bounded retries);
        returns each of them with the node that was playing it.

        The episodes it was dealt, or, for a node that is dealt none (an agent, a judge), every
        episode in flight: any of them may have lost a message to it. An episode whose first attempt
        still ends is kept as it ended, and its second attempt is skipped."""
        lost = {eid: owner for eid, owner in self._owner.items() if owner == node or all_in_flight}
        for eid, owner in lost.items():
            del self._owner[eid]
            self._taken[eid] = owner
            self._retries[eid] = self._retries.get(eid, 0) + 1
            if self._retries[eid] > self.max_retries:
                attempts = self._retries[eid]
                with contextlib.suppress(ResultsNotWritten):  # the store told its owner: the run is ending
                    self.end(eid, "failed", {"error": f"node {node} died {attempts} times in this episode"})
                self.store.error("failed", f"given up after {attempts} attempts", node=node, episode=eid)
            else:
                self._returned.appendleft(self.index_of(eid))
                self.store.error("retry", f"node {node} died mid-episode; attempt {self._retries[eid] + 1} follows",
                                 node=node, episode=eid)
        return lost

    def owns_episodes(self, node: str) -> bool:
        return node in self._owner.values()

    @property
    def in_flight(self) -> int:
        """Episodes dealt and neither ended nor returned: one of them may still come back."""
        return len(self._owner)

    @property
    def returned(self) -> bool:
        """Whether an episode sent back to the deck waits to be dealt again."""
        return any(index not in self._ended for index in self._returned)

    def close(self) -> None:
        self.store.close()

    @property
    def done(self) -> bool:
        return self.total is not None and self.ended_count >= self.total

    def counts(self) -> dict[str, int | None]:
        """Episodes in all, completed and failed; ``unscored`` (played, but a judge could not score
        them) is there only when some were."""
        out: dict[str, int | None] = {"total": self.total if self.total is not None else self.ended_count,
                                      "completed": self._statuses["completed"], "failed": self._statuses["failed"]}
        if self._statuses["unscored"]:
            out["unscored"] = self._statuses["unscored"]
        return out

    def summary_metrics(self) -> dict[str, float]:
        """Mean of every numeric metric over completed episodes."""
        return {key: self._sums[key] / self._counts[key] for key in sorted(self._sums)}

