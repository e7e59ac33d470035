"""A compact text rendering of the match, for text-only models and the terminal player.

It says what a player would read off the screen: the score and clock, where the ball is and who
has it, where the controlled player is and which way he runs, every player's position, and the
opponents closest to the controlled player. Positions are in the viewer's frame: the viewer's
team always attacks the goal on the right (x = 1).
"""

from __future__ import annotations

import math

from nodes.game.football.raw_state import GAME_MODES, State, frames_played, mirror, role_name

_DIR_WORDS = ("right", "bottom-right", "down", "bottom-left", "left", "top-left", "up", "top-right")


def _heading(dx: float, dy: float) -> str:
    if math.hypot(dx, dy) < 1e-4:
        return "standing"
    return "moving " + _DIR_WORDS[round(math.atan2(dy, dx) / (math.pi / 4)) % 8]


def _xy(p: list[float]) -> str:
    return f"({p[0]:+.2f},{p[1]:+.2f})"


def render(state: State, *, team: str = "left", controlled: int | None = None, duration: int = 400,
           nearest: int = 3) -> str:
    """The state as text for a viewer on ``team`` controlling player ``controlled`` (or nobody)."""
    view = state if team == "left" else mirror(state)
    mine, theirs = view["left_team"], view["right_team"]
    frame = frames_played(view, duration)
    lines = [f"Frame {frame} of {duration}. Score: your team {view['score'][0]} - {view['score'][1]} opponents."
             + ("" if view["game_mode"] == 0 else f" Set piece: {GAME_MODES[view['game_mode']]}.")]
    ball = view["ball"]
    owner_team, owner = view["ball_owned_team"], view["ball_owned_player"]
    if owner_team == 0:
        who = "you" if owner == controlled else f"your teammate #{owner}"
    elif owner_team == 1:
        who = f"opponent #{owner}"
    else:
        who = "nobody (the ball is loose or in the air)"
    lines.append(f"Ball at {_xy(ball)}, height {ball[2]:.2f}; held by {who}.")
    if controlled is not None and 0 <= controlled < len(mine):
        me = mine[controlled]
        d = view["left_team_direction"][controlled]
        lines.append(f"You control #{controlled} ({role_name(view['left_team_roles'][controlled])}) at {_xy(me)}, "
                     f"{_heading(d[0], d[1])}; distance to the goal {math.hypot(1 - me[0], me[1]):.2f}.")
        close = sorted(range(len(theirs)), key=lambda i: math.dist(me, theirs[i]))[:nearest]
        lines.append("Closest opponents: " + ", ".join(
            f"#{i} at {_xy(theirs[i])} ({math.dist(me, theirs[i]):.2f} away)" for i in close) + ".")
    lines.append("Your team (attacking right): " + " ".join(
        f"#{i}{'*' if i == controlled else ''} {role_name(view['left_team_roles'][i])} {_xy(p)}"
        for i, p in enumerate(mine)))
    lines.append("Opponents (defending the right goal): " + " ".join(
        f"#{i} {role_name(view['right_team_roles'][i])} {_xy(p)}" for i, p in enumerate(theirs)))
    return "\n".join(lines)
