"""A hello world that also draws: the line-walking environment with an RGB ``frame`` in every
observation, so recordings of it carry an image channel (tests/test_record.py, test_report.py);
and a model node that walks it, for agent.llm's step records (tests/test_console.py)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from kernel import JudgedEpisode, Node, StepRecord, service
from nodes.game.hello import CountdownEnv
from nodes.judge.hello import HelloJudge

CELL = 12  # pixels per position


def draw(position: int, target: int, length: int) -> np.ndarray:
    """A strip of ``length`` cells: the target green, the walker red (yellow when on target)."""
    frame = np.full((CELL, CELL * length, 3), 40, dtype=np.uint8)
    frame[:, target * CELL:(target + 1) * CELL] = (40, 170, 60)
    frame[2:-2, position * CELL + 2:(position + 1) * CELL - 2] = (230, 200, 40) if position == target else (200, 50, 50)
    frame[:, ::CELL] = 90  # cell borders, so no two positions draw the same picture
    return frame


class FramedHelloEnv(CountdownEnv):
    """CountdownEnv that draws its state, so with ``frames: true`` every observation carries ``frame``
    (uint8 H×W×3), as docs/environments.md says."""

    def render(self) -> np.ndarray:
        return draw(self.state["position"], self.state["target"], self.params.length)


class LineModel(Node):
    """A model node (the ``chat`` service agent.llm asks) that plays the line world: it reads the
    newest "You are at X ... the goal is at Y" of the prompt and answers with a sentence around the
    move, so agent.llm writes real step records (prompt, reply, parsed action) without a model."""

    @service("chat")
    def chat(self, body: dict) -> dict:
        text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
        at, goal = map(int, re.findall(r"You are at (\d+) .*? the goal is at (\d+)", text)[-1])
        move = "right" if goal > at else "left" if goal < at else "stay"
        return {"text": f"{goal} is {'above' if goal > at else 'below' if goal < at else 'at'} {at}, so: {move}",
                "usage": {"prompt_tokens": len(text.split()), "completion_tokens": 6}, "latency_s": 0.0,
                "cost_usd": 0.0}


class PictureJudge(HelloJudge):
    """hello's judge that also keeps a picture of where each episode ended (``attach_images``), as a
    judge that renders what it scores does: a node writing pictures into the run folder."""

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        await self.attach_images(episode.id, [("end", draw(info["position"], info["target"], 8))],
                                 caption=f"ended at {info['position']}", row="end", metrics=["score"])
        return await super().score(episode, records)
