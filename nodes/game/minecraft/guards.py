"""VAB-Minecraft's end rules, fed one round at a time, and the ``teleport_to_spawn`` tip.

VAB runs these checks in its task-side agent, beside the game, not in the model's client; here
they live with the environment too, so every agent (the scripted solver, random, a model, a
person) is held to the same rules and the reason lands in the step record. The numbers and the
order are VAB's (``minecraft_agent.py`` and ``main.py``); its histories start with an entry for the
reset (result "ok", reward 0), which is why "after 20 rounds" means after 19 actions here:

1. the target is held: the episode is won (``completed``); VAB checks this first each round;
2. 100 actions: ``task limit reached``;
3. the last 15 actions all failed, once 19 are taken: ``agent invalid action``;
4. the last 15 action texts are the same, once 19 are taken: ``task limit reached``;
5. the reward has not grown over the last 30 actions, once 39 are taken (VAB's test: the sum of the
   last 30 rewards is at most 30 times the first of them, plus 0.001): ``task limit reached``;
6. an ``execute`` whose text mentions ``terminate`` or ``task_complete`` is the model giving up:
   ``task failed``, and the action is not carried out (:meth:`Guard.before`).

One difference: VAB's loop ends after the 100th action without looking at the inventory, so a
target obtained by the 100th action counts as a failure there; here it counts as a success (the
judge reads the final inventory, as the paper's metric says: "within the limitation of 100 rounds").

The tip: when the task spawned mobs or plants near the spawn point (``init_command`` not empty),
the observation after the 20th, 28th, 36th ... action carries a line that suggests teleporting
back to the spawn point (VAB: ``num_steps % 8 == 4 and num_steps >= 20``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ROUNDS", "STATUSES", "TIP", "Ending", "Guard", "gives_up"]

Status = Literal["completed", "task limit reached", "agent invalid action", "task failed", "task error"]
STATUSES: tuple[Status, ...] = ("completed", "task limit reached", "agent invalid action", "task failed",
                                "task error")
"""VAB's words for how an episode ended (its ``DDONE`` messages, shortened as household's are)."""

Reason = Literal["target obtained", "round limit", "failed in a row", "same action", "no progress", "gave up"]

ROUNDS = 100
HISTORY_BEFORE_REPEAT_CHECKS = 20  # VAB's history length, the reset's entry included
RUN = 15  # failed actions in a row, or the same action, that end an episode
HISTORY_BEFORE_PROGRESS_CHECK = 40
PROGRESS_WINDOW = 30
PROGRESS_SLACK = 1e-3
TIP_FROM, TIP_EVERY, TIP_AT = 20, 8, 4
TIP = ("Tip: if you cannot find the animals or plants you need, or you are stuck, call teleport_to_spawn(): "
       "what the task needs may have been placed near your spawn point.")
"""Our words for VAB's tip; the environment adds it as a line of its own after the location line."""


@dataclass(frozen=True)
class Ending:
    """Why an episode ended: VAB's status word, our short reason, and a sentence for the record."""

    status: Status
    reason: Reason
    message: str


def gives_up(action: str) -> bool:
    """VAB's reading of a model that asks the executor to end the task: ``execute(`` with
    ``terminate`` or ``task_complete`` anywhere in the action text."""
    return "execute(" in action and ("terminate" in action or "task_complete" in action)


@dataclass
class Guard:
    """One episode's histories as VAB keeps them: the action texts (as extracted from the replies,
    ``None ACTION.`` for a reply without one), whether each failed, and the reward after each.

    ``spawn_resources``: the task placed mobs or plants near the spawn point (VAB's
    ``init_command``), which is when the tip is given."""

    spawn_resources: bool = False
    rounds: int = ROUNDS
    actions: list[str] = field(default_factory=list)
    failed: list[bool] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    ended: Ending | None = None

    def before(self, action: str) -> Ending | None:
        """Called with each action text before it is carried out: the ending when the model gave up
        (the action is then not carried out), else None."""
        if self.ended is None and gives_up(action):
            self.ended = Ending("task failed", "gave up", "The agent asked the executor to end the task.")
        return self.ended

    def record(self, action: str, failed: bool, reward: float, *, target_held: bool = False) -> Ending | None:
        """One round: the action's text, whether it failed, the reward so far and whether the target
        is held now. Returns the ending once the episode is over, else None."""
        if self.ended is not None:
            raise RuntimeError(f"the episode already ended ({self.ended.status}: {self.ended.reason})")
        self.actions.append(action)
        self.failed.append(bool(failed))
        self.rewards.append(float(reward))
        self.ended = self._check(target_held)
        return self.ended

    def _check(self, target_held: bool) -> Ending | None:
        n = len(self.actions)
        history = n + 1  # VAB's lists hold the reset's entry too
        if target_held:
            return Ending("completed", "target obtained", "The target item is in the inventory.")
        if n >= self.rounds:
            return Ending("task limit reached", "round limit", f"The agent used all {self.rounds} rounds.")
        if history >= HISTORY_BEFORE_REPEAT_CHECKS and all(self.failed[-RUN:]):
            return Ending("agent invalid action", "failed in a row",
                          f"The agent's last {RUN} actions all failed.")
        if history >= HISTORY_BEFORE_REPEAT_CHECKS and len(set(self.actions[-RUN:])) == 1:
            return Ending("task limit reached", "same action", f"The agent took the same action {RUN} times in a row.")
        if history >= HISTORY_BEFORE_PROGRESS_CHECK:
            window = self.rewards[-PROGRESS_WINDOW:]
            if sum(window) <= PROGRESS_WINDOW * window[0] + PROGRESS_SLACK:
                return Ending("task limit reached", "no progress",
                              f"The reward did not grow over the last {PROGRESS_WINDOW} actions.")
        return None

    def tip(self) -> str | None:
        """The tip line for the observation that follows the actions taken so far, or None."""
        n = len(self.actions)
        if self.spawn_resources and n >= TIP_FROM and n % TIP_EVERY == TIP_AT:
            return TIP
        return None
