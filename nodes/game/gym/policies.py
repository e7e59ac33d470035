"""Scripted policies for the ``oracle`` param of ``gym.env`` (``module:function(env, obs) -> action
name``): what ``agent.scripted`` plays, to check a graph with an agent that is better than random."""

from __future__ import annotations

from typing import Any

import numpy as np


def cartpole_balance(env: Any, obs: Any) -> str:
    """CartPole: push toward the side the pole falls to (angle plus a share of its angular speed)."""
    _, _, angle, spin = (float(v) for v in obs)
    return "1" if angle + 0.5 * spin > 0 else "0"


PONG_PADDLE = np.array([92, 186, 92], dtype=np.uint8)
PONG_BALL = np.array([236, 236, 236], dtype=np.uint8)


def pong_track(env: Any, obs: Any) -> str:
    """ALE Pong (rgb observations): move the right paddle toward the ball's row; serve when no ball."""
    frame = np.asarray(obs)
    if frame.ndim != 3:
        return "NOOP"
    field = frame[34:194]
    paddle = np.nonzero((field[:, 140:144] == PONG_PADDLE).all(axis=2))[0]
    ball = np.nonzero((field == PONG_BALL).all(axis=2))[0]
    if ball.size == 0:
        return "FIRE"
    if paddle.size == 0:
        return "NOOP"
    gap = float(ball.mean()) - float(paddle.mean())
    if abs(gap) < 4:
        return "NOOP"
    return "LEFT" if gap > 0 else "RIGHT"  # in Pong, RIGHT moves the paddle up and LEFT down
