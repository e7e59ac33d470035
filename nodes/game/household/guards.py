"""VAB-OmniGibson's end rules: when an episode stops, and the status word it stops with.

VAB runs these checks beside the simulator (its task-side ``agent.py``), not in the model's
client, so here they live with the environment too: every agent (the solver, random, a model, a
person) is held to the same rules, and the status lands in the step record and the episode's
metrics. The numbers are VAB's: the same non-turn action a fourth time after three identical
results, or the same turn six times, ends the episode before it is carried out; after 30 and 40
actions the reward must still be moving; ``done()`` is a failure unless the goal already holds;
100 rounds at most. VAB also means to stop an agent whose actions keep failing (eight failures in
a row once ten results are in), but its check compares the result list with ``False`` and so never
fires; here it fires, as "agent invalid action".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Status = Literal["completed", "task failed", "task limit reached", "agent invalid action", "task error", "running"]
STATUSES: tuple[str, ...] = ("completed", "task failed", "task limit reached", "agent invalid action", "task error")
ROUNDS = 100
INVALID_AFTER, INVALID_RUN = 9, 8  # VAB counts the reset's result too: ten results are nine actions'


@dataclass
class Guard:
    """The histories VAB keeps per episode: actions as written, results (ok or not), and rewards
    (the goal fraction), the first of them taken before any action."""

    initial: float = 0.0
    rounds: int = ROUNDS
    actions: list[str] = field(default_factory=list)
    results: list[bool] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rewards = [self.initial]

    def before(self, action: str) -> Status:
        """Whether ``action`` may be carried out; called with each action before it is applied."""
        self.actions.append(action)
        same = self.actions[-1]
        if "turn" not in same:
            if len(self.results) >= 3 and len(set(self.results[-3:])) == 1 and len(self.actions) >= 4 \
                    and len(set(self.actions[-4:])) == 1:
                return "task limit reached"
        elif len(self.actions) >= 6 and len(set(self.actions[-6:])) == 1:
            return "task limit reached"
        return "running"

    def after(self, ok: bool, reward: float, success: bool, done_called: bool) -> Status:
        """The status once the action's result and the new reward (goal fraction) are known."""
        self.results.append(ok)
        self.rewards.append(reward)
        if success:
            return "completed"
        if done_called:
            return "task failed"
        if len(self.results) >= INVALID_AFTER and not any(self.results[-INVALID_RUN:]):
            return "agent invalid action"
        if len(self.actions) >= self.rounds:
            return "task limit reached"
        r = self.rewards
        n = len(self.actions)
        if n >= 40 and len(r) >= 11 and all(r[-1] <= x for x in (r[-2], r[-9], r[-10], r[-11])):
            return "task limit reached"
        if n >= 30 and len(set(r[-5:])) == 1 and r[-1] <= r[0]:
            return "task limit reached"
        return "running"
