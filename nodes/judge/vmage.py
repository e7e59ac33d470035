"""V-MAGE's judge: each episode's score, frames, valid rate and why it ended, from the ``step`` stream.

The score is the game's own (Pong: returns of both paddles; FlappyBird: pipe pairs passed). The
valid rate is V-MAGE's, frames / (frames + invalid decisions) (spec §3), where a decision is
invalid when nothing was applied: an unparsable reply sent as none or a body outside the level's
actions. ELO needs (score, valid rate) per episode and round, so both are in each episode's metrics.
The paper words the valid rate as the share of a model's actions that kept to the format; that share,
valid decisions / decisions, is ``valid_share`` beside it (the two differ when a decision plays
several frames). ``random_actions`` counts the decisions where the env played a random action after
3 invalid ones in a row (V-MAGE's rule); such a decision is still invalid, as in V-MAGE.

For the anchoring metric (spec §5.5: how many decisions in a row the reply stays the same) each
episode also counts ``reply_runs``, its maximal runs of one unchanged reply, where the reply is what
reached the game (the action, none for an invalid reply): decisions / reply_runs is the mean run
length in decisions, frames / reply_runs in frames. The ELO judge pools them per game.

The ``vmage`` section of summary.json holds, per game and level, the episode count, the means and
the termination reasons, with the paper's Random, Human and GPT-4o averages beside them.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode
from kernel.sdk.node import NodeParams
from kernel.sdk.steps import StepRecord
from nodes.game.vmage.paper import PAPER_SCORES


class VmageJudgeParams(NodeParams):
    pass


class VmageJudge(JudgeNode):
    """Ends each V-MAGE episode with its metrics and keeps per-level totals for summary.json."""

    Params = VmageJudgeParams
    params: VmageJudgeParams
    section = "vmage"

    async def setup(self) -> None:
        self.totals: dict[str, dict[str, Any]] = {}
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        metrics = tally(records)
        self.log.info("scored", episode=episode.id, game=metrics["game"], level=metrics["level"],
                      score=metrics["score"], frames=metrics["frames"], reason=metrics["reason"])
        self._add(metrics)
        await self.before_end(episode.id, metrics)
        return metrics

    async def before_end(self, episode: str, metrics: dict[str, Any]) -> None:
        """Work a subclass must finish before the episode ends (judge.vmage_elo rates the run here):
        once the last episode has ended the run stops, so anything after end_episode may be cut."""

    def _add(self, m: dict[str, Any]) -> None:
        key = f"{m['game']}/{m['level']}"
        t = self.totals.setdefault(key, {"game": m["game"], "level": m["level"], "episodes": 0, "score_sum": 0.0,
                                         "frames": 0, "valid_rate_sum": 0.0, "reasons": Counter()})
        t["episodes"] += 1
        t["score_sum"] += m["score"]
        t["frames"] += m["frames"]
        t["valid_rate_sum"] += m["valid_rate"]
        t["reasons"][m["reason"]] += 1

    def summary(self) -> dict[str, Any] | None:
        if not self.totals:
            return None
        levels = {}
        for key in sorted(self.totals, key=lambda k: (self.totals[k]["game"], self.totals[k]["level"])):
            t = self.totals[key]
            n = t["episodes"]
            levels[key] = {"episodes": n, "score_mean": t["score_sum"] / n, "frames": t["frames"],
                           "frames_mean": t["frames"] / n, "valid_rate_mean": t["valid_rate_sum"] / n,
                           "reasons": dict(t["reasons"]),
                           "paper": dict(PAPER_SCORES.get(t["game"], {}).get(t["level"], {}))}
        return {"levels": levels}


def tally(records: list[StepRecord]) -> dict[str, Any]:
    """An ended episode's metrics from its records: a stop request's record is no decision of the
    model, so it counts toward neither the invalid decisions nor the reply runs."""
    invalid = drawn = reply_runs = 0
    last_reply: str | None = None
    for record in records:
        info = record["info"]
        if info.get("stopped"):
            continue
        if record["action"] is None:
            invalid += 1
        if info.get("random_action") is not None:
            drawn += 1
        reply = json.dumps(record["action"], sort_keys=True, default=str)
        if reply != last_reply:
            reply_runs += 1
            last_reply = reply
    last = records[-1]
    info = last["info"]
    frames = int(info["frames"])
    decisions = last["t"] + 1
    valid_rate = frames / (frames + invalid) if frames + invalid else 0.0
    return {"score": float(info["score"]), "frames": frames, "decisions": decisions, "invalid": invalid,
            "valid_rate": valid_rate, "valid_share": (decisions - invalid) / decisions,
            "random_actions": drawn, "reply_runs": reply_runs, "reason": str(info.get("reason") or ""),
            "game": info["game"], "level": int(info["level"]), "round": int(info["round"]),
            "clock": info.get("clock", "lockstep")}
