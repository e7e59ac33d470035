"""Auto-rendering: one agent decision may play several engine frames (MageBench A.3.4).

An engine frame moves a player a few centimetres, so asking a model every frame wastes calls on
nothing. MageBench skips two kinds of frames, and so does this module:

* a pass or shot by the player on the ball: the kick is pressed (alternating with the last run
  direction, as a player holds both) until the ball leaves the passer, then the built-in AI plays
  on while the ball is in the air, until someone has it;
* the same run direction chosen twice in a row: the run continues for up to ``max_frames`` frames,
  and stops early when a linear look-ahead of ``lookahead`` frames brings an opponent within
  ``threshold`` of the ball carrier (or the carrier would run off the pitch).

Each seat gets a ``Plan`` per decision; the environment steps while every plan wants another
frame, so in a multi-agent match the world pauses for whichever agent needs to decide first.
Names here are global-frame action names (a right-team seat's own directions are mirrored first).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from nodes.game.football.actions import BUILTIN_AI, DIRECTIONS, KICKS
from nodes.game.football.raw_state import State, owner_of


@dataclass(frozen=True)
class AutoRenderConfig:
    """MageBench's values: 10 frames at most, a 5-frame look-ahead, 0.01 field units."""

    enabled: bool = True
    max_frames: int = 10
    lookahead: int = 5
    threshold: float = 0.01
    max_flight_frames: int = 200  # a safety stop; a ball in flight settles long before this


@dataclass
class SeatMemory:
    """What the auto-renderer remembers about a seat between decisions."""

    last_run: str | None = None  # the direction of the previous decision, if it was one
    last_direction: str = "action_right"  # the latest direction chosen (the kick is aimed with it)


@dataclass
class Plan:
    """The frames one decision plays for one seat. ``next_action`` gives the action for the
    coming frame, or None when the decision is used up and the agent must choose again."""

    kind: str  # "single", "run" or "kick"
    action: str
    team: str = "left"
    passer: int = -1
    aim: str = "action_right"
    config: AutoRenderConfig = field(default_factory=AutoRenderConfig)
    frames: int = 0
    _aim_pending: bool = False
    _done: bool = False

    def next_action(self, state: State) -> str | None:
        if self._done:
            return None
        if self.kind == "single":
            return self.action if self.frames == 0 else None
        if self.kind == "run":
            return self.action
        # kick: press it, then the aim direction, while the passer still has the ball; let the
        # built-in AI play while the ball is in the air
        if self._aim_pending:
            self._aim_pending = False
            return self.aim
        if self.frames >= self.config.max_flight_frames:
            return None
        owner = owner_of(state)
        if owner == (self.team, self.passer):
            self._aim_pending = True
            return self.action
        if owner is None:
            return BUILTIN_AI
        return None  # someone received it (or took it): the agent decides again

    def after_frame(self, state: State, done: bool) -> None:
        """Account for one played frame; a run ends here when its time or its path is up."""
        self.frames += 1
        if done:
            self._done = True
        elif self.kind == "run":
            if self.frames >= self.config.max_frames or not path_is_clear(state, self.team, self.config):
                self._done = True


def plan_for(action: str, memory: SeatMemory, state: State, team: str, config: AutoRenderConfig) -> Plan:
    """The plan a decision starts, updating the seat's memory like MageBench does: a repeated
    direction runs on, a kick by the player on the ball plays through its flight."""
    if not config.enabled:
        if action in DIRECTIONS:
            memory.last_direction = action
        return Plan("single", action, team, config=config)
    if action in DIRECTIONS:
        repeated = memory.last_run == action
        memory.last_run = action
        memory.last_direction = action
        return Plan("run" if repeated else "single", action, team, config=config)
    memory.last_run = None
    owner = owner_of(state)
    if action in KICKS and owner is not None and owner[0] == team:
        return Plan("kick", action, team, passer=owner[1], aim=memory.last_direction, config=config)
    return Plan("single", action, team, config=config)


def path_is_clear(state: State, team: str, config: AutoRenderConfig) -> bool:
    """MageBench's look-ahead: extrapolate the ball carrier (or the ball) and every opponent along
    their current velocities; any meeting closer than the threshold, or a carrier about to leave the
    pitch, ends the run."""
    own = state[f"{team}_team"]
    own_dir = state[f"{team}_team_direction"]
    other = "right" if team == "left" else "left"
    opp, opp_dir = state[f"{other}_team"], state[f"{other}_team_direction"]
    owner = owner_of(state)
    if owner is not None and owner[0] == team:
        pos, vel = own[owner[1]], own_dir[owner[1]]
    else:
        pos, vel = state["ball"][:2], state["ball_direction"][:2]
    ahead = (pos[0] + 3 * vel[0], pos[1] + 3 * vel[1])
    if not (-1.0 < ahead[0] < 1.0 and -0.42 < ahead[1] < 0.42):
        return False
    for i in range(config.lookahead + 1):
        me = (pos[0] + i * vel[0], pos[1] + i * vel[1])
        for p, v in zip(opp, opp_dir):
            if math.dist(me, (p[0] + i * v[0], p[1] + i * v[1])) < config.threshold:
                return False
    return True
