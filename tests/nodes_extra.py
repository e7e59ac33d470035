"""More small test nodes (clock, faults, tracing); they run as real processes under the supervisor."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pydantic import Field

from kernel.sdk.judge import JudgedEpisode
from kernel.sdk.node import Message, Node, NodeParams, on_input, service
from kernel.sdk.steps import StepRecord
from nodes.judge.hello import HelloJudge
from nodes.judge.vwa import VwaJudge, VwaJudgeParams


class ThinkingAgent(Node):
    """Answers each ``obs`` after ``think_s`` seconds with ``{"t": step}`` on ``action`` (same step).

    It remembers, per observation, the step it saw, when it arrived and when the answer left, so a
    test can check that a lockstep world never moved on before the answer.
    """

    inputs = ("obs",)
    outputs = ("action",)

    async def setup(self) -> None:
        self.seen: list[dict] = []

    @on_input("obs")
    async def decide(self, msg: Message) -> None:
        arrived = time.time()
        await asyncio.sleep(float(self.params.get("think_s", 0.0)))
        await self.publish("action", {"t": msg.step}, step=msg.step)
        self.seen.append({"step": msg.step, "body_t": msg.body.get("t"), "arrived": arrived, "answered": time.time()})

    @service("seen")
    def report(self, body: object) -> list[dict]:
        return self.seen


class SilentAgent(Node):
    """Reads every ``obs`` and never answers: a model that hangs."""

    inputs = ("obs",)
    outputs = ("action",)

    async def setup(self) -> None:
        self.count = 0

    @on_input("obs")
    async def ignore(self, msg: Message) -> None:
        self.count += 1

    @service("count")
    def report(self, body: object) -> int:
        return self.count


class TraceStart(Node):
    """A driver: its ``run`` publishes one message and waits for the acknowledgement."""

    inputs = ("ack",)
    outputs = ("out",)

    async def run(self) -> None:
        await self.publish("out", {"question": 41})
        msg = await asyncio.wait_for(self.recv("ack"), 20.0)
        self.log.info("acknowledged", body=msg.body)


class TraceMiddle(Node):
    """Handles ``in`` by calling service ``work`` of node ``params.target`` and acking the answer."""

    inputs = ("in",)
    outputs = ("ack",)

    @on_input("in")
    async def handle(self, msg: Message) -> None:
        answer = await self.request(str(self.params.get("target", "c")), "work", msg.body)
        await self.publish("ack", answer)


class TraceEnd(Node):
    @service("work")
    def work(self, body: dict) -> dict:
        return {"answer": int(body["question"]) + 1}


class SlowJudgeParams(NodeParams):
    delay_s: float = Field(0.2, ge=0, description="seconds to wait before ending an episode")


class SlowJudge(HelloJudge):
    """The hello judge, but it takes ``delay_s`` before ending each episode (e.g. a model as judge)."""

    Params = SlowJudgeParams
    params: SlowJudgeParams

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        await asyncio.sleep(self.params.delay_s)
        return await super().score(episode, records)


class BrokenJudge(HelloJudge):
    """A judge whose scoring raises on every last step, as a judge with a bug does."""

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        raise ValueError(f"cannot score {episode.id}")


class MeanJudge(Node):
    """Ends each episode it reads with the step's score and summarizes its own mean in the section
    ``score``, as a benchmark judge does: two of them in one graph send the same section."""

    inputs = ("step",)

    async def setup(self) -> None:
        self.scores: list[float] = []

    @on_input("step")
    async def score(self, msg: Message) -> None:
        self.scores.append(float(msg.body["score"]))
        await self.end_episode(msg.body["episode"], score=msg.body["score"])
        self.summarize("score", {"episodes": len(self.scores), "mean_score": sum(self.scores) / len(self.scores),
                                 "judge": "mean"})


class LaggingVwaJudgeParams(VwaJudgeParams):
    delay_s: float = Field(1.0, ge=0, description="seconds before scoring each finished episode")


class LaggingVwaJudge(VwaJudge):
    """VWA's judge taking ``delay_s`` before each episode's score (a slow program_html check or a
    model grader), so a fast agent finishes episodes faster than they are judged."""

    Params = LaggingVwaJudgeParams
    params: LaggingVwaJudgeParams

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        await asyncio.sleep(self.params.delay_s)
        return await super().score(episode, records)


class ScriptedChatModel(Node):
    """A model node answering a fixed cycle of replies (the first to the first call), keeping the
    messages of every call so a test can read the prompts the agent sent."""

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.calls: list[list[dict]] = []

    @property
    def systems(self) -> list[str]:
        return [messages[0]["content"] for messages in self.calls]

    @service("chat")
    def chat(self, body: dict) -> dict:
        self.calls.append(body["messages"])
        return {"text": self.replies[(len(self.calls) - 1) % len(self.replies)],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "latency_s": 0.0, "cost_usd": 0.0}


def vmage_replies(observation: str, reasoning: str, *actions: str) -> list[str]:
    """Replies in V-MAGE's format (observation, reasoning, action), one per action."""
    return [f"{observation}\nReasoning: {reasoning}\nAction: {action}" for action in actions]
