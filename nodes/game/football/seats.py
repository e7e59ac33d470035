"""Seats: which agent node plays which footballer.

The ``players`` param of the environment maps agent node ids to a place on the pitch::

    players: {llm_a: "left:9", llm_b: "left:7", rnd_a: "right:9", rnd_b: "right:7"}

``left:9`` binds the agent to the left team's player 9 (the order of the scenario's player list,
0 is the goalkeeper) for the whole episode; a bare ``left`` follows the team's active player (the
one on the ball when attacking), which is MageBench's setting. Every other player is played by
gfootball's built-in AI. The engine can only bind controllers to fixed players if, on that team,
exactly the bound players are controllable, so a team's seats are either all fixed or all
following the active player.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

TEAMS = ("left", "right")


@dataclass(frozen=True)
class Seat:
    """One agent's place: its team, its fixed player (None: the active one) and the engine's
    controller slot (left controllers come first in the engine's action list)."""

    agent: str
    team: str
    player: int | None
    slot: int

    @property
    def label(self) -> str:
        return self.team if self.player is None else f"{self.team}:{self.player}"


class SeatError(ValueError):
    """The ``players`` param does not describe a match the engine can play."""


def _parse(agent: str, spec: object) -> tuple[str, int | None]:
    text = str(spec).strip().lower()
    team, _, index = text.partition(":")
    if team not in TEAMS:
        raise SeatError(f"players.{agent}: {spec!r} must be left, right, left:N or right:N")
    if not index:
        return team, None
    try:
        player = int(index)
    except ValueError:
        raise SeatError(f"players.{agent}: player number {index!r} is not an integer") from None
    if player < 0:
        raise SeatError(f"players.{agent}: player number must be >= 0")
    return team, player


def parse_seats(players: Mapping[str, object] | None, agents: Sequence[str]) -> list[Seat]:
    """The seats of a match, in the engine's controller order.

    ``agents`` are the node ids wired into the environment's ``action`` input. Without a
    ``players`` param a single agent follows the left team's active player (MageBench)."""
    if not players:
        if len(agents) > 1:
            raise SeatError(f"{len(agents)} agents are wired into action ({', '.join(agents)}): give the "
                            f"environment a players param saying which footballer each controls, "
                            f"e.g. players: {{{agents[0]}: left:9, {agents[1]}: right:9}}")
        players = {a: "left" for a in agents}
    unknown = [a for a in players if agents and a not in agents]
    if unknown:
        raise SeatError(f"players names {', '.join(unknown)}, which are not wired into the action input "
                        f"(wired: {', '.join(agents) or 'none'})")
    unseated = [a for a in agents if a not in players]
    if unseated:
        raise SeatError(f"agents {', '.join(unseated)} are wired into action but have no entry in players")
    parsed = {agent: _parse(agent, spec) for agent, spec in players.items()}
    seats: list[Seat] = []
    for team in TEAMS:
        mine = [(a, p) for a, (t, p) in parsed.items() if t == team]
        fixed = [p for _, p in mine if p is not None]
        if fixed and len(fixed) != len(mine):
            raise SeatError(f"the {team} team mixes fixed players and 'follow the active player' seats; "
                            f"the engine needs all of one kind per team")
        if len(set(fixed)) != len(fixed):
            raise SeatError(f"two agents are bound to the same {team} player")
        if fixed:  # the engine binds its controllers to the controllable players in team order
            mine.sort(key=lambda ap: ap[1])
        for agent, player in mine:
            seats.append(Seat(agent=agent, team=team, player=player, slot=len(seats)))
    return seats


def fixed_players(seats: Sequence[Seat]) -> dict[str, frozenset[int]]:
    """Per team, the player indices bound to agents (teams following the active player omitted)."""
    out: dict[str, frozenset[int]] = {}
    for team in TEAMS:
        idx = [s.player for s in seats if s.team == team and s.player is not None]
        if idx:
            out[team] = frozenset(idx)
    return out


def engine_players(seats: Sequence[Seat]) -> list[str]:
    """gfootball's ``players`` config for these seats: one external agent controlling them all."""
    left = sum(1 for s in seats if s.team == "left")
    right = sum(1 for s in seats if s.team == "right")
    return [f"agent:left_players={left},right_players={right}"] if left or right else []
