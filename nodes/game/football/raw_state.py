"""The raw match state as plain data: what judges score and text-mode agents read.

gfootball's observation is a dict of numpy arrays with engine-specific extras; this module turns it
into lists and numbers that travel over the bus and into JSON logs unchanged, always in the global
frame (x from -1, the left goal, to 1, the right goal; y from -0.42 at the top to 0.42 at the
bottom). ``mirror`` gives the same state as the right team sees it, so a right-team agent can be
told it attacks to the right like everyone else.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from nodes.game.football.seats import Seat

ROLE_NAMES = ("GK", "CB", "LB", "RB", "DM", "CM", "LM", "RM", "AM", "CF")
GAME_MODES = ("normal", "kick_off", "goal_kick", "free_kick", "corner", "throw_in", "penalty")
# The sticky bits gfootball reports per controller, for the 'full' action set, in its order.
STICKY_NAMES = ("left", "top_left", "top", "top_right", "right", "bottom_right", "bottom", "bottom_left",
                "sprint", "dribble", "keeper_rush", "pressure", "team_pressure")

State = dict[str, Any]


def _pairs(arr: Any) -> list[list[float]]:
    return [[float(a), float(b)] for a, b in arr.tolist()] if hasattr(arr, "tolist") else [list(p) for p in arr]


def _floats(arr: Any) -> list[float]:
    return [float(v) for v in (arr.tolist() if hasattr(arr, "tolist") else arr)]


def from_observation(obs: Mapping[str, Any], seats: Sequence[Seat]) -> State:
    """Plain-data state from a gfootball core observation (``FootballEnvCore.observation()``)."""
    controlled: dict[str, int] = {}
    sticky: dict[str, list[str]] = {}
    slots = {"left": 0, "right": 0}
    for seat in seats:
        i = slots[seat.team]
        slots[seat.team] += 1
        players = obs[f"{seat.team}_agent_controlled_player"]
        controlled[seat.agent] = int(players[i]) if i < len(players) else -1
        bits = obs[f"{seat.team}_agent_sticky_actions"][i].tolist() if i < len(players) else ()
        sticky[seat.agent] = [name for name, on in zip(STICKY_NAMES, bits) if on]
    return {
        "steps_left": int(obs["steps_left"]),
        "score": [int(obs["score"][0]), int(obs["score"][1])],
        "game_mode": int(obs["game_mode"]),
        "ball": _floats(obs["ball"]),
        "ball_direction": _floats(obs["ball_direction"]),
        "ball_owned_team": int(obs["ball_owned_team"]),
        "ball_owned_player": int(obs["ball_owned_player"]),
        "left_team": _pairs(obs["left_team"]),
        "right_team": _pairs(obs["right_team"]),
        "left_team_direction": _pairs(obs["left_team_direction"]),
        "right_team_direction": _pairs(obs["right_team_direction"]),
        "left_team_roles": [int(r) for r in obs["left_team_roles"].tolist()],
        "right_team_roles": [int(r) for r in obs["right_team_roles"].tolist()],
        "controlled": controlled,
        "sticky": sticky,
    }


def mirror(state: State) -> State:
    """The state as the right team sees it: teams swapped and the pitch turned by 180 degrees."""

    def flip(pairs: list[list[float]]) -> list[list[float]]:
        return [[-x, -y] for x, y in pairs]

    owner = state["ball_owned_team"]
    ball, bdir = state["ball"], state["ball_direction"]
    return {
        **state,
        "score": [state["score"][1], state["score"][0]],
        "ball": [-ball[0], -ball[1], *ball[2:]],
        "ball_direction": [-bdir[0], -bdir[1], *bdir[2:]],
        "ball_owned_team": owner if owner == -1 else 1 - owner,
        "left_team": flip(state["right_team"]),
        "right_team": flip(state["left_team"]),
        "left_team_direction": flip(state["right_team_direction"]),
        "right_team_direction": flip(state["left_team_direction"]),
        "left_team_roles": state["right_team_roles"],
        "right_team_roles": state["left_team_roles"],
    }


def owner_of(state: State) -> tuple[str, int] | None:
    """(team, player index) of the player on the ball, or None while it is free."""
    team = state["ball_owned_team"]
    if team == -1 or state["ball_owned_player"] < 0:
        return None
    return ("left" if team == 0 else "right"), state["ball_owned_player"]


def role_name(code: int) -> str:
    return ROLE_NAMES[code] if 0 <= code < len(ROLE_NAMES) else str(code)


def frames_played(state: State, duration: int) -> int:
    """Frames since kick-off, from the engine's countdown (which reads duration + 1 at the reset)."""
    return max(0, duration - state["steps_left"])
