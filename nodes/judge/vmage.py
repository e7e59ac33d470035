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

from kernel.sdk.node import Message, Node, NodeParams, on_input
from nodes.game.vmage.paper import PAPER_SCORES


class VmageJudgeParams(NodeParams):
    pass


class VmageJudge(Node):
    """Ends each V-MAGE episode with its metrics and keeps per-level totals for summary.json."""

    inputs = ("step",)
    Params = VmageJudgeParams
    params: VmageJudgeParams

    async def setup(self) -> None:
        self.invalid: dict[str, int] = {}
        self.drawn: dict[str, int] = {}
        self.last_reply: dict[str, str] = {}
        self.reply_runs: dict[str, int] = {}
        self.totals: dict[str, dict[str, Any]] = {}

    @on_input("step")
    async def judge(self, msg: Message) -> None:
        metrics = self.tally(msg.body)
        if metrics is None:
            return
        episode = msg.body["episode"]
        self.log.info("scored", episode=episode, game=metrics["game"], level=metrics["level"],
                      score=metrics["score"], frames=metrics["frames"], reason=metrics["reason"])
        self._add(metrics)
        self.summarize("vmage", self._summary())
        await self.before_end(episode, metrics)
        await self.end_episode(episode, **metrics)

    async def before_end(self, episode: str, metrics: dict[str, Any]) -> None:
        """Work a subclass must finish before the episode ends (judge.vmage_elo rates the run here):
        once the last episode has ended the run stops, so anything after end_episode may be cut."""

    def tally(self, step: dict[str, Any]) -> dict[str, Any] | None:
        """Count one step of the ``step`` stream; the episode's metrics when it ended, else None."""
        info = step["info"]
        episode = step["episode"]
        if step["t"] == 0:  # (again: an abandoned episode being replayed starts afresh)
            self.invalid[episode] = 0
            self.drawn[episode] = 0
            self.last_reply.pop(episode, None)
            self.reply_runs[episode] = 0
        if not info.get("stopped"):
            if step["action"] is None:
                self.invalid[episode] = self.invalid.get(episode, 0) + 1
            if info.get("random_action") is not None:
                self.drawn[episode] = self.drawn.get(episode, 0) + 1
            reply = json.dumps(step["action"], sort_keys=True, default=str)
            if self.last_reply.get(episode) != reply:
                self.reply_runs[episode] = self.reply_runs.get(episode, 0) + 1
                self.last_reply[episode] = reply
        if not step["done"]:
            return None
        invalid = self.invalid.pop(episode, 0)
        drawn = self.drawn.pop(episode, 0)
        self.last_reply.pop(episode, None)
        reply_runs = self.reply_runs.pop(episode, 0)
        frames = int(info["frames"])
        decisions = int(step["t"]) + 1
        valid_rate = frames / (frames + invalid) if frames + invalid else 0.0
        return {"score": float(info["score"]), "frames": frames, "decisions": decisions, "invalid": invalid,
                "valid_rate": valid_rate, "valid_share": (decisions - invalid) / decisions,
                "random_actions": drawn, "reply_runs": reply_runs, "reason": str(info.get("reason") or ""),
                "game": info["game"],
                "level": int(info["level"]), "round": int(info["round"]), "clock": info.get("clock", "lockstep")}

    def _add(self, m: dict[str, Any]) -> None:
        key = f"{m['game']}/{m['level']}"
        t = self.totals.setdefault(key, {"game": m["game"], "level": m["level"], "episodes": 0, "score_sum": 0.0,
                                         "frames": 0, "valid_rate_sum": 0.0, "reasons": Counter()})
        t["episodes"] += 1
        t["score_sum"] += m["score"]
        t["frames"] += m["frames"]
        t["valid_rate_sum"] += m["valid_rate"]
        t["reasons"][m["reason"]] += 1

    def _summary(self) -> dict[str, Any]:
        levels = {}
        for key in sorted(self.totals, key=lambda k: (self.totals[k]["game"], self.totals[k]["level"])):
            t = self.totals[key]
            n = t["episodes"]
            levels[key] = {"episodes": n, "score_mean": t["score_sum"] / n, "frames": t["frames"],
                           "frames_mean": t["frames"] / n, "valid_rate_mean": t["valid_rate_sum"] / n,
                           "reasons": dict(t["reasons"]),
                           "paper": dict(PAPER_SCORES.get(t["game"], {}).get(t["level"], {}))}
        return {"levels": levels}
