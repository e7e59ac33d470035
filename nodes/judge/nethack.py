"""BALROG's NetHack judge: each episode's progression from the environment's ``step`` stream
(and MiniHack's success, for MiniHack tasks played by the same environment node).

The progression is recomputed here from every step's ``depth`` and ``experience_level`` (BALROG's
table, nodes/game/nethack/progress.py), not read from the environment's running value, so a
recorded episode is scored the same way offline. summary.json gets a ``nethack`` section: the
episodes, mean progression (as a fraction and in percent, BALROG's unit), deepest level and
highest experience level reached, how episodes ended, and BALROG's published numbers beside them;
MiniHack episodes go in its ``minihack`` part: per task, episodes, successes and success rate.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.steps import StepRecord
from nodes.game.nethack.baselines import MINIHACK, NETHACK, SOURCE
from nodes.game.nethack.minihack import success
from nodes.game.nethack.progress import Progress


def score_minihack(records: list[StepRecord]) -> dict[str, Any]:
    """BALROG's MiniHack metric: success, the last step's reward at least 1 (the goal reached)."""
    last = records[-1]
    ok = success(float(last["reward"]))
    return {"progression": float(ok), "progression_percent": 100.0 * ok, "success": float(ok),
            "task": str(last["info"].get("task", "")),
            "episode_return": float(last["info"].get("episode_return", sum(float(r["reward"]) for r in records))),
            "end_status": str(last["info"].get("end_status", "")), "truncated": bool(last["truncated"])}


def score_records(records: list[StepRecord]) -> dict[str, Any]:
    """BALROG's metrics of one NetHack (or MiniHack) episode from its step records, in order."""
    if records and records[-1]["info"].get("world") == "minihack":
        return score_minihack(records)
    p = Progress()
    for r in records:
        info = r["info"]
        if "depth" not in info or "experience_level" not in info:
            raise Unscored(f"step {r['t']} has no depth/experience_level in info: is the env nethack.env?")
        p.update(int(info["depth"]), int(info["experience_level"]))
    last = records[-1]["info"]
    return {"progression": p.progression, "progression_percent": 100.0 * p.progression,
            "highest_achievement": p.highest_achievement, "max_depth": p.max_depth,
            "max_experience_level": p.max_experience_level, "score": int(last.get("score", 0)),
            "episode_return": float(last.get("episode_return", sum(float(r["reward"]) for r in records))),
            "end_status": str(last.get("end_status", "")), "truncated": bool(records[-1]["truncated"])}


class NetHackJudge(JudgeNode):
    """Scores each NetHack episode by BALROG's progression."""

    section = "nethack"

    async def setup(self) -> None:
        self.scores: list[dict[str, Any]] = []
        self.minihack: dict[str, list[int]] = {}  # MiniHack task -> [episodes, successes]
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        metrics = score_records(records)
        metrics.update(steps=episode.labels["steps"], invalid=episode.labels["invalid"],
                       stopped=episode.labels["stopped"])
        if "success" in metrics:
            row = self.minihack.setdefault(metrics["task"], [0, 0])
            row[0] += 1
            row[1] += int(metrics["success"])
            self.log.info("scored", episode=episode.id, task=metrics["task"], success=bool(metrics["success"]))
            return metrics
        self.scores.append(metrics)
        self.log.info("scored", episode=episode.id, progression=round(metrics["progression"], 4),
                      depth=metrics["max_depth"], xl=metrics["max_experience_level"])
        return metrics

    def summary(self) -> dict[str, Any] | None:
        out: dict[str, Any] = {}
        if self.minihack:
            n, wins = sum(r[0] for r in self.minihack.values()), sum(r[1] for r in self.minihack.values())
            out["minihack"] = {"tasks": {t: {"episodes": e, "successes": w, "success_rate": w / e}
                                         for t, (e, w) in sorted(self.minihack.items())},
                               "episodes": n, "successes": wins, "progression_percent": 100.0 * wins / n,
                               "balrog_published": MINIHACK, "balrog_published_source": SOURCE}
        if not self.scores:
            return out or None
        n = len(self.scores)
        mean = sum(s["progression"] for s in self.scores) / n
        return {"episodes": n, "progression_mean": mean, "progression_percent": 100.0 * mean,
                "max_depth": max(s["max_depth"] for s in self.scores),
                "max_experience_level": max(s["max_experience_level"] for s in self.scores),
                "steps_mean": sum(s["steps"] for s in self.scores) / n,
                "invalid": sum(s["invalid"] for s in self.scores),
                "end_status": dict(Counter(s["end_status"] for s in self.scores)),
                "balrog_published": NETHACK, "balrog_published_source": SOURCE, **out}
