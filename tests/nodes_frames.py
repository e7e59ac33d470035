"""A hello world that also draws: the line-walking environment with an RGB ``frame`` in every
observation, so recordings of it carry an image channel (tests/test_record.py, test_report.py)."""

from __future__ import annotations

import numpy as np

from nodes.game.hello import CountdownEnv

CELL = 12  # pixels per position


def draw(position: int, target: int, length: int) -> np.ndarray:
    """A strip of ``length`` cells: the target green, the walker red (yellow when on target)."""
    frame = np.full((CELL, CELL * length, 3), 40, dtype=np.uint8)
    frame[:, target * CELL:(target + 1) * CELL] = (40, 170, 60)
    frame[2:-2, position * CELL + 2:(position + 1) * CELL - 2] = (230, 200, 40) if position == target else (200, 50, 50)
    frame[:, ::CELL] = 90  # cell borders, so no two positions draw the same picture
    return frame


class FramedHelloEnv(CountdownEnv):
    """CountdownEnv that draws its state, so with ``frames: true`` every observation carries ``frame``
    (uint8 H×W×3), as docs/environments.md says."""

    def render(self) -> np.ndarray:
        return draw(self.state["position"], self.state["target"], self.params.length)
