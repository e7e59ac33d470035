"""The gfootball engine behind one environment node: reset to a level, step frames, render on demand.

It drives gfootball's ``FootballEnvCore`` directly (not its gym wrapper) because the node plays
the role of gfootball's player layer itself: the agents are other processes, and which footballer
each one controls is decided by the seats. Rendering is switched on only for the frame an agent is
about to see and off again before the next step, so the frames the auto-renderer skips cost no
drawing: software OpenGL takes ~0.1 s for a 320x180 frame and ~1.5 s for 1280x720.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from nodes.game.football.gfootball_import import import_gfootball
from nodes.game.football.raw_state import State, from_observation
from nodes.game.football.seats import Seat, engine_players


def _quiet_absl() -> None:
    """gfootball logs through absl at INFO (an episode summary per episode); keep only warnings."""
    try:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.WARNING)
    except ImportError:
        pass


class Match:
    """One gfootball engine in this process (gfootball allows one rendering engine per process).

    ``width`` x ``height`` is the render resolution, used only when ``frame()`` is called."""

    def __init__(self, *, width: int = 1280, height: int = 720, physics_steps_per_frame: int = 10) -> None:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
        os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
        _quiet_absl()
        self.width, self.height = int(width), int(height)
        self.physics_steps_per_frame = int(physics_steps_per_frame)
        self._core: Any = None
        self._config: Any = None
        self._seats: list[Seat] = []
        self.duration = 400
        self.state: State = {}
        self.done = False

    def reset(self, level: str, seats: Sequence[Seat], seed: int) -> State:
        """Start ``level`` (a name gfootball can import) with these seats; returns the first state."""
        gf_config = import_gfootball("gfootball.env.config")
        football_env_core = import_gfootball("gfootball.env.football_env_core")
        self._seats = list(seats)
        game_seed = int(seed) % 2_000_000_000
        values = {
            "action_set": "full",
            "level": level,
            "players": engine_players(seats),
            "real_time": False,
            "physics_steps_per_frame": self.physics_steps_per_frame,
            "render_resolution_x": self.width,
            "render_resolution_y": self.height,
            "game_engine_random_seed": game_seed,
            # Both below are otherwise history, not seed: gfootball's Config counts the episodes it
            # has built (+1 per reset) and its levels choose the kick-off side by that count's parity
            # (5_vs_5, 11_vs_11_stochastic), and the first seed's parity decides, for the Config's
            # whole life, which team the engine processes first. A reset skipped or added (GraphEnv
            # stopping an episode dealt before its seeded reset) then changed the match a seed plays.
            # Seed 0 keeps what a fresh process played first; seeds 0, 1, 2, ... still alternate.
            "episode_number": game_seed + 1,
            "reverse_team_processing": bool(game_seed % 2),
            "dump_full_episodes": False,
            "dump_scores": False,
            "write_video": False,
            "display_game_stats": False,
        }
        if self._config is None:
            self._config = gf_config.Config(values)  # its constructor already counts one episode
        self._config.update(values)  # so the count is set here, after it, the same on every reset
        if self._core is None:
            self._core = football_env_core.FootballEnvCore(self._config)  # its constructor resets (inc=0)
        else:
            drawing = bool(self._core._use_rendering_engine)
            if drawing:  # a rendering engine must reset with its animations on, or drawing it crashes
                self._core._env.game_config.render = True
            self._core.reset(inc=0)  # inc=0: keep the episode number set above
            if drawing:
                self._core.disable_render()
        self.duration = int(self._core._env.config.game_duration)
        self.done = False
        self.state = from_observation(self._core.observation(), self._seats)
        return self.state

    def step(self, codes: Sequence[int]) -> tuple[State, bool, int]:
        """Play one frame with one action index per seat (controller order); returns the new
        state, whether the episode is over, and gfootball's score reward (+1 / -1 on a goal)."""
        obs, reward, done, _info = self._core.step(list(codes))
        self.done = bool(done)
        self.state = from_observation(obs, self._seats)
        return self.state, self.done, int(reward)

    def frame(self) -> np.ndarray:
        """The current position drawn as an RGB array (height x width x 3, uint8).

        The first call moves the match onto a rendering engine (gfootball does this by saving
        and restoring the state), which takes a while; later calls draw just this frame."""
        self._core.render("rgb_array")  # its return value is channel-swapped for OpenCV; take the RGB one
        rgb = self._core._observation["frame"]
        self._core.disable_render()  # the frames played until the next call are not drawn
        return np.ascontiguousarray(rgb, dtype=np.uint8)

    def close(self) -> None:
        if self._core is not None:
            self._core.close()
            self._core = None
