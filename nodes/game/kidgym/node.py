"""The KidGym environment node: plays a manifest of (task, level, round) episodes on the bus.

Params (launch file), all optional:

* ``tasks``: ``all`` (default), one abbreviation or a list (``[CL, SE, MA]``);
* ``levels``: ``all`` (default) or a list of 1, 2, 3;
* ``rounds`` (100): episodes per task and level; the run's ``episodes`` should be
  ``rounds x tasks x levels``. Episode i plays cell ``i % cells`` in round ``i // cells``
  (``tasks.Manifest``), and each episode's layout comes only from (task, level, round,
  ``layout_seed``), so a re-run, or another model, plays the same episodes;
* ``layout_seed`` (0): another manifest of episodes;
* ``cell`` (64): pixels per cell, 32/64/96 as in the paper's resolution study (Table 3);
* ``frames`` (true): put the rendered RGB frame in ``obs``; off for text-only agents, and then
  nothing is rendered at all (the game alone runs thousands of steps a second in-process);
* ``judge``: whether a judge ends the episodes (default: when ``step`` is wired).

``obs`` follows docs/environments.md with ``env: "kidgym"``, plus ``task``, ``level``, ``round``,
``memory`` (a memory task, whose agents should keep every earlier frame), ``max_steps`` and
``options_lettered: true``: ``actions`` are the option texts in the lettered order the benchmark
shows them (A is the first), re-shuffled every step. An action body that is not one of them, or
``None``, is a wasted step (spec §3.4); ``{"stop": true}`` ends the episode as a failure.
"""

from __future__ import annotations

from typing import Any

from kernel.sdk.node import Node, service
from nodes.game.kidgym.base import Task
from nodes.game.kidgym.tasks import MEMORY_TASKS, TASKS, Manifest, make_task, parse_levels, parse_tasks


class KidGymEnv(Node):
    inputs = ("action",)
    outputs = ("obs", "step")

    @classmethod
    def preflight(cls, params: dict[str, Any]) -> list[str]:
        problems = []
        try:
            parse_tasks(params.get("tasks", "all"))
            parse_levels(params.get("levels", "all"))
        except ValueError as exc:
            problems.append(f"kidgym.env: {exc}")
        if params.get("frames", True):
            try:
                import PIL  # noqa: F401
            except ImportError:
                problems.append("kidgym.env: frames: true needs Pillow (pip install pillow), or set frames: false")
        return problems

    async def setup(self) -> None:
        p = self.params
        self.tasks = parse_tasks(p.get("tasks", "all"))
        self.levels = parse_levels(p.get("levels", "all"))
        self.rounds = int(p.get("rounds", 100))
        self.cell = int(p.get("cell", 64))
        self.frames = bool(p.get("frames", True))
        self.manifest = Manifest(self.tasks, self.levels, self.rounds, int(p.get("layout_seed", 0)))
        self.judged = bool(p.get("judge", bool(self.readers("step"))))
        self.game: Task | None = None
        self.episode_id: str | None = None
        self._render = None
        if self.frames:
            from nodes.game.kidgym.render import render

            self._render = render
        self._warned_rounds = False

    async def run(self) -> None:
        while (episode := await self.next_episode()) is not None:
            task, level, round_, seed = self.manifest.episode(episode.index)
            if round_ >= self.rounds and not self._warned_rounds:
                self._warned_rounds = True
                self.log.warning("more episodes than rounds x cells; later rounds are new episodes",
                                 rounds=self.rounds, cells=len(self.manifest.cells))
            game = make_task(task, level, seed)
            self.game, self.episode_id = game, episode.id
            warned_invalid = False
            t = 0
            while not game.over:
                await self.publish("obs", self._obs(game, episode.id, t, round_), step=t)
                actions = await self.clock.actions(t)
                body = next(iter(actions.values()), None) if actions else None
                if isinstance(body, dict) and body.get("stop"):
                    out = game.stop()
                    applied, valid = None, True
                else:
                    applied = body if isinstance(body, str) else None
                    out = game.step(applied)
                    valid = body is None or out.valid
                    if not valid and not warned_invalid:
                        warned_invalid = True
                        self.log.info("invalid action: a wasted step", episode=episode.id, t=t, action=repr(body)[:120])
                info = {"task": task, "level": level, "round": round_, "success": game.success, "over": game.over,
                        "step_success": out.step_success, "applied": out.valid, "truncated": out.truncated,
                        "stopped": out.stopped, "steps": game.t, "max_steps": game.budget}
                await self.publish("step", {"episode": episode.id, "t": t, "action": applied if out.valid else None,
                                            "valid": valid, "reward": 1.0 if game.success else 0.0, "done": game.over,
                                            "info": info}, step=t)
                t += 1
            if not self.judged:
                await self.end_episode(episode, success=float(game.success), steps=game.t, task=task, level=level,
                                       round=round_)

    def _obs(self, game: Task, episode: str, t: int, round_: int) -> dict[str, Any]:
        obs: dict[str, Any] = {
            "env": "kidgym", "episode": episode, "t": t, "task": game.code, "level": game.level, "round": round_,
            "actions": game.options, "options_lettered": True, "idle": None, "goal": game.goal, "text": game.text(),
            "memory": game.memory, "max_steps": game.budget,
        }
        if self._render is not None:
            obs["frame"] = self._render(game, self.cell)
        return obs

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
        return {"env": "kidgym", "actions": [], "idle": None, "options_lettered": True, "tasks": self.tasks,
                "levels": self.levels, "rounds": self.rounds, "episodes": self.manifest.size, "cell": self.cell,
                "frames": self.frames, "memory_tasks": sorted(MEMORY_TASKS & set(self.tasks)),
                "budgets": {code: list(TASKS[code].budgets) for code in self.tasks},
                "titles": {code: TASKS[code].title for code in self.tasks}}
