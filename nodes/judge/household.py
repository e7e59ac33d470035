"""VAB-OmniGibson's judge (``household.judge``): success and the share of goal conditions met.

``household.env`` evaluates the activity's BDDL goal with BDDL's own evaluator after every action
(the agent's reward is that share, as in VAB's container), so the judge reads the last step's
``info`` rather than holding a second copy of the world, and ends each episode with ``success``
(every goal condition holds), ``goal_fraction`` (the best grounding's share of conditions met, at
the end), VAB's ``average_reward`` (max(0, (final - initial) / (1 - initial)), its measure of
progress on a failure), the ``end_status`` in VAB's words (``status`` is the kernel's own word for
how an episode ended), and the activity and scene.

summary.json's ``household`` section has the success rate (in %, over every episode: a crash or a
stop counts as a failure, as VAB counts them), the mean goal fraction, the counts per end status and
per activity, and VAB's Table 4 OmniGibson column beside them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.steps import StepRecord
from nodes.judge import household_paper

__all__ = ["HouseholdJudge"]


class HouseholdJudge(JudgeNode):
    """Ends each household episode with its success and goal fraction; keeps the rates."""

    section = "household"

    async def setup(self) -> None:
        self.episodes: list[dict[str, Any]] = []
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        if "goal_fraction" not in info or "activity" not in info:
            raise Unscored("the last step has no goal_fraction and activity: is its env household.env?")
        final, initial = float(info["goal_fraction"]), float(info.get("initial_fraction", 0.0))
        success = bool(info.get("success"))
        progress = 1.0 if success else max(0.0, (final - initial) / (1 - initial)) if initial < 1 else 0.0
        metrics = {"success": float(success), "goal_fraction": round(final, 4),
                   "initial_fraction": round(initial, 4), "average_reward": round(progress, 4),
                   "end_status": str(info.get("status") or ("completed" if success else "task failed")),
                   "activity": str(info["activity"]), "scene": str(info.get("scene", "")), **episode.labels}
        self.episodes.append(metrics)
        return metrics

    def summary(self) -> dict[str, Any]:
        n = len(self.episodes)
        wins = sum(e["success"] for e in self.episodes)
        per_activity: dict[str, list[int]] = {}
        for e in self.episodes:
            row = per_activity.setdefault(e["activity"], [0, 0])
            row[0] += 1
            row[1] += int(e["success"])
        return {"episodes": n, "successes": int(wins),
                "success_rate": round(100 * wins / n, 2) if n else None,
                "mean_goal_fraction": round(sum(e["goal_fraction"] for e in self.episodes) / n, 4) if n else None,
                "mean_average_reward": round(sum(e["average_reward"] for e in self.episodes) / n, 4) if n else None,
                "end_status": dict(Counter(e["end_status"] for e in self.episodes)),
                "per_activity": {a: {"episodes": k, "successes": w} for a, (k, w) in sorted(per_activity.items())},
                "unscored": self.unscored,
                "paper_source": household_paper.SOURCE, "paper": household_paper.table()}
