"""The Sokoban environment node: MageBench's levels on the bus, speaking docs/environments.md.

Episode ``i`` of a run plays level ``i`` of the chosen set (wrapping around, so repeats of a set are
just more episodes). Parameters: ``launch describe sokoban.env``; ``frames`` (off by default, as for
every environment) draws no frame at all when off, and ``max_steps`` is MageBench's cap (50).
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.sokoban import render
from nodes.game.sokoban.game import SokobanGame, load_levels
from nodes.game.sokoban.rules import ACTIONS
from nodes.game.sokoban.tiers import STEP_LIMIT

Tier = Literal["v0", "v1", "v2", "small-v0", "small-v1", "large-v0", "large-v1", "huge-v0"]


def observation(game: SokobanGame) -> Observation:
    """The ``obs`` body for the game's current position, less what the base adds (env, episode, t, frame)."""
    b = game.board
    return {"actions": list(ACTIONS), "idle": None, "goal": game.goal(),
            "text": render.text(game.level, b.boxes, b.player), "level": game.level.name,
            "tier": game.level.tier, "steps_left": game.max_steps - game.t,
            "boxes_on_target": b.on_target, "boxes": len(b.targets)}


class SokobanEnv(EnvNode):
    """Publishes ``obs`` each decision and ``step`` after each action; serves ``oracle`` (the next
    move of a shortest solution) and ``describe``."""

    class Params(EnvParams):
        set: Literal["mini", "full"] = Field("mini", description="mini: 20 levels; full: the 182 of MageBench")
        tier: Tier | list[Tier] | None = Field(None, description="play only the levels of these tiers")
        levels: str | None = Field(None, description="an XSB file of your own levels instead (solved at start-up)")
        max_steps: int | None = Field(STEP_LIMIT, gt=0, description="decisions per episode, MageBench's cap")
        resolution: int = Field(640, ge=0, description="the frame's long edge in pixels (0: native tiles)")

    env = "sokoban"
    params: Params

    async def setup(self) -> None:
        self.levels = await asyncio.to_thread(load_levels, self.params.model_dump())
        self.set_name = "custom" if self.params.levels else self.params.set
        self.game: SokobanGame | None = None
        self.episode_id: str | None = None

    async def reset(self, episode: Episode) -> None:
        self.level = self.levels[episode.index % len(self.levels)]
        self.game = SokobanGame(self.level, self.params.max_steps or STEP_LIMIT)
        self.episode_id = episode.id

    def observe(self) -> Observation:
        assert self.game is not None
        return observation(self.game)

    def render(self) -> Any:
        assert self.game is not None
        b = self.game.board
        return render.frame(self.game.level, b.boxes, b.player, self.params.resolution)

    async def step(self, action: str | None) -> StepResult:
        assert self.game is not None
        step = self.game.play(action)
        return StepResult(step.reward, step.done, self._info(), truncated=self.game.truncated)

    async def stop(self, reason: str) -> StepResult:
        assert self.game is not None
        self.game.play({"stop": True})
        return StepResult(0.0, True, self._info())

    def _info(self) -> dict[str, Any]:
        assert self.game is not None
        return {**self.game.info(), "set": self.set_name}

    def metrics(self, last: Any) -> dict[str, Any]:
        game = self.game
        assert game is not None
        return {"score": game.score, "success": float(game.success), "steps": game.t,
                "optimal_steps": game.optimal_steps, "level": self.level.name, "tier": self.level.tier}

    @service("oracle")
    async def oracle(self, body: dict[str, Any]) -> Any:
        """The next move of a shortest solution from the current position; a stop body when the
        position can no longer be solved (nothing an agent does can finish the level)."""
        game = self.game
        if game is None or (body or {}).get("episode") not in (None, self.episode_id):
            return None
        action = await asyncio.to_thread(game.oracle)
        return action if action is not None else {"stop": True, "reason": "the level cannot be solved from here"}

    def action_names(self) -> list[str]:
        return list(ACTIONS)

    @service("describe")
    def describe(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"env": self.env, "actions": list(ACTIONS), "idle": None, "levels": len(self.levels),
                "level_ids": [lv.name for lv in self.levels], "max_steps": self.params.max_steps,
                "frames": self.params.frames, "resolution": self.params.resolution}
