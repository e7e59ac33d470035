"""MageBench's Sokoban score: the best cumulative reward reached, measured against the optimum.

``score = max over t of (reward summed over the first t steps) - R_best + 100``, where R_best is the
reward of a shortest solution and t runs over the steps played (at most 50). As in MageBench's code,
the max includes t = 0 (nothing done, reward 0), so an agent that never moves scores
``100 - R_best``, and a shortest solution scores exactly 100. No play scores more.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ScoreTracker:
    """Running MageBench score of one episode: feed it each step's reward."""

    r_best: float
    cumulative: float = 0.0
    best: float = 0.0  # the empty prefix counts
    steps: int = 0

    def add(self, reward: float) -> None:
        self.steps += 1
        self.cumulative += reward
        if self.cumulative > self.best:
            self.best = self.cumulative

    @property
    def score(self) -> float:
        return self.best - self.r_best + 100.0


def episode_score(rewards: list[float], r_best: float, limit: int | None = None) -> float:
    """The score of a whole list of step rewards, counting only the first ``limit`` steps."""
    tracker = ScoreTracker(r_best)
    for r in rewards[:limit] if limit is not None else rewards:
        tracker.add(r)
    return tracker.score
