"""``framebus/Sokoban-v0``: the same levels, rules and reward as the bus node, as a Gymnasium env,
for training or evaluating without a bus.

    import gymnasium
    import nodes.game.sokoban.gym_env  # registers framebus/Sokoban-v0 (importing does it)
    env = gymnasium.make("framebus/Sokoban-v0", set="mini", render_mode="rgb_array")

Actions are ``Discrete(4)``: 0 Up, 1 Down, 2 Left, 3 Right. Observations (``obs_type``):

* ``rgb`` (default): the position drawn with 16 px tiles, padded with wall to the largest room the
  env can deal, so every observation has one shape;
* ``grid``: the tile codes (0 wall, 1 floor, 2 target, 3 box on target, 4 box, 5 player, 6 player on
  target), padded the same way.

``info`` has the text view (``text``, XSB plus legend, for text-only models), the running MageBench
``score`` and the level's facts. ``render_mode="rgb_array"`` gives the frame at ``resolution`` px
(long edge), ``"ansi"`` the text view. An episode ends (``terminated``) when the level is solved and
is cut off (``truncated``) after ``max_steps`` (50).

``reset(options={"level": i or "small-v0-03"})`` picks a level; otherwise a seeded random one of the
chosen set (``set``, ``tier``) or of an XSB file (``levels``).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from nodes.game.sokoban import render
from nodes.game.sokoban.game import SokobanGame, load_levels
from nodes.game.sokoban.rules import ACTIONS
from nodes.game.sokoban.tiers import STEP_LIMIT

ENV_ID = "framebus/Sokoban-v0"
OBS_TYPES = ("rgb", "grid")


class SokobanGymEnv(gymnasium.Env):
    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None, set: str = "mini", tier: str | list[str] | None = None,
                 levels: str | None = None, max_steps: int = STEP_LIMIT, obs_type: str = "rgb",
                 resolution: int = 640) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        if obs_type not in OBS_TYPES:
            raise ValueError(f"obs_type must be one of {OBS_TYPES}, got {obs_type!r}")
        self.render_mode = render_mode
        self.obs_type = obs_type
        self.max_steps = int(max_steps)
        self.resolution = int(resolution)
        self.levels = load_levels({"set": set, "tier": tier, "levels": levels})
        self.rows = max(lv.height for lv in self.levels)
        self.cols = max(lv.width for lv in self.levels)
        self.action_space = spaces.Discrete(len(ACTIONS))
        if obs_type == "rgb":
            shape = (self.rows * render.TILE, self.cols * render.TILE, 3)
            self.observation_space = spaces.Box(0, 255, shape, np.uint8)
        else:
            self.observation_space = spaces.Box(0, render.PLAYER_ON_TARGET, (self.rows, self.cols), np.uint8)
        self.game: SokobanGame | None = None

    # -- gymnasium API ------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        choice = (options or {}).get("level")
        if choice is None:
            level = self.levels[int(self.np_random.integers(len(self.levels)))]
        elif isinstance(choice, str):
            found = [lv for lv in self.levels if lv.name == choice]
            if not found:
                raise ValueError(f"no level {choice!r} in this env's levels")
            level = found[0]
        else:
            level = self.levels[int(choice) % len(self.levels)]
        self.game = SokobanGame(level, self.max_steps)
        return self._obs(), self._info()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        game = self._require()
        if game.done:
            raise RuntimeError("step() after the episode ended; call reset()")
        out = game.play(ACTIONS[int(action)])
        return self._obs(), float(out.reward), game.success, game.truncated, self._info()

    def render(self) -> np.ndarray | str | None:
        game = self._require()
        b = game.board
        if self.render_mode == "rgb_array":
            return render.frame(game.level, b.boxes, b.player, self.resolution)
        if self.render_mode == "ansi":
            return render.text(game.level, b.boxes, b.player)
        return None

    # -- helpers ----------------------------------------------------------------------------------
    def _require(self) -> SokobanGame:
        if self.game is None:
            raise RuntimeError("call reset() first")
        return self.game

    def _obs(self) -> np.ndarray:
        game = self._require()
        b = game.board
        grid = np.full((self.rows, self.cols), render.WALL, np.uint8)
        codes = render.codes(game.level, b.boxes, b.player)
        grid[:codes.shape[0], :codes.shape[1]] = codes
        if self.obs_type == "grid":
            return grid
        t = render.TILE
        return render.TILES[grid].transpose(0, 2, 1, 3, 4).reshape(self.rows * t, self.cols * t, 3)

    def _info(self) -> dict[str, Any]:
        game = self._require()
        b = game.board
        return {**game.info(), "text": render.text(game.level, b.boxes, b.player), "goal": game.goal()}


def register() -> None:
    """Register ``framebus/Sokoban-v0`` with Gymnasium (safe to call more than once)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point="nodes.game.sokoban.gym_env:SokobanGymEnv")


register()
