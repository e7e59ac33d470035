"""MageBench's Sokoban judge: each episode's score from the environment's ``step`` stream.

The score is the game's (nodes/game/sokoban/game.py keeps it as it plays, by MageBench's rule in
nodes/game/sokoban/scoring.py: best cumulative reward within the step budget - R_best + 100) and
reaches the judge in the last step's ``info``; it is computed there once, so the bus, the
Gymnasium env and the baseline script cannot disagree about it.

Besides ending each episode with its metrics, it puts a ``sokoban`` section in summary.json: counts
and sums per tier and overall, their means, and the paper's idle/random/human numbers beside them.
Summary sections of several nodes are added together, so a graph should have one Sokoban judge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.node import NodeParams
from kernel.sdk.steps import StepRecord
from nodes.game.sokoban.tiers import PAPER_BASELINES, TIERS

_KEYS = ("score", "success", "steps", "optimal_steps", "best_reward", "r_best", "tier", "level")


class SokobanJudgeParams(NodeParams):
    set: Literal["mini", "full"] | None = Field(None, description="which paper baselines to print beside ours "
                                                "(default: the set the environment says it plays)")


class SokobanJudge(JudgeNode):
    """Scores each Sokoban episode from the environment's step stream, beside the paper's baselines."""

    Params = SokobanJudgeParams
    params: SokobanJudgeParams
    section = "sokoban"

    async def setup(self) -> None:
        self.totals: dict[str, dict[str, float]] = {}
        self.set_name: str | None = self.params.set
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        if missing := [k for k in _KEYS if k not in info]:
            raise Unscored(f"the last step has no {', '.join(missing)}: is its env sokoban.env?")
        score, success, steps = float(info["score"]), bool(info["success"]), int(info["steps"])
        self.log.info("scored", episode=episode.id, level=info["level"], score=round(score, 2), success=success)
        self.set_name = self.set_name or info.get("set")
        self._add(info["tier"], score, success, steps)
        return {"score": score, "success": float(success), "steps": steps, "optimal_steps": int(info["optimal_steps"]),
                "best_reward": float(info["best_reward"]), "r_best": float(info["r_best"]),
                "invalid": episode.labels["invalid"], "tier": info["tier"], "level": info["level"]}

    def _add(self, tier: str, score: float, success: bool, steps: int) -> None:
        for key in ("all", tier):
            t = self.totals.setdefault(key, {"episodes": 0, "score_sum": 0.0, "successes": 0, "steps_sum": 0})
            t["episodes"] += 1
            t["score_sum"] += score
            t["successes"] += int(success)
            t["steps_sum"] += steps

    def summary(self) -> dict[str, Any] | None:
        if not self.totals:
            return None

        def view(t: dict[str, float]) -> dict[str, float]:
            n = t["episodes"]
            return {**t, "score_mean": t["score_sum"] / n, "success_rate": t["successes"] / n,
                    "steps_mean": t["steps_sum"] / n}

        order = ["all"] + [t.name for t in TIERS]
        return {"tiers": {k: view(self.totals[k]) for k in order if k in self.totals},
                "score_mean": view(self.totals["all"])["score_mean"],
                "paper": dict(PAPER_BASELINES.get(str(self.set_name), {}))}
