"""A judge for the guess-the-number game, whole, on JudgeNode (docs/nodes.md quotes this file verbatim)."""

from __future__ import annotations

from typing import Any

from kernel import JudgedEpisode, JudgeNode, StepRecord, Unscored


class GuessJudge(JudgeNode):
    """Finding the number scores 100 / guesses taken; summary.json's ``guess`` has the mean."""

    section = "guess"

    async def setup(self) -> None:
        self.scores: list[float] = []
        await super().setup()  # after the state summary() reads: it puts the first summary in place

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        last = records[-1]
        if "success" not in last["info"] and not episode.labels["stopped"]:
            raise Unscored("the last step has no success: is its env the guess game?")  # ends it unscored
        found = bool(last["info"].get("success"))
        score = 100.0 / episode.labels["steps"] if found else 0.0
        self.scores.append(score)
        return {"success": float(found), "score": score, "truncated": last["truncated"], **episode.labels}

    def summary(self) -> dict[str, Any] | None:
        if not self.scores:
            return None  # nothing to say yet
        return {"episodes": len(self.scores), "mean_score": sum(self.scores) / len(self.scores)}
