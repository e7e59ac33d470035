"""SuperMario's rules as V-MAGE plays them: a side-scrolling platformer on a grid of 32 px tiles.

Spec §2.2 (Tables 20 and 21). Mario runs, jumps (only from solid ground: the prompt's first note)
and steers in the air with LEFT / RIGHT or keeps his momentum with NONE (its second note); UP in
the air does nothing more than the steer it comes with. Points are the dashboard's: +100 for a
coin, +100 for a coin box bumped from below (it holds one coin) and +100 for a Goomba stomped.
The episode ends when Mario falls into a pit or walks into a Goomba (the spec's "penalties": the
run stops there and keeps its points, as V-MAGE's ``mario.restart`` ends it), when he touches the
flagpole, or at the level's frame limit. Every level plays 5 frames per decision, V-MAGE's
hard-set Mario value (spec §2.2, §8.2), and a decision's action is held on all 5, like a key.

The ten stages are built here, in code, from the counts of Table 21: each level's enemies, coins
and coin boxes are exactly the table's. The seed (the round) moves groups of coins, boxes and
Goombas by up to a tile, and mirrors the one-screen "Left or Right" stages, so rounds differ while
the difficulty stays the same. Level 10 is a long classic first stage in the manner of World 1-1,
laid out here (pipes, pits, stairs, a flagpole); it is not the original's level data.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pygame

from nodes.game.vmage.base import Game, Level, level_table

WIDTH, HEIGHT = 640, 480
TILE = 32
ROWS = HEIGHT // TILE  # 15; rows 13 and 14 are the ground
GROUND = 13
ACTIONS = ("UP", "UP+LEFT", "UP+RIGHT", "LEFT", "RIGHT", "NONE")

LEVELS: dict[int, Level] = level_table("supermario", {
    1: {"enemies": 0, "coins": 6, "coin_boxes": 2, "max_rounds": 400, "gameplay": "Common"},
    2: {"enemies": 2, "coins": 6, "coin_boxes": 2, "max_rounds": 1000, "gameplay": "Common"},
    3: {"enemies": 0, "coins": 17, "coin_boxes": 4, "max_rounds": 1000, "gameplay": "Long History (Two ways)"},
    4: {"enemies": 2, "coins": 17, "coin_boxes": 4, "max_rounds": 1000, "gameplay": "Long History (Two ways)"},
    5: {"enemies": 3, "coins": 8, "coin_boxes": 0, "max_rounds": 300, "gameplay": "Left or Right"},
    6: {"enemies": 0, "coins": 13, "coin_boxes": 0, "max_rounds": 300, "gameplay": "Left or Right"},
    7: {"enemies": 0, "coins": 8, "coin_boxes": 0, "max_rounds": 300, "gameplay": "Left or Right"},
    8: {"enemies": 0, "coins": 12, "coin_boxes": 0, "max_rounds": 1000, "gameplay": "Jump Only"},
    9: {"enemies": 5, "coins": 8, "coin_boxes": 0, "max_rounds": 1000, "gameplay": "Jump and Enemy"},
    10: {"enemies": 12, "coins": 0, "coin_boxes": 9, "max_rounds": 5000, "gameplay": "Classic W1-1"},
}, sample_frames=5, max_rounds=None, actions=ACTIONS, idle="NONE")

# physics, in pixels and logic frames (30 per second of game time)
GRAVITY = 1.2
JUMP_SPEED = 19.0  # a jump rises ~141 px (over a pipe of four tiles) and lasts 32 frames (six decisions)
MAX_FALL = 14.0
RUN_SPEED = 5.0
ACCEL = 0.7  # on the ground, per frame a direction is held
AIR_ACCEL = 0.5  # steering in the air
FRICTION = 0.5  # on the ground with no direction held: momentum runs out over ~10 frames
STOMP_BOUNCE = 8.0
GOOMBA_SPEED = 1.5
MARIO_SIZE = (24, 30)
GOOMBA_SIZE = (28, 28)
POINTS = 100

SOLID = ("ground", "brick", "box", "used", "pipe", "block")


@dataclass(slots=True)
class Body:
    """Anything that moves and collides with the tiles: Mario and the Goombas."""

    x: float
    y: float
    w: int
    h: int
    vx: float = 0.0
    vy: float = 0.0
    on_ground: bool = False

    @property
    def rect(self) -> pygame.Rect:
        return pygame.Rect(round(self.x), round(self.y), self.w, self.h)


@dataclass(slots=True)
class Goomba:
    """A walking enemy; a stomped one stays on screen flattened for a moment, so the model can see
    the stomp that scored."""

    body: Body
    alive: bool = True
    squashed: int = 0  # frames left to show the flattened Goomba after a stomp


@dataclass(slots=True)
class Stage:
    """A level's layout: tiles by (column, row), coin cells, Goomba start columns, Mario's start
    column and the flagpole's column (None on the one-screen stages, which end on time)."""

    width: int
    tiles: dict[tuple[int, int], str] = field(default_factory=dict)
    coins: set[tuple[int, int]] = field(default_factory=set)
    goombas: list[int] = field(default_factory=list)
    start: int = 2
    flag: int | None = None

    def ground(self, c0: int, c1: int) -> None:
        for c in range(c0, c1 + 1):
            self.tiles[(c, GROUND)] = self.tiles[(c, GROUND + 1)] = "ground"

    def row(self, kind: str, r: int, c0: int, c1: int) -> None:
        for c in range(c0, c1 + 1):
            self.tiles[(c, r)] = kind

    def pipe(self, c: int, height: int) -> None:
        for r in range(GROUND - height, GROUND):
            self.tiles[(c, r)] = self.tiles[(c + 1, r)] = "pipe"

    def stairs(self, c: int, steps: int, up: bool = True) -> None:
        for i in range(steps):
            height = i + 1 if up else steps - i
            for r in range(GROUND - height, GROUND):
                self.tiles[(c + i, r)] = "block"

    def coin_row(self, r: int, c0: int, n: int) -> None:
        self.coins.update((c, r) for c in range(c0, c0 + n))

    def walls(self) -> None:
        """Solid columns at both ends, for the one-screen stages."""
        for r in range(ROWS - 1):
            self.tiles[(0, r)] = self.tiles[(self.width - 1, r)] = "block"

    def mirrored(self) -> Stage:
        flip = self.width - 1
        return Stage(self.width, {(flip - c, r): k for (c, r), k in self.tiles.items()},
                     {(flip - c, r) for c, r in self.coins}, [flip - c for c in self.goombas],
                     flip - self.start, None if self.flag is None else flip - self.flag)


