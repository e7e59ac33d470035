"""The V-MAGE environment node: a game and its levels on the bus, speaking docs/environments.md.

Parameters: ``launch describe vmage.env``. Episode i plays cell ``i % cells`` of the chosen games and levels
with seed ``i // cells`` (catalog.py). Each decision plays the level's ``sample_frames`` logic
frames under the lockstep clock (the game is frozen while the agent thinks, as V-MAGE does), or a
single frame per clock tick under the realtime clock (set its ``fps: 30``; the newest action is
held, and no action yet means the idle one, so the world runs on while the model thinks; a game
whose actions are key events, TempestRun, gets each action on one tick only and idles after it).

A decision without an action (an unparsable reply sent as none, or an invalid body) does not
advance the game in lockstep, as in V-MAGE; the ``random_after``-th of them in a row (3, V-MAGE's
rule, which its game loop applies, not its agent) plays a random valid action instead and starts the
count again, so a model that never answers well still moves the game. With that switched off (0),
``stall_limit`` of them in a row end the episode, so an agent that never answers cannot hold a run
forever.
"""

from __future__ import annotations

import random
import zlib
from typing import Any, Literal

from pydantic import Field, model_validator

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepRecord, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.vmage.base import DEFAULT_HEIGHT, FRAME_CAP, Game, decide, render
from nodes.game.vmage.catalog import GAMES, cells, episode_cell, template_for

GameName = Literal["pong", "flappybird", "race", "tempestrun", "supermario"]


class VmageParams(EnvParams):
    game: GameName | list[GameName] | Literal["all"] = Field(
        ..., description="the game: pong, flappybird, race, tempestrun or supermario; a list of them or all "
        "(every game, 33 cells with level all) deals the episodes over all their cells")
    level: int | list[int] | Literal["all"] = Field("all", description="the levels to play (pong 1-3, "
                                                    "flappybird 1-7, race 1-9, tempestrun 1-4, supermario 1-10), one number, "
                                                    "a list or all")
    height: int = Field(DEFAULT_HEIGHT, gt=0, description="frames are the whole window scaled to this height "
                        "(V-MAGE: 360; its ablations 120/240/480)")
    sample_frames: int | None = Field(None, gt=0, description="logic frames per decision in lockstep (default "
                                      "the level's: pong 3, flappybird 5 on levels 1-3 and 3 after)")
    max_rounds: int | None = Field(None, gt=0, description="frames per episode at most (default the level's; "
                                   "V-MAGE sets none for pong, flappybird or tempestrun, so frame_cap applies)")
    frame_cap: int = Field(FRAME_CAP, gt=0, description="frames at most where the level sets no limit (ours, "
                           "not V-MAGE's: a policy that never fails still ends)")
    stall_limit: int = Field(100, gt=0, description="decisions in a row without an action that end the episode")
    random_after: int = Field(3, ge=0, description="lockstep: the n-th decision in a row without an action plays "
                              "a random valid action and restarts the count (V-MAGE: 3); 0 never does")

    @model_validator(mode="after")
    def _levels_exist(self) -> VmageParams:
        cells(self.game, self.level)  # ValueError naming the allowed levels
        return self


