"""``judge.vmage_elo``: judge.vmage that also rates its run by V-MAGE's ELO against stored runs, as it goes.

ELO needs entrants that played the same layouts, and one run never holds two (its episodes go one
each to whichever environment copy is free). So the other entrants come from run folders
(``against``), read once at set-up, and this run is one more entrant built from its own episodes
as they end. The table is the one ``launch elo THIS_RUN OTHER... --json`` prints for the same
episodes, permutations and seed: the episodes pass through the same ``result_of`` and ``rank``.

Why it is judge.vmage itself rather than a node beside it: the kernel stops the run as soon as the
last episode has ended, and a node then has 2 s of teardown, less than 10^4 shuffles of a large
pool take. Only the node that ends the episodes can make the last rating finish first: it rates
before it ends the episode that completes the run (or every ``every``-th), in a worker thread, while
the kernel's drain waits on a judge that is busy in its handler. So a graph has this node in place of
judge.vmage, never both (exactly one node ends each episode).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import Field

from nodes.judge.vmage import VmageJudge, VmageJudgeParams
from nodes.judge.vmage_elo import K, PERMUTATIONS, ROUNDS, SEED, rank
from nodes.judge.vmage_runs import (EloError, Entrant, Key, collect_entrants, cut_short, key_of, read_run, result_of,
                                    run_model, text_runs)


class VmageEloJudgeParams(VmageJudgeParams):
    against: list[str] = Field(default_factory=list, description="run folders of the other entrants (finished "
                               "or partial `launch run` folders of V-MAGE); each is one entrant named by its folder")
    name: str | None = Field(default=None, description="this run's entrant label (default: its run folder's name)")
    permutations: int = Field(default=PERMUTATIONS, ge=1, description="random shuffles of the match pool (T)")
    rounds: int = Field(default=ROUNDS, ge=1, description="matches per level (N)")
    seed: int = Field(default=SEED, description="seed of every random draw of the rating")
    k: float = Field(default=K, gt=0, description="the ELO update's K")
    every: int = Field(default=1, ge=1, description="rate again after every n ended episodes (and always after the "
                       "run's last); a large pool with many permutations takes seconds per rating")


def against_problems(paths: list[str], name: str | None) -> list[str]:
    """What is wrong with the ``against`` folders (and a ``name`` that one of them already has),
    worded to name the param and the path, so ``launch validate`` stops a run that could not rate."""
    problems = []
    for path in paths:
        try:
            read_run(Path(path))
        except EloError as exc:
            problems.append(f"against: {path}: {str(exc).removeprefix(f'{path}: ')}")
    if problems:
        return problems
    try:
        names = {e.name for e in collect_entrants([Path(p) for p in paths])}
    except EloError as exc:
        return [f"against: {exc}"]
    if name is not None and name in names:
        problems.append(f"name: {name!r} is already the name of a run in against; choose another label")
    return problems


class VmageEloJudge(VmageJudge):
    """Ends each V-MAGE episode like judge.vmage, and keeps summary.json's ``vmage_elo`` section the
    ELO table of this run against the ``against`` runs."""

    Params = VmageEloJudgeParams
    params: VmageEloJudgeParams

    @classmethod
    def preflight(cls, params: VmageEloJudgeParams) -> list[str]:
        """Bad ``against`` folders stop the run before it starts (reading them is a file read each)."""
        return against_problems(params.against, params.name)

    async def setup(self) -> None:
        await super().setup()
        p = self.params
        problems = against_problems(p.against, p.name)
        if problems:
            raise ValueError("; ".join(problems))
        self.others: list[Entrant] = collect_entrants([Path(x) for x in p.against])
        self.own_name = p.name or (self.run_dir.resolve().name if self.run_dir else self.id)
        if self.own_name in {e.name for e in self.others}:
            raise ValueError(f"name: this run's label {self.own_name!r} is also a run's in against; set name")
        self.own_ids: dict[str, Key] = {}
        self.own = Entrant(self.own_name, runs=[self.run_dir] if self.run_dir else [])
        self.ended: set[str] = set()
        if not p.against:
            self.log.warning("no run to rate against: set against to run folders (--set judge.against=[RUN])")

    async def before_end(self, episode: str, metrics: dict[str, Any]) -> None:
        """Add the episode to this run's entrant, then rate when due, before the episode ends."""
        self.ended.add(episode)
        if cut_short("completed", metrics):
            self.own.cut += 1
        else:
            key = key_of(metrics)
            self.own.results[key] = result_of(metrics)
            self.own.clocks.add(str(metrics.get("clock", "lockstep")))
            self.own_ids[episode] = key
        total = self._rt.run.get("episodes")  # the run's episode count, as the kernel dealt it
        last = total is not None and len(self.ended) >= int(total)
        if self.others and (last or len(self.ended) % self.params.every == 0):
            await self.rate()

    async def rate(self) -> None:
        """Rate in a worker thread (the loop keeps serving heartbeats and requests meanwhile) and put
        the table in summary.json; until this run shares a layout with another, say so instead."""
        p = self.params
        try:
            table = await asyncio.to_thread(lambda: rank(self._entrants(), p.rounds, p.permutations, p.seed, p.k))
        except EloError as exc:
            self.summarize("vmage_elo", {"episodes_rated": len(self.ended), "waiting": str(exc)})
            self.log.info("ELO waits", reason=str(exc))
            return
        table["episodes_rated"] = len(self.ended)
        self.summarize("vmage_elo", table)
        line = ", ".join(f"{n} {v:.1f}" for n, v in table["avg_elo"].items())
        self.log.info(f"Avg ELO after {len(self.ended)} episode(s): {line}")

    def _entrants(self) -> list[Entrant]:
        """(In the worker thread: it reads this run's folder.) The stored runs and this run, sorted by name as ``launch elo`` sorts them (the order sets
        the pool's draws). This run's model and reply-text runs come from its folder, as they would
        for ``launch elo``."""
        own = Entrant(self.own.name, list(self.own.runs), dict(self.own.results), set(self.own.clocks), self.own.cut)
        if self.run_dir is not None:
            own.models.add(run_model(self.run_dir))
            for eid, (runs, texts) in text_runs(self.run_dir).items():
                key = self.own_ids.get(eid)
                if key is not None:
                    own.results[key] = replace(own.results[key], text_runs=runs, texts=texts)
        return sorted([*self.others, own], key=lambda e: e.name)