def _common(s: int, enemies: int) -> Stage:
    st = Stage(44, start=2, flag=40)
    st.ground(0, 21 + s)
    st.ground(24 + s, 43)
    st.tiles[(9 + s, 9)] = st.tiles[(29 - s, 9)] = "box"
    st.row("brick", 9, 10 + s, 11 + s)
    st.coin_row(GROUND - 1, 14 + s, 3)
    st.coins.update({(21 + s, 10), (22 + s, 9), (23 + s, 10)})  # an arc over the pit
    if enemies:
        st.pipe(33, 2)
        st.goombas += [18 + s, 37][:enemies]
    return st


def _two_ways(s: int, enemies: int) -> Stage:
    st = Stage(72, start=2, flag=68)
    st.ground(0, 71)
    for c0, c1 in ((30 + s, 31 + s), (50 - s, 51 - s)):  # pits on the lower way
        for c in range(c0, c1 + 1):
            del st.tiles[(c, GROUND)], st.tiles[(c, GROUND + 1)]
    st.stairs(10, 4)  # up to the upper way
    st.row("brick", 9, 14, 27)
    st.row("brick", 9, 31, 44)
    st.row("brick", 9, 48, 58)
    st.stairs(59, 4, up=False)
    st.coin_row(8, 16 + s, 3)
    st.coin_row(8, 34 + s, 3)
    st.coin_row(8, 50 + s, 3)  # 9 up
    st.coin_row(GROUND - 1, 18 - s, 3)
    st.coin_row(GROUND - 1, 38 - s, 3)
    st.coin_row(GROUND - 1, 64, 2)  # 8 down
    st.tiles[(22 + s, 5)] = st.tiles[(40 + s, 5)] = "box"  # over the upper way
    st.tiles[(7, 9)] = st.tiles[(65 - s, 9)] = "box"  # over the ground before and after
    st.goombas += [24, 42][:enemies]
    return st


