"""The Sokoban environment node: MageBench's levels on the bus, speaking docs/environments.md.

Episode ``i`` of a run plays level ``i`` of the chosen set (wrapping around, so repeats of a set are
just more episodes). Params:

* ``set``: ``mini`` (20 levels, default) or ``full`` (182); ``tier``: a tier name or a list of them,
  to play only those; ``levels``: an XSB file of your own levels instead (solved at start-up);
* ``max_steps`` (50): decisions per episode, MageBench's cap for both settings;
* ``frames`` (true): put the rendered RGB frame in each observation (text-only graphs set false,
  and then no frame is drawn at all); ``resolution`` (640): the frame's long edge in pixels;
* ``judge``: whether a judge ends the episodes (default: true when the ``step`` output is wired).
"""

from __future__ import annotations

import asyncio
from typing import Any

from kernel.sdk.node import Node, service
from nodes.game.sokoban import render
from nodes.game.sokoban.game import SokobanGame, Step, load_levels
from nodes.game.sokoban.rules import ACTIONS
from nodes.game.sokoban.tiers import STEP_LIMIT


def observation(game: SokobanGame, episode: str, frames: bool = True, resolution: int = 640) -> dict[str, Any]:
    """The ``obs`` message body for the game's current position (docs/environments.md)."""
    b = game.board
    obs: dict[str, Any] = {
        "env": "sokoban", "episode": episode, "t": game.t, "actions": list(ACTIONS), "idle": None,
        "goal": game.goal(), "text": render.text(game.level, b.boxes, b.player),
        "level": game.level.name, "tier": game.level.tier, "steps_left": game.max_steps - game.t,
        "boxes_on_target": b.on_target, "boxes": len(b.targets),
    }
    if frames:
        obs["frame"] = render.frame(game.level, b.boxes, b.player, resolution)
    return obs


def step_message(game: SokobanGame, step: Step, episode: str, set_name: str) -> dict[str, Any]:
    """The ``step`` message body for one applied decision, with what the judge needs in ``info``."""
    return {"episode": episode, "t": step.t, "action": step.action, "valid": step.valid, "reward": step.reward,
            "done": step.done, "info": {**game.info(), "set": set_name}}


class SokobanEnv(Node):
    """Publishes ``obs`` each decision and ``step`` after each action; serves ``oracle`` (the next
    move of a shortest solution) and ``describe``."""

    inputs = ("action",)
    outputs = ("obs", "step")

    async def setup(self) -> None:
        p = self.params
        self.levels = await asyncio.to_thread(load_levels, p)
        self.max_steps = int(p.get("max_steps", STEP_LIMIT))
        self.frames = bool(p.get("frames", True))
        self.resolution = int(p.get("resolution", 640))
        self.step_wired = bool(self.readers("step"))
        self.judged = bool(p.get("judge", self.step_wired))
        self.set_name = "custom" if p.get("levels") else str(p.get("set", "mini"))
        self.game: SokobanGame | None = None
        self.episode_id: str | None = None

    async def run(self) -> None:
        while (episode := await self.next_episode()) is not None:
            level = self.levels[episode.index % len(self.levels)]
            game = SokobanGame(level, self.max_steps)
            self.game, self.episode_id = game, episode.id
            warned = False
            while not game.done:
                t = game.t
                await self.publish("obs", observation(game, episode.id, self.frames, self.resolution), step=t)
                actions = await self.clock.actions(t)
                action = next(iter(actions.values()), None)
                step = game.play(action)
                if not step.valid and not warned:
                    warned = True
                    self.log.warning("invalid action; the step is spent and nothing moves", episode=episode.id,
                                     t=t, action=repr(action)[:80], allowed=list(ACTIONS))
                if self.step_wired:
                    await self.publish("step", step_message(game, step, episode.id, self.set_name), step=t)
            if not self.judged:
                await self.end_episode(episode, score=game.score, success=float(game.success), steps=game.t,
                                       optimal_steps=game.optimal_steps, level=level.name, tier=level.tier)

    @service("oracle")
    async def oracle(self, body: dict[str, Any]) -> Any:
        """The next move of a shortest solution from the current position; a stop body when the
        position can no longer be solved (nothing an agent does can finish the level)."""
        game = self.game
        if game is None or (body or {}).get("episode") not in (None, self.episode_id):
            return None
        action = await asyncio.to_thread(game.oracle)
        return action if action is not None else {"stop": True, "reason": "the level cannot be solved from here"}

    @service("describe")
    def describe(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"env": "sokoban", "actions": list(ACTIONS), "idle": None, "levels": len(self.levels),
                "level_ids": [lv.name for lv in self.levels], "max_steps": self.max_steps,
                "frames": self.frames, "resolution": self.resolution}
