"""The KidGym judge: success rate per task and level, the paper's metric (100 rounds per cell).

It ends each episode when the step stream says ``done``, with metrics ``success`` (1.0 or 0.0),
``steps``, ``task``, ``level``, ``round`` and ``stopped``, and keeps the run's table in summary.json
under ``kidgym``: per cell (``CL-L1``, ...) the episodes, successes and success rate, with the paper's
random and human baselines beside them, and, when ``paper_model`` names a model of Table 2 (7, 8
with ``paper_mode: cot`` / ``icl``), that model's published rate; plus the capability scores
(App. D) once a capability's tasks have been played at all three levels.

Summary sections of one name from several nodes are added up by the kernel, so a graph should
have a single KidGym judge.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kernel.sdk.judge import JudgedEpisode, JudgeNode
from kernel.sdk.node import NodeParams
from kernel.sdk.steps import StepRecord
from nodes.game.kidgym.paper import CAPABILITY, HUMAN, RANDOM, find_model, paper_rate
from nodes.game.kidgym.scoring import capability_scores


class KidGymJudgeParams(NodeParams):
    paper_model: str | None = Field(None, description="a model of the paper's Table 2 (e.g. GPT-4o) whose "
                                    "published rates are printed beside ours")
    paper_mode: Literal["zero-shot", "cot", "icl"] = Field("zero-shot", description="which of the paper's "
                                                            "tables paper_model is read from")


class KidGymJudge(JudgeNode):
    Params = KidGymJudgeParams
    params: KidGymJudgeParams
    section = "kidgym"

    async def setup(self) -> None:
        self.paper_model = self.params.paper_model
        self.paper_mode = self.params.paper_mode
        self.counts: dict[str, list[int]] = {}  # "CL-L1" -> [episodes, successes]
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        task, level = str(info["task"]), int(info["level"])
        success = bool(info.get("success"))
        cell = self.counts.setdefault(f"{task}-L{level}", [0, 0])
        cell[0] += 1
        cell[1] += int(success)
        return {"success": float(success), "steps": int(info.get("steps", episode.labels["steps"])), "task": task,
                "level": level, "round": int(info.get("round", 0)), "stopped": episode.labels["stopped"]}

    def summary(self) -> dict[str, Any]:
        cells: dict[str, Any] = {}
        rates: dict[str, list[float | None]] = {}
        for key, (n, wins) in sorted(self.counts.items()):
            task, level = key.split("-L")
            lv = int(level)
            row: dict[str, Any] = {"episodes": n, "successes": wins, "success_rate": wins / n if n else 0.0,
                                   "paper_random": RANDOM[task][lv - 1], "paper_human": HUMAN[task][lv - 1]}
            if self.paper_model and (published := paper_rate(self.paper_model, task, lv, self.paper_mode)) is not None:
                row["paper_model"] = published
            cells[key] = row
            rates.setdefault(task, [None, None, None])[lv - 1] = row["success_rate"]
        total = sum(n for n, _ in self.counts.values())
        wins = sum(w for _, w in self.counts.values())
        out: dict[str, Any] = {"episodes": total, "successes": wins, "success_rate": wins / total if total else 0.0,
                               "cells": cells, "capability": capability_scores(rates)}
        if self.paper_model:
            out["paper_model_name"] = self.paper_model
            out["paper_mode"] = self.paper_mode
            if self.paper_mode == "zero-shot" and (published := find_model(CAPABILITY, self.paper_model)) is not None:
                out["paper_capability"] = published
        return out