def _left_or_right(level: int, s: int, mirror: bool) -> Stage:
    st = Stage(20, start=10)
    st.ground(0, 19)
    st.walls()
    if level == 5:  # coins on the right behind Goombas, a few on the left
        st.coin_row(GROUND - 1, 14, 4)
        st.coin_row(9, 15, 2)
        st.coin_row(GROUND - 1, 3, 2)
        st.goombas += [13, 16, 4]
    elif level == 6:  # many on one side, on the floor and on a ledge
        st.coin_row(GROUND - 1, 13, 5)
        st.row("brick", 10, 14, 17)
        st.coin_row(9, 14, 4)
        st.coin_row(GROUND - 1, 3, 4)
    else:  # pits on both sides; the coins sit over and past them
        for c in (6, 7, 13, 14):
            del st.tiles[(c, GROUND)], st.tiles[(c, GROUND + 1)]
        st.coin_row(10, 13, 2)
        st.coin_row(GROUND - 1, 15, 4)
        st.coin_row(GROUND - 1, 3, 2)
    st.start += s  # Mario a tile off the middle, or on it
    return st.mirrored() if mirror else st


def _jump_only(s: int) -> Stage:
    st = Stage(64, start=2, flag=60)
    st.ground(0, 63)
    for c in (12, 24, 36, 48):  # a pit every twelve tiles, an arc of three coins over each
        c += s
        del st.tiles[(c, GROUND)], st.tiles[(c, GROUND + 1)], st.tiles[(c + 1, GROUND)], st.tiles[(c + 1, GROUND + 1)]
        st.coins.update({(c - 1, 10), (c, 9), (c + 2, 10)})
    return st


def _jump_and_enemy(s: int) -> Stage:
    st = Stage(72, start=2, flag=68)
    st.ground(0, 71)
    for c, h in ((12, 2), (24, 3), (38, 2), (52, 3)):
        st.pipe(c + s, h)
        st.coin_row(GROUND - h - 2, c + s, 2)
    st.goombas += [18, 31, 34, 45, 58]
    return st


def _classic(s: int) -> Stage:
    st = Stage(212, start=3, flag=204)
    st.ground(0, 68)
    st.ground(71, 86)
    st.ground(90, 151)
    st.ground(154, 211)
    st.tiles[(16, 9)] = "box"
    st.row("brick", 9, 20, 24)
    st.tiles[(21, 9)] = st.tiles[(23, 9)] = "box"
    st.tiles[(22, 5)] = "box"
    for c, h in ((28, 2), (38, 3), (46, 4), (57, 4)):
        st.pipe(c, h)
    st.row("brick", 9, 77, 79)
    st.tiles[(78, 9)] = "box"
    st.row("brick", 5, 80, 87)
    st.row("brick", 5, 91, 93)
    st.tiles[(94, 5)] = "box"
    st.tiles[(94, 9)] = "brick"  # to stand on under that box: every box can be bumped
    st.tiles[(106, 9)] = st.tiles[(109, 9)] = st.tiles[(112, 9)] = "box"
    st.row("brick", 9, 118, 118)
    st.row("brick", 5, 121, 123)
    st.stairs(134, 4)
    st.stairs(140, 4, up=False)
    st.stairs(148, 4)
    st.stairs(156, 4, up=False)
    st.pipe(163, 2)
    st.pipe(179, 2)
    st.stairs(181, 8)
    st.stairs(189, 1)
    for r in range(GROUND - 8, GROUND - 1):
        st.tiles[(189, r)] = "block"
    st.goombas += [22 + s, 40, 51, 53, 80 - s, 82, 97, 99, 114, 116, 125, 127]
    return st


def build(level: int, rng: random.Random) -> Stage:
    """Level ``level``'s stage for this round: ``rng`` (seeded by the round) picks the shift."""
    s = rng.choice((-1, 0, 1))
    if level in (1, 2):
        return _common(s, 0 if level == 1 else 2)
    if level in (3, 4):
        return _two_ways(s, 0 if level == 3 else 2)
    if level in (5, 6, 7):
        return _left_or_right(level, s, rng.random() < 0.5)
    if level == 8:
        return _jump_only(s)
    if level == 9:
        return _jump_and_enemy(s)
    return _classic(s)