class VmageEnv(EnvNode):
    """Publishes ``obs`` each decision and ``step`` after it; serves ``oracle`` (the game's
    scripted policy) and ``describe``."""

    Params = VmageParams
    env = "vmage"
    params: VmageParams

    async def setup(self) -> None:
        self.cells = cells(self.params.game, self.params.level)
        self.game: Game | None = None
        self.episode_id: str | None = None
        self.round = 0
        self.stalls = 0
        self.last_info = "Game is running."
        self.fallback = random.Random(0)
        self.decisions_seen = 0  # the realtime clock's count of decisions when an action was last applied

    async def reset(self, episode: Episode) -> None:
        name, level, self.round = episode_cell(self.cells, episode.index)
        self.game = GAMES[name](level, self.round)
        self.episode_id = episode.id
        self.stalls = 0
        self.last_info = "Game is running."
        # its own stream (not the game's), fixed by the episode, so a replayed episode draws the same actions
        self.fallback = random.Random(zlib.crc32(f"vmage-fallback/{episode.id}".encode()))

    def _game(self) -> Game:
        assert self.game is not None, "no episode in play"
        return self.game

    @property
    def realtime(self) -> bool:
        return getattr(self.clock, "mode", None) == "realtime"

    def observe(self) -> Observation:
        game = self._game()
        lv = game.level
        return {"actions": list(lv.actions), "idle": lv.idle, "goal": f"V-MAGE {game.name} level {lv.level}",
                "text": game.describe(), "game": game.name, "level": lv.level, "round": self.round,
                "score": game.score, "game_frame": game.frame, "sample_frames": self._frames(),
                "info": self.last_info, "template": template_for(game.name, lv.level)}

    def render(self) -> Any:
        return render(self._game(), self.params.height)

    def _frames(self) -> int:
        return 1 if self.realtime else self.params.sample_frames or self._game().level.sample_frames

    def _limit(self) -> int:
        lv = self._game().level
        return self.params.max_rounds or lv.max_rounds or self.params.frame_cap

    async def step(self, action: str | None) -> StepResult:
        game = self._game()
        before, played, drawn = game.score, 0, None
        if action is None and not self.realtime:
            self.stalls += 1
            self.last_info = f"Invalid action, which should be one of {list(game.level.actions)}"
            if self.params.random_after and self.stalls >= self.params.random_after:
                drawn = self.fallback.choice(list(game.level.actions))
                self.stalls = 0
                played = decide(game, drawn, self._frames(), self._limit())
                self.last_info = game.info()
            elif self.stalls >= self.params.stall_limit:
                game.end("stalled: no action for stall_limit decisions in a row")
        else:
            self.stalls = 0
            if self.realtime and not game.repeats:  # a key event fires once, not on every tick it is the newest
                decisions = int(getattr(self.clock, "decisions", 0))
                action, self.decisions_seen = (action if decisions != self.decisions_seen else None), decisions
            played = decide(game, action or game.level.idle, self._frames(), self._limit())
            self.last_info = game.info()
        return StepResult(game.score - before, game.over, {**self._info(played), "random_action": drawn})

    async def stop(self, reason: str) -> StepResult:
        game = self._game()
        if not game.over:
            game.end(f"stopped: {reason}")
        return StepResult(0.0, True, self._info(0))

    def _info(self, played: int) -> dict[str, Any]:
        game = self._game()
        return {"game": game.name, "level": game.level.level, "round": self.round, "score": game.score,
                "frames": game.frame, "played": played, "over": game.over, "reason": game.reason,
                "game_info": self.last_info, "clock": "realtime" if self.realtime else "lockstep"}

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        game = self._game()
        return {"score": game.score, "frames": game.frame, "reason": game.reason, "game": game.name,
                "level": game.level.level, "round": self.round}

    @service("oracle")
    def oracle(self, body: Any) -> str | None:
        """The game's scripted policy for the current state (a Pong tracker, a gap-following bird)."""
        episode = (body or {}).get("episode")
        if self.game is None or (episode is not None and episode != self.episode_id):
            return None
        return self.game.policy()

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        games = list(dict.fromkeys(g for g, _ in self.cells))  # in cell order
        one = games[0] if len(games) == 1 else None
        out: dict[str, Any] = {"env": self.env, "game": one or games, "cells": [list(c) for c in self.cells],
                               "height": self.params.height, "frames": self.params.frames}
        per_game = {g: {"levels": {str(n): {"actions": list(lv.actions), "idle": lv.idle,
                                            "sample_frames": lv.sample_frames, "max_rounds": lv.max_rounds,
                                            **dict(lv.settings)}
                                   for n, lv in GAMES[g].levels.items() if (g, n) in self.cells},
                        "window": list(GAMES[g].size)} for g in games}
        if one is not None:  # one game: its levels and window at the top, as before
            return {**out, **per_game[one]}
        return {**out, "games": per_game}
