"""MageBench's Sokoban judge: the score of each episode from the environment's ``step`` stream.

It keeps its own running total of the rewards (the environment's ``info`` supplies only the facts
of the level: R_best, tier, id, success), so the score is computed once, here, by MageBench's rule
(nodes/game/sokoban/scoring.py): best cumulative reward within the step budget - R_best + 100.

Besides ending each episode with its metrics, it puts a ``sokoban`` section in summary.json: counts
and sums per tier and overall, their means, and the paper's idle/random/human numbers beside them.
Summary sections of several nodes are added together, so a graph should have one Sokoban judge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kernel.sdk.node import Message, Node, NodeParams, on_input
from nodes.game.sokoban.scoring import ScoreTracker
from nodes.game.sokoban.tiers import PAPER_BASELINES, TIERS


class SokobanJudgeParams(NodeParams):
    set: Literal["mini", "full"] | None = Field(None, description="which paper baselines to print beside ours "
                                                "(default: the set the environment says it plays)")


class SokobanJudge(Node):
    """Scores each Sokoban episode from the environment's step stream, beside the paper's baselines."""

    inputs = ("step",)
    Params = SokobanJudgeParams
    params: SokobanJudgeParams

    async def setup(self) -> None:
        self.trackers: dict[str, ScoreTracker] = {}
        self.totals: dict[str, dict[str, float]] = {}
        self.set_name: str | None = self.params.set

    @on_input("step")
    async def judge(self, msg: Message) -> None:
        step = msg.body
        info = step["info"]
        episode = step["episode"]
        tracker = self.trackers.get(episode)
        if tracker is None or step["t"] == 0:  # step 0 again: an abandoned episode being replayed
            tracker = self.trackers[episode] = ScoreTracker(float(info["r_best"]))
        if step["t"] < int(info.get("max_steps", 50)) and not info.get("stopped"):
            tracker.add(float(step["reward"]))
        if not step["done"]:
            return
        del self.trackers[episode]
        score = tracker.score
        success = bool(info["success"])
        metrics = {"score": score, "success": float(success), "steps": int(info["steps"]),
                   "optimal_steps": int(info["optimal_steps"]), "best_reward": tracker.best,
                   "r_best": tracker.r_best, "invalid": int(info.get("invalid", 0)), "tier": info["tier"],
                   "level": info["level"]}
        self.log.info("scored", episode=episode, level=info["level"], score=round(score, 2), success=success)
        self.set_name = self.set_name or info.get("set")
        self._add(info["tier"], score, success, int(info["steps"]))
        self.summarize("sokoban", self._summary())
        await self.end_episode(episode, **metrics)

    def _add(self, tier: str, score: float, success: bool, steps: int) -> None:
        for key in ("all", tier):
            t = self.totals.setdefault(key, {"episodes": 0, "score_sum": 0.0, "successes": 0, "steps_sum": 0})
            t["episodes"] += 1
            t["score_sum"] += score
            t["successes"] += int(success)
            t["steps_sum"] += steps

    def _summary(self) -> dict[str, Any]:
        def view(t: dict[str, float]) -> dict[str, float]:
            n = t["episodes"]
            return {**t, "score_mean": t["score_sum"] / n, "success_rate": t["successes"] / n,
                    "steps_mean": t["steps_sum"] / n}

        order = ["all"] + [t.name for t in TIERS]
        return {"tiers": {k: view(self.totals[k]) for k in order if k in self.totals},
                "score_mean": view(self.totals["all"])["score_mean"],
                "paper": dict(PAPER_BASELINES.get(str(self.set_name), {}))}
