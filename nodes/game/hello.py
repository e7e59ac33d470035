"""The proof-of-life environment: walk along a line to a target. Tiny, but it uses the whole loop
and speaks the full environment convention (docs/environments.md), so every agent can play it."""

from __future__ import annotations

import random
from typing import Any

from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service

ACTIONS = ("left", "right", "stay")
MOVES = {"left": -1, "right": 1, "stay": 0}


class CountdownEnv(EnvNode):
    """The agent walks from 0 towards the target; the episode ends on reaching it or at ``max_steps``."""

    class Params(EnvParams):
        length: int = Field(8, ge=2, description="positions on the line, 0 to length-1")
        max_steps: int | None = Field(20, gt=0, description="decisions per episode at most")
        target: int | None = Field(None, ge=1, description="a fixed target (default: drawn from each episode's seed)")

    env = "hello"
    params: Params

    async def setup(self) -> None:
        self.state: dict[str, Any] = {}

    async def reset(self, episode: Episode) -> None:
        target = self.params.target or random.Random(episode.seed).randrange(1, self.params.length)
        self.state = {"episode": episode.id, "position": 0, "target": target, "t": 0}

    def observe(self) -> Observation:
        position, target = self.state["position"], self.state["target"]
        text = f"You are at {position} on a line from 0 to {self.params.length - 1}; the goal is at {target}."
        return {"actions": list(ACTIONS), "idle": "stay", "goal": f"reach position {target}", "text": text,
                "position": position, "target": target}

    async def step(self, action: str | None) -> StepResult:
        if action is not None:
            self.state["position"] = min(self.params.length - 1, max(0, self.state["position"] + MOVES[action]))
        reached = self.state["position"] == self.state["target"]
        # Every step on the console and in logs/env.log: the proof-of-life run shows the game moving.
        self.log.info("step", episode=self.state["episode"], t=self.state["t"], action=action,
                      position=self.state["position"], target=self.state["target"])
        self.state["t"] += 1
        return StepResult(reward=float(reached), done=reached,
                          info={"position": self.state["position"], "target": self.state["target"],
                                "reached": reached, "success": reached})

    async def stop(self, reason: str) -> StepResult:
        return StepResult(done=True, info={"position": self.state["position"], "target": self.state["target"],
                                           "reached": False, "success": False})

    @service("oracle")
    def oracle(self, body: dict[str, Any]) -> str:
        """The shortest way to the target: one step toward it."""
        gap = self.state["target"] - self.state["position"]
        return "right" if gap > 0 else "left" if gap < 0 else "stay"

    def action_names(self) -> list[str]:
        return list(ACTIONS)

    @service("describe")
    def describe(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"env": self.env, "actions": list(ACTIONS), "idle": "stay", "length": self.params.length}
