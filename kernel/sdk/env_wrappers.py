"""Gymnasium-style wrappers for an EnvNode: small transforms of every observation and step result.

An EnvNode builds its list from its params (``frames: false`` -> TextOnly, ``frame_size`` ->
FrameResize, ``max_steps`` -> TimeLimit), and a pack composes more by extending ``wrappers()``::

    def wrappers(self) -> list[Wrapper]:
        return [*super().wrappers(), TimeLimit(10)]

They run in order, on the body about to be published, so a wrapper sees what the previous one made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:
    from kernel.sdk.env import Observation, StepResult

__all__ = ["Wrapper", "TextOnly", "FrameResize", "TimeLimit"]


class Wrapper:
    """Identity; override the hooks that change something. A wrapper keeps no per-episode state:
    ``result`` gets the step index, and an observation carries its ``t``."""

    renders: ClassVar[bool] = True
    """False: the environment need not draw frames at all (nobody will see them)."""

    def observation(self, obs: Observation) -> Observation:
        return obs

    def result(self, t: int, result: StepResult) -> StepResult:
        return result


class TextOnly(Wrapper):
    """Observations without pictures, for text-only agents: drops ``frame`` and ``frames``, and
    tells the environment not to render them in the first place."""

    renders = False

    def observation(self, obs: Observation) -> Observation:
        obs.pop("frame", None)
        obs.pop("frames", None)
        return obs


class FrameResize(Wrapper):
    """Frames resized to ``width`` x ``height`` by nearest pixel (no image library needed)."""

    def __init__(self, width: int, height: int) -> None:
        if width <= 0 or height <= 0:
            raise ValueError(f"frame size must be positive, got {width}x{height}")
        self.width, self.height = int(width), int(height)

    def resize(self, frame: Any) -> np.ndarray:
        img = np.asarray(frame)
        rows = (np.arange(self.height) * img.shape[0]) // self.height
        cols = (np.arange(self.width) * img.shape[1]) // self.width
        return np.ascontiguousarray(img[rows][:, cols])

    def observation(self, obs: Observation) -> Observation:
        if "frame" in obs:
            obs["frame"] = self.resize(obs["frame"])
        if "frames" in obs:
            obs["frames"] = [self.resize(f) for f in obs["frames"]]
        return obs


class TimeLimit(Wrapper):
    """At most ``max_steps`` decisions per episode: the last one is ``done`` and ``truncated`` when
    the game itself had not ended. ``info["truncated"]`` says so too, where agents and recordings
    made before the record had a ``truncated`` field of its own look for it."""

    def __init__(self, max_steps: int) -> None:
        if max_steps <= 0:
            raise ValueError(f"max_steps must be positive, got {max_steps}")
        self.max_steps = int(max_steps)

    def result(self, t: int, result: StepResult) -> StepResult:
        if t + 1 >= self.max_steps and not result.done:
            result.done = result.truncated = True
            result.info = {**result.info, "truncated": True}
        return result
