"""SuperMario's scripted policy: the baseline a model should beat (the env's ``oracle`` service).

It reads the game state, not the picture: it heads for the nearest coin or unbumped coin box
(ahead of Mario on stages with a flagpole, either way on the one-screen stages), then for the
flagpole; it jumps at walls, pits and Goombas in its way and under what it wants above it, and
for a target over a ledge it first jumps up onto the ledge from its nearer end. Each
choice is checked on copies of the game: the first action in its order of preference after
which some short follow-up keeps Mario alive, so it does not jump into a pit or a Goomba it
could see coming. The copies never touch the game's random generator (play draws nothing).
"""

from __future__ import annotations

import copy
import dataclasses
import math

from nodes.game.vmage.mario_rules import GROUND, TILE, MarioRules

FOLLOW_UP = 4  # decisions a follow-up is held for in the safety check


def twin(game: MarioRules) -> MarioRules:
    """A copy that can be played on without changing ``game``."""
    other = copy.copy(game)
    other.mario = dataclasses.replace(game.mario)
    other.goombas = [dataclasses.replace(g, body=dataclasses.replace(g.body)) for g in game.goombas]
    other.tiles = dict(game.tiles)
    other.coins = set(game.coins)
    return other


def _survives(game: MarioRules, action: str, then: str) -> bool:
    g = twin(game)
    frames = g.level.sample_frames
    for i in range(frames * (1 + FOLLOW_UP)):
        g.tick(action if i < frames else then)
        if g.over:
            return g.reason == "Mario reached the flagpole"
    return True


def _target(game: MarioRules) -> tuple[float, float] | None:
    """Where Mario wants his middle to go: a coin, the spot under a coin box, or the flagpole."""
    m = game.mario
    mx = m.x + m.w / 2
    spots = [((c + 0.5) * TILE, (r + 0.5) * TILE) for c, r in game.coins]
    spots += [((c + 0.5) * TILE, (r + 1) * TILE) for (c, r), k in game.tiles.items()
              if k == "box" and m.y + m.h > (r + 1) * TILE]  # a box is bumped from below only
    if game.stage.flag is not None:
        spots = [s for s in spots if s[0] > mx - 2 * TILE and s[0] < mx + 12 * TILE]
    if spots:
        return min(spots, key=lambda s: abs(s[0] - mx) + 0.5 * abs(s[1] - (m.y + m.h / 2)))
    if game.stage.flag is not None:
        return (game.stage.flag + 0.5) * TILE, GROUND * TILE
    return None


def _blocked(game: MarioRules, d: int) -> bool:
    """A wall, a pit or a Goomba in Mario's way within a few tiles."""
    m = game.mario
    front = m.x + m.w if d > 0 else m.x
    row = math.floor((m.y + m.h - 1) / TILE)
    for ahead in (4, TILE // 2, TILE):
        c = math.floor((front + d * ahead) / TILE)
        if game.solid(c, row):
            return True
        if row == GROUND - 1 and not game.solid(c, GROUND):
            return True
    for c in range(1, 3):
        col = math.floor((front + d * c * TILE) / TILE)
        if row + 1 <= GROUND and not any(game.solid(col, r) for r in range(row + 1, GROUND + 2)):
            return True  # nothing below: a pit
    for g in game.goombas:
        gap = (g.body.x - m.x) * d
        if g.alive and 0 < gap < 4 * TILE and abs(g.body.y - m.y) < TILE:
            return True
    return False


def _ledge(game: MarioRules, target: tuple[float, float]) -> tuple[int, int, int] | None:
    """The ledge between Mario and a target above it, as (row, first column, last column): a
    target on or over a ledge is reached by jumping up onto the ledge from one of its ends."""
    m = game.mario
    feet = math.floor((m.y + m.h - 1) / TILE)
    tc, tr = math.floor(target[0] / TILE), math.floor((target[1] - 1) / TILE)
    for r in range(tr + 1, feet + 1):
        if game.solid(tc, r):
            first = last = tc
            while first > 0 and game.solid(first - 1, r):
                first -= 1
            while last < game.stage.width - 1 and game.solid(last + 1, r):
                last += 1
            return r, first, last
    return None


def scripted(game: MarioRules) -> str:
    m = game.mario
    target = _target(game)
    if target is None:
        return "NONE"
    mx = m.x + m.w / 2
    ledge = _ledge(game, target)
    climb = 0  # the way onto the ledge, once Mario stands at one of its ends
    if ledge is not None:
        _, first, last = ledge
        ends = (first * TILE - m.w / 2 - 2, 1), ((last + 1) * TILE + m.w / 2 + 2, -1)
        spot, into = min(ends, key=lambda e: abs(e[0] - mx))
        if not m.on_ground and first * TILE - TILE < mx < (last + 2) * TILE:
            spot = mx + into * TILE  # in the air beside it: steer onto it
        elif abs(spot - mx) < TILE / 2:
            climb = into
        target = (spot, m.y + m.h / 2)
    dx = target[0] - mx
    d = 0 if abs(dx) < 6 else (1 if dx > 0 else -1)
    if d == 0 and target[1] > m.y + m.h + TILE / 2:
        d = game.facing  # right above it on a ledge: walk on until Mario drops off
    steer = {1: "RIGHT", -1: "LEFT", 0: "NONE"}[d]
    jump = {1: "UP+RIGHT", -1: "UP+LEFT", 0: "UP"}[climb or d]
    above = target[1] < m.y - 4 and abs(dx) < 1.5 * TILE
    if m.on_ground and (climb or above or (d and _blocked(game, d))):
        order = [jump, steer, "NONE"]
    else:
        order = [steer, "NONE", jump]
    back = {"RIGHT": "LEFT", "LEFT": "RIGHT"}.get(steer, "RIGHT")
    order += [a for a in ("UP+LEFT", "UP+RIGHT", "LEFT", "RIGHT", "UP", back) if a not in order]
    for action in order:
        if any(_survives(game, action, then) for then in dict.fromkeys((steer, "NONE", jump, back))):
            return action
    return order[0]
