"""Guess the number: a whole environment on EnvNode (docs/nodes.md quotes this file verbatim)."""

from __future__ import annotations

import random
from typing import Any

from pydantic import Field

from kernel import EnvNode, EnvParams, Episode, Observation, StepResult, service


class GuessEnv(EnvNode):
    """The agent guesses a secret number; each wrong guess is answered "higher" or "lower"."""

    class Params(EnvParams):
        size: int = Field(16, ge=2, description="the secret is one of 0 .. size-1")
        max_steps: int | None = Field(8, gt=0, description="guesses per episode at most")

    env = "guess"
    params: Params

    async def reset(self, episode: Episode) -> None:
        self.secret = random.Random(episode.seed).randrange(self.params.size)
        self.low, self.high, self.hint = 0, self.params.size - 1, "Guess the number."

    def observe(self) -> Observation:
        return {"actions": [str(n) for n in range(self.params.size)], "idle": None,
                "goal": f"find the number between 0 and {self.params.size - 1}", "text": self.hint}

    async def step(self, action: str | None) -> StepResult:
        if action is None:
            return StepResult(info={"success": False})
        guess = int(action)
        if guess < self.secret:
            self.low, self.hint = max(self.low, guess + 1), f"{guess} is too low."
        elif guess > self.secret:
            self.high, self.hint = min(self.high, guess - 1), f"{guess} is too high."
        found = guess == self.secret
        return StepResult(reward=float(found), done=found, info={"success": found, "secret": self.secret})

    @service("oracle")
    def oracle(self, body: Any) -> str:
        """Binary search: the middle of what is still possible."""
        return str((self.low + self.high) // 2)