class MarioRules(Game):
    name = "supermario"
    size = (WIDTH, HEIGHT)
    levels: ClassVar[dict[int, Level]] = LEVELS

    def __init__(self, level: int, seed: int) -> None:
        super().__init__(level, seed)
        self.stage = build(self.level.level, self.rng)
        self.tiles = dict(self.stage.tiles)  # boxes turn into used blocks as they are bumped
        self.coins = set(self.stage.coins)
        w, h = MARIO_SIZE
        self.mario = Body(self.stage.start * TILE + (TILE - w) / 2, GROUND * TILE - h, w, h, on_ground=True)
        self.facing = 1
        self.goombas = [Goomba(Body(c * TILE + 2, GROUND * TILE - GOOMBA_SIZE[1], *GOOMBA_SIZE, vx=-GOOMBA_SPEED))
                        for c in self.stage.goombas]
        self.points = 0
        self.coins_taken = 0
        self.boxes_hit = 0
        self.stomped = 0
        self.jumps = 0

    # the tiles ------------------------------------------------------------------------------------
    def solid(self, c: int, r: int) -> bool:
        if c < 0 or c >= self.stage.width:
            return True  # the stage's ends are walls
        return self.tiles.get((c, r)) in SOLID

    def _move(self, b: Body) -> tuple[bool, list[tuple[int, int]]]:
        """Move ``b`` by its speed, x then y, stopping at solid tiles; returns whether it hit a
        wall sideways and the cells its head bumped."""
        hit_wall, bumped = False, []
        b.x += b.vx
        r0, r1 = math.floor(b.y / TILE), math.floor((b.y + b.h - 0.01) / TILE)
        if b.vx > 0:
            c = math.floor((b.x + b.w - 0.01) / TILE)
            if any(self.solid(c, r) for r in range(r0, r1 + 1)):
                b.x, b.vx, hit_wall = c * TILE - b.w, 0.0, True
        elif b.vx < 0:
            c = math.floor(b.x / TILE)
            if any(self.solid(c, r) for r in range(r0, r1 + 1)):
                b.x, b.vx, hit_wall = (c + 1) * TILE, 0.0, True
        b.y += b.vy
        c0, c1 = math.floor(b.x / TILE), math.floor((b.x + b.w - 0.01) / TILE)
        b.on_ground = False
        if b.vy > 0:
            r = math.floor((b.y + b.h - 0.01) / TILE)
            if any(self.solid(c, r) for c in range(c0, c1 + 1)) and r < ROWS:
                b.y, b.vy, b.on_ground = r * TILE - b.h, 0.0, True
        elif b.vy < 0:
            r = math.floor(b.y / TILE)
            cells = [(c, r) for c in range(c0, c1 + 1) if r >= 0 and self.solid(c, r)]
            if cells:
                b.y, b.vy, bumped = (r + 1) * TILE, 0.0, cells
        return hit_wall, bumped

    # logic ------------------------------------------------------------------------------------------
    def tick(self, action: str) -> None:
        m = self.mario
        steer = 1 if action.endswith("RIGHT") else -1 if action.endswith("LEFT") else 0
        if action.startswith("UP") and m.on_ground:
            m.vy, m.on_ground = -JUMP_SPEED, False
            self.jumps += 1
        if steer:
            accel = ACCEL if m.on_ground else AIR_ACCEL
            m.vx = max(-RUN_SPEED, min(RUN_SPEED, m.vx + steer * accel))
            self.facing = steer
        elif m.on_ground:
            m.vx = math.copysign(max(0.0, abs(m.vx) - FRICTION), m.vx)
        m.vy = min(MAX_FALL, m.vy + GRAVITY)
        prev_bottom = m.y + m.h
        _, bumped = self._move(m)
        if bumped:  # the box nearest Mario's middle is the one he hits
            c, r = min(bumped, key=lambda cell: abs((cell[0] + 0.5) * TILE - (m.x + m.w / 2)))
            if self.tiles.get((c, r)) == "box":
                self.tiles[(c, r)] = "used"
                self.boxes_hit += 1
                self._gain()
        self._take_coins()
        self._goombas(prev_bottom)
        if self.over:
            return
        if m.y > HEIGHT:
            self.end("Mario fell into a pit")
        elif self.stage.flag is not None and m.x + m.w >= self.stage.flag * TILE + TILE / 2 - 4:
            self.end("Mario reached the flagpole")

    def _gain(self) -> None:
        self.points += POINTS
        self.score = float(self.points)

    def _take_coins(self) -> None:
        m = self.mario
        for c in range(math.floor(m.x / TILE), math.floor((m.x + m.w - 0.01) / TILE) + 1):
            for r in range(math.floor(m.y / TILE), math.floor((m.y + m.h - 0.01) / TILE) + 1):
                if (c, r) in self.coins:
                    self.coins.discard((c, r))
                    self.coins_taken += 1
                    self._gain()

    def camera(self) -> float:
        """The view's left edge: Mario kept in the middle, the stage's ends never passed."""
        m = self.mario
        return max(0.0, min(self.stage.width * TILE - WIDTH, m.x + m.w / 2 - WIDTH / 2))

    def _goombas(self, prev_bottom: float) -> None:
        m, wake = self.mario, self.camera() + WIDTH + 2 * TILE  # a Goomba starts walking as it nears the view
        for g in self.goombas:
            if not g.alive:
                g.squashed = max(0, g.squashed - 1)
                continue
            b = g.body
            if b.x > wake:
                continue
            b.vy = min(MAX_FALL, b.vy + GRAVITY)
            heading = b.vx
            if self._move(b)[0]:
                b.vx = -heading  # turn round at a wall or pipe
            if b.y > HEIGHT:
                g.alive = False  # fell into a pit: no points
                continue
            if not m.rect.colliderect(b.rect):
                continue
            if m.vy > 0 and prev_bottom <= b.y + 10:
                g.alive, g.squashed = False, 10
                self.stomped += 1
                m.vy = -STOMP_BOUNCE
                self._gain()
            else:
                self.end("Mario ran into a Goomba")
                return

    # views ------------------------------------------------------------------------------------------
    def describe(self) -> str:
        m = self.mario
        col, row = (m.x + m.w / 2) / TILE, (m.y + m.h) / TILE
        near = lambda x: abs(x - col) <= 10  # noqa: E731
        coins = sorted(((c - col, GROUND - r) for c, r in self.coins if near(c + 0.5)), key=lambda d: abs(d[0]))[:4]
        goombas = [(g.body.x / TILE - col) for g in self.goombas if g.alive and near(g.body.x / TILE)]
        boxes = [c - col for (c, r), k in self.tiles.items() if k == "box" and near(c + 0.5)]
        pits = [c - col for c in range(math.floor(col) - 6, math.floor(col) + 7)
                if 0 <= c < self.stage.width and not self.solid(c, GROUND)]
        flag = "" if self.stage.flag is None else f" The flagpole is {self.stage.flag - col:+.0f} tiles away."
        return (f"Super Mario level {self.level.level}: Mario at column {col:.1f}, "
                f"{'on the ground' if m.on_ground else 'in the air'}, {GROUND - row:.1f} tiles above the floor, "
                f"moving {m.vx:+.1f} px per frame. Coins near (dx, height in tiles): "
                f"{', '.join(f'({dx:+.0f}, {h})' for dx, h in coins) or 'none'}. Goombas at dx "
                f"{', '.join(f'{d:+.1f}' for d in goombas) or 'none'}. Coin boxes at dx "
                f"{', '.join(f'{d:+.0f}' for d in boxes) or 'none'}. Pits at dx "
                f"{', '.join(f'{d:+.0f}' for d in pits) or 'none'}.{flag} Score {self.points}.")

    def state(self) -> dict[str, Any]:
        m = self.mario
        return {"x": m.x, "y": m.y, "vx": m.vx, "vy": m.vy, "on_ground": m.on_ground, "points": self.points,
                "coins_taken": self.coins_taken, "boxes_hit": self.boxes_hit, "stomped": self.stomped,
                "coins_left": len(self.coins), "goombas_alive": sum(g.alive for g in self.goombas),
                "jumps": self.jumps, "camera": self.camera()}
