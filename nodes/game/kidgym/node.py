"""The KidGym environment node: plays a manifest of (task, level, round) episodes on the bus.

Parameters: ``launch describe kidgym.env``. Episode i plays cell ``i % cells`` in round
``i // cells`` (``tasks.Manifest``), and each episode's layout comes only from (task, level, round,
``layout_seed``), so a re-run, or another model, plays the same episodes; the run's ``episodes``
should be ``rounds x tasks x levels``. With ``frames`` off nothing is rendered at all (the game
alone runs thousands of steps a second in-process).

``obs`` follows docs/environments.md with ``env: "kidgym"``, plus ``task``, ``level``, ``round``,
``memory`` (a memory task, whose agents should keep every earlier frame), ``max_steps`` and
``options_lettered: true``: ``actions`` are the option texts in the lettered order the benchmark
shows them (A is the first), re-shuffled every step. An action body that is not one of them, or
``None``, is a wasted step (spec §3.4); ``{"stop": true}`` ends the episode as a failure.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.kidgym.base import Outcome, Task
from nodes.game.kidgym.tasks import LEVELS, MEMORY_TASKS, TASKS, Manifest, make_task

TaskCode = Literal["CL", "SE", "SO", "MA", "FI", "PU", "PL", "CO", "DMA", "MMA", "MDE", "MFI"]
Level = Literal[1, 2, 3]


class KidGymEnv(EnvNode):
    class Params(EnvParams):
        tasks: Literal["all"] | TaskCode | list[TaskCode] = Field("all", description="the tasks to play, by the "
                                                                                      "paper's abbreviations")
        levels: Literal["all"] | Level | list[Level] = Field("all", description="the levels to play")
        rounds: int = Field(100, gt=0, description="episodes per task and level")
        layout_seed: int = Field(0, description="another manifest of episodes")
        cell: int = Field(64, gt=0, description="pixels per cell (32/64/96 in the paper's resolution study)")

    env = "kidgym"
    params: Params

    @classmethod
    def preflight(cls, params: Params) -> list[str]:
        if params.frames:
            try:
                import PIL  # noqa: F401
            except ImportError:
                return ["kidgym.env: frames: true needs Pillow (pip install pillow), or set frames: false"]
        return []

    async def setup(self) -> None:
        p = self.params
        self.tasks = list(TASKS) if p.tasks == "all" else [p.tasks] if isinstance(p.tasks, str) else list(p.tasks)
        self.levels = list(LEVELS) if p.levels == "all" else [p.levels] if isinstance(p.levels, int) else list(p.levels)
        self.manifest = Manifest(self.tasks, self.levels, p.rounds, p.layout_seed)
        self.game: Task | None = None
        self.episode_id: str | None = None
        self.round = 0
        self._render = None
        if p.frames:
            from nodes.game.kidgym.render import render

            self._render = render
        self._warned_rounds = False

    async def reset(self, episode: Episode) -> None:
        task, level, self.round, seed = self.manifest.episode(episode.index)
        if self.round >= self.params.rounds and not self._warned_rounds:
            self._warned_rounds = True
            self.log.warning("more episodes than rounds x cells; later rounds are new episodes",
                             rounds=self.params.rounds, cells=len(self.manifest.cells))
        self.game = make_task(task, level, seed)
        self.episode_id = episode.id

    def observe(self) -> Observation:
        game = self._game()
        return {"task": game.code, "level": game.level, "round": self.round, "actions": game.options,
                "options_lettered": True, "idle": None, "goal": game.goal, "text": game.text(),
                "memory": game.memory, "max_steps": game.budget}

    def render(self) -> Any:
        return None if self._render is None else self._render(self._game(), self.params.cell)

    async def step(self, action: str | None) -> StepResult:
        return self._result(self._game().step(action))

    async def stop(self, reason: str) -> StepResult:
        return self._result(self._game().stop())

    def _game(self) -> Task:
        assert self.game is not None, "no episode in play"
        return self.game

    def _result(self, out: Outcome) -> StepResult:
        game = self._game()
        info = {"task": game.code, "level": game.level, "round": self.round, "success": game.success,
                "over": game.over, "step_success": out.step_success, "applied": out.valid,
                "truncated": out.truncated, "steps": game.t, "max_steps": game.budget}
        return StepResult(1.0 if game.success else 0.0, game.over, info, truncated=out.truncated)

    def metrics(self, last: Any) -> dict[str, Any]:
        game = self._game()
        return {"success": float(game.success), "steps": game.t, "task": game.code, "level": game.level,
                "round": self.round}

    # -- services ---------------------------------------------------------------------------------
    @service("oracle")
    def oracle(self, body: Any) -> str | None:
        """The correct option text for the current state of the episode being played."""
        episode = (body or {}).get("episode")
        if self.game is None or (episode is not None and episode != self.episode_id):
            return None
        return self.game.oracle()

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "actions": [], "idle": None, "options_lettered": True, "tasks": self.tasks,
                "levels": self.levels, "rounds": self.params.rounds, "episodes": self.manifest.size,
                "cell": self.params.cell, "frames": self.params.frames,
                "memory_tasks": sorted(MEMORY_TASKS & set(self.tasks)),
                "budgets": {code: list(TASKS[code].budgets) for code in self.tasks},
                "titles": {code: TASKS[code].title for code in self.tasks}}
