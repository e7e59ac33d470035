"""The hello graph's judge: scores each episode from the environment's step stream."""

from __future__ import annotations

from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode
from kernel.sdk.steps import StepRecord


class HelloJudge(JudgeNode):
    """Success is reaching the target; the score rewards reaching it in few steps."""

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        steps = episode.labels["steps"]
        score = 100.0 * info["target"] / steps if info["reached"] else 0.0
        self.log.info("scored", episode=episode.id, reached=info["reached"], steps=steps, score=round(score, 1))
        return {"success": float(info["reached"]), "steps": steps, "score": score}
