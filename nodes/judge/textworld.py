"""BALROG's TextWorld judge: each episode's progression, the score fraction (1 for a won game).

Computed from the last step's ``score``, ``max_score`` and ``won`` (nodes/game/textworld/tasks.py),
as BALROG computes it when a game ends. summary.json gets a ``textworld`` section: per task and
overall, episodes, mean progression (fraction and percent, BALROG's unit) and wins, with BALROG's
published numbers beside them.
"""

from __future__ import annotations

from typing import Any

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.steps import StepRecord
from nodes.game.textworld.baselines import SOURCE, TEXTWORLD
from nodes.game.textworld.tasks import progression


def score_records(records: list[StepRecord]) -> dict[str, Any]:
    """BALROG's metrics of one TextWorld episode from its step records."""
    info = records[-1]["info"]
    missing = [k for k in ("score", "max_score", "won", "task") if k not in info]
    if missing:
        raise Unscored(f"the last step has no {', '.join(missing)}: is its env textworld.env?")
    p = progression(float(info["score"]), float(info["max_score"]), bool(info["won"]))
    return {"progression": p, "progression_percent": 100.0 * p, "won": float(bool(info["won"])),
            "score": float(info["score"]), "max_score": float(info["max_score"]), "task": str(info["task"]),
            "game_seed": int(info.get("game_seed", -1))}


class TextWorldJudge(JudgeNode):
    """Scores each TextWorld episode by BALROG's progression, per task."""

    section = "textworld"

    async def setup(self) -> None:
        self.rows: dict[str, list[float]] = {}  # task -> [episodes, progression sum, wins]
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        metrics = score_records(records)
        metrics.update(steps=episode.labels["steps"], invalid=episode.labels["invalid"],
                       stopped=episode.labels["stopped"])
        for key in ("all", metrics["task"]):
            row = self.rows.setdefault(key, [0, 0.0, 0])
            row[0] += 1
            row[1] += metrics["progression"]
            row[2] += int(metrics["won"])
        self.log.info("scored", episode=episode.id, task=metrics["task"], progression=round(metrics["progression"], 3))
        return metrics

    def summary(self) -> dict[str, Any] | None:
        if not self.rows:
            return None

        def view(row: list[float]) -> dict[str, Any]:
            n, total, wins = row
            return {"episodes": int(n), "progression_mean": total / n, "progression_percent": 100.0 * total / n,
                    "wins": int(wins)}

        return {"tasks": {k: view(v) for k, v in self.rows.items() if k != "all"},
                **view(self.rows["all"]), "balrog_published": TEXTWORLD, "balrog_published_source": SOURCE}
