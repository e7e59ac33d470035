"""A hand-written attacker: the policy the environment's ``oracle`` service plays for the scripted agent.

Football has no optimal policy to compute, so the oracle is a plain rule set that is good enough
to score from an attacking position against gfootball's weakest defenders (MageBench sets the
opponents' difficulty to 0): run at the goal, sidestep a defender standing in the way, and shoot
once inside the box. It exists so the reward judge and the pipeline can be checked against an
agent that reliably does something sensible, not to be a strong player.
"""

from __future__ import annotations

import math

from nodes.game.football.actions import direction_towards
from nodes.game.football.raw_state import State, mirror

SHOOT_X = 0.70  # inside the box, roughly level with the penalty spot
SHOOT_Y = 0.22
BLOCK_DISTANCE = 0.09  # a defender this close in front of the carrier is in the way


def attack(state: State, team: str, controlled: int) -> str:
    """The next action, in the seat's own frame (its team attacks to the right), for the player
    ``controlled`` of ``team``."""
    view = state if team == "left" else mirror(state)
    if controlled < 0 or controlled >= len(view["left_team"]):
        return "action_idle"
    me = view["left_team"][controlled]
    has_ball = view["ball_owned_team"] == 0 and view["ball_owned_player"] == controlled
    if not has_ball:
        ball = view["ball"]
        return direction_towards(ball[0] - me[0], ball[1] - me[1])
    if me[0] > SHOOT_X and abs(me[1]) < SHOOT_Y:
        # a shot goes where the player is heading: face the goal first, then shoot
        aim = direction_towards(1.0 - me[0], -me[1])
        heading = view["left_team_direction"][controlled]
        if math.hypot(*heading) < 1e-3 or direction_towards(*heading) != aim:
            return aim
        return "action_shot"
    gx, gy = 1.0 - me[0], -me[1] * (0.5 if me[0] > 0.5 else 0.25)
    norm = math.hypot(gx, gy) or 1.0
    gx, gy = gx / norm, gy / norm
    for p in view["right_team"]:
        dx, dy = p[0] - me[0], p[1] - me[1]
        ahead = dx * gx + dy * gy
        across = -dx * gy + dy * gx
        if 0 < ahead < BLOCK_DISTANCE and abs(across) < BLOCK_DISTANCE / 2:
            side = -1.0 if across > 0 else 1.0  # step to the side away from the defender
            if abs(me[1]) > 0.3:
                side = -math.copysign(1.0, me[1])  # never towards the touchline
            return direction_towards(gx - side * gy, gy + side * gx)
    return direction_towards(gx, gy)
