"""KidGym as a Gymnasium environment, usable without the bus: ``gymnasium.make("framebus/KidGym-CL-L1-v0")``.

Gymnasium needs fixed spaces, while KidGym's option list changes length every step, so:

* the action is the index of a lettered option (0 = A); the space is ``Discrete(n)`` with ``n`` the
  most options the task and level can ever show, and an index past the current list is a wasted
  step, exactly like an unparsable answer (``info["action_mask"]`` marks the live indices);
* the observation is the RGB frame (``observation="rgb"``, the default) or the text rendering
  (``observation="text"``, for text-only models); the goal and the option texts are in ``info``
  at every step, as the benchmark gives them to the model beside the image;
* ``reward`` is 1.0 on the step that wins the episode and 0 otherwise (the released code always
  returns 0; a success signal costs nothing and serves RL users); ``terminated`` means the task is
  over (won or lost), ``truncated`` that the step budget ran out first.

``reset(seed=s)`` plays the episode with seed ``s``; ``reset(options={"round": r})`` plays round
``r`` of the same manifest the bus node uses (``tasks.episode_seed``), so a Gymnasium user and a
launch file see the same episodes.
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from nodes.game.kidgym.base import Task
from nodes.game.kidgym.render import GRID, render
from nodes.game.kidgym.tasks import TASKS, episode_seed, make_task

# The most options each task shows at level 1/2/3 (derived from its option rules; a test checks
# that no episode ever exceeds them).
OPTION_BOUNDS: dict[str, tuple[int, int, int]] = {
    "CL": (4, 8, 10), "SE": (4, 6, 8), "SO": (4, 9, 16), "MA": (3, 7, 13), "FI": (4, 8, 12), "PU": (4, 8, 12),
    "PL": (4, 8, 8), "CO": (4, 7, 10), "DMA": (5, 7, 13), "MMA": (5, 9, 15), "MDE": (4, 6, 8), "MFI": (4, 8, 12),
}
TEXT_CHARSET = string.printable
TEXT_MAX = 8192


class KidGymEnv(gym.Env[Any, np.int64]):
    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 2}

    def __init__(self, task: str = "CL", level: int = 1, cell: int = 64, render_mode: str | None = None,
                 observation: str = "rgb") -> None:
        code = task.upper()
        if code not in TASKS:
            raise ValueError(f"unknown KidGym task {task!r}; the tasks are {', '.join(TASKS)}")
        if level not in (1, 2, 3):
            raise ValueError(f"KidGym levels are 1, 2 and 3, got {level!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        if observation not in ("rgb", "text"):
            raise ValueError("observation must be 'rgb' or 'text'")
        if not 8 <= int(cell) <= 256:
            raise ValueError("cell must be between 8 and 256 pixels (the paper uses 32, 64 and 96)")
        self.task, self.level, self.cell = code, level, int(cell)
        self.render_mode = render_mode
        self.observation = observation
        self.action_space = spaces.Discrete(OPTION_BOUNDS[code][level - 1])
        side = GRID * self.cell
        if observation == "rgb":
            self.observation_space: spaces.Space[Any] = spaces.Box(0, 255, (side, side, 3), np.uint8)
        else:
            self.observation_space = spaces.Text(TEXT_MAX, charset=TEXT_CHARSET)
        self.game: Task | None = None
        self._last: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        if "round" in options:
            episode = episode_seed(self.task, self.level, int(options["round"]), int(options.get("layout_seed", 0)))
        elif seed is not None:
            episode = seed
        else:
            episode = int(self.np_random.integers(0, 2**31 - 1))
        self.game = make_task(self.task, self.level, episode)
        self._last = {"valid": True, "step_success": True}
        return self._observe(), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self.game is None:
            raise RuntimeError("call reset() before step()")
        out = self.game.step_index(int(action))
        self._last = {"valid": out.valid, "step_success": out.step_success}
        terminated = out.over and not out.truncated
        reward = 1.0 if out.success else 0.0
        return self._observe(), reward, terminated, out.truncated, self._info()

    def render(self) -> Any:
        if self.game is None or self.render_mode is None:
            return None
        if self.render_mode == "ansi":
            return self.text()
        return render(self.game, self.cell)

    # --- beyond the Gymnasium API ------------------------------------------------------------
    @property
    def options(self) -> list[str]:
        """The option texts in lettered order (index 0 = A)."""
        return self.game.options if self.game else []

    def text(self) -> str:
        assert self.game is not None
        return self.game.text()

    def oracle_action(self) -> int | None:
        """The index of the correct option now (a scripted solver), or None once over."""
        if self.game is None or (answer := self.game.oracle()) is None:
            return None
        return self.game.options.index(answer)

    def _observe(self) -> Any:
        assert self.game is not None
        if self.observation == "text":
            return self.game.text()
        return render(self.game, self.cell)

    def _info(self) -> dict[str, Any]:
        g = self.game
        assert g is not None
        mask = np.zeros(self.action_space.n, dtype=np.int8)
        mask[: len(g.options)] = 1
        return {"task": self.task, "level": self.level, "t": g.t, "max_steps": g.budget, "goal": g.goal,
                "options": list(g.options), "action_mask": mask, "memory": g.memory, "success": g.success,
                "over": g.over, "text": g.text(), **self._last}
