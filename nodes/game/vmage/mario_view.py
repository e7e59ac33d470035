"""SuperMario's picture: the stage around Mario, drawn in code from the tiles, with the dashboard.

The model must tell apart solid ground and bricks (brown), coin boxes (yellow with a "?", dull
once bumped), pipes (green), coins (gold), Goombas (brown, with eyes) and Mario (red cap, blue
overalls, facing the way he last steered), so each has its own colour and shape. The dashboard
across the top is the player's: points, coins, world (the level) and the frames left as TIME.
"""

from __future__ import annotations

import math

import pygame

from nodes.game.vmage.base import font
from nodes.game.vmage.mario_rules import GROUND, HEIGHT, ROWS, TILE, WIDTH, MarioRules

SKY = (104, 136, 252)
GROUND_C = (196, 98, 42)
GROUND_LINE = (120, 52, 18)
BRICK = (176, 80, 32)
BOX = (244, 184, 40)
USED = (140, 100, 60)
PIPE = (40, 176, 56)
PIPE_DARK = (16, 110, 30)
BLOCK = (160, 110, 80)
COIN = (252, 216, 64)
GOOMBA = (150, 76, 30)
RED = (220, 40, 30)
BLUE = (40, 60, 200)
SKIN = (250, 190, 140)
WHITE = (250, 250, 250)
BLACK = (10, 10, 10)


def _tile(surface: pygame.Surface, kind: str, x: int, y: int) -> None:
    r = pygame.Rect(x, y, TILE, TILE)
    if kind == "ground":
        surface.fill(GROUND_C, r)
        pygame.draw.rect(surface, GROUND_LINE, r, 2)
        pygame.draw.line(surface, GROUND_LINE, (x, y + TILE // 2), (x + TILE, y + TILE // 2), 2)
    elif kind == "brick":
        surface.fill(BRICK, r)
        pygame.draw.rect(surface, BLACK, r, 1)
        for dy in (TILE // 3, 2 * TILE // 3):
            pygame.draw.line(surface, BLACK, (x, y + dy), (x + TILE, y + dy), 1)
        pygame.draw.line(surface, BLACK, (x + TILE // 2, y), (x + TILE // 2, y + TILE // 3), 1)
    elif kind in ("box", "used"):
        surface.fill(BOX if kind == "box" else USED, r)
        pygame.draw.rect(surface, BLACK, r, 2)
        if kind == "box":
            mark = font(30).render("?", True, BRICK)
            surface.blit(mark, mark.get_rect(center=r.center))
    elif kind == "pipe":
        surface.fill(PIPE, r)
        pygame.draw.line(surface, PIPE_DARK, (x + 4, y), (x + 4, y + TILE), 3)
        pygame.draw.rect(surface, BLACK, r, 1)
    else:  # block: stairs and walls
        surface.fill(BLOCK, r)
        pygame.draw.rect(surface, GROUND_LINE, r, 3)


def _mario(surface: pygame.Surface, game: MarioRules, left: float) -> None:
    m = game.mario
    x, y = round(m.x - left), round(m.y)
    f = game.facing
    surface.fill(RED, (x + 2, y, m.w - 4, 7))  # cap
    surface.fill(RED, (x + (m.w - 4 if f > 0 else -6), y + 4, 10, 4))  # its peak, the way he faces
    surface.fill(SKIN, (x + 3, y + 7, m.w - 6, 8))  # face
    surface.fill(BLACK, (x + (m.w - 9 if f > 0 else 5), y + 9, 3, 3))  # eye
    surface.fill(RED, (x + 1, y + 15, m.w - 2, 6))  # shirt
    surface.fill(BLUE, (x + 3, y + 19, m.w - 6, 8))  # overalls
    step = (game.frame // 3) % 2 if m.on_ground and abs(m.vx) > 0.5 else 0
    surface.fill(GROUND_LINE, (x + 1 + 3 * step, y + m.h - 4, 8, 4))  # shoes
    surface.fill(GROUND_LINE, (x + m.w - 9 - 3 * step, y + m.h - 4, 8, 4))


def _goomba(surface: pygame.Surface, x: int, y: int, w: int, h: int, squashed: bool) -> None:
    if squashed:
        pygame.draw.ellipse(surface, GOOMBA, (x, y + h - 8, w, 8))
        return
    pygame.draw.ellipse(surface, GOOMBA, (x, y, w, h - 6))  # head
    surface.fill(SKIN, (x + 7, y + h - 10, w - 14, 6))  # body
    surface.fill(BLACK, (x + 2, y + h - 5, 10, 5))  # feet
    surface.fill(BLACK, (x + w - 12, y + h - 5, 10, 5))
    for ex in (x + 7, x + w - 11):
        surface.fill(WHITE, (ex, y + 6, 5, 7))
        surface.fill(BLACK, (ex + 2, y + 8, 2, 4))


def _dashboard(surface: pygame.Surface, game: MarioRules) -> None:
    text = font(30)
    left = game.level.max_rounds - game.frame if game.level.max_rounds else game.frame
    for x, top, bottom in ((24, "MARIO", f"{game.points:06d}"), (200, "COINS", f"x{game.coins_taken:02d}"),
                           (340, "WORLD", f"1-{game.level.level}"), (500, "TIME", f"{max(0, left) // 30:03d}")):
        surface.blit(text.render(top, True, WHITE), (x, 8))
        surface.blit(text.render(bottom, True, WHITE), (x, 30))


def draw_mario(game: MarioRules, surface: pygame.Surface) -> None:
    surface.fill(SKY)
    left = game.camera()
    c0 = math.floor(left / TILE)
    for c in range(c0, c0 + WIDTH // TILE + 2):
        for r in range(ROWS):
            kind = game.tiles.get((c, r))
            if kind is not None:
                _tile(surface, kind, round(c * TILE - left), r * TILE)
            if (c, r) in game.coins:
                cx, cy = round((c + 0.5) * TILE - left), (r * TILE) + TILE // 2
                pygame.draw.ellipse(surface, COIN, (cx - 8, cy - 12, 16, 24))
                pygame.draw.ellipse(surface, BRICK, (cx - 8, cy - 12, 16, 24), 2)
    flag = game.stage.flag
    if flag is not None:
        px = round((flag + 0.5) * TILE - left)
        pygame.draw.line(surface, WHITE, (px, 3 * TILE), (px, GROUND * TILE), 4)
        pygame.draw.polygon(surface, PIPE, [(px, 3 * TILE + 4), (px - 36, 3 * TILE + 18), (px, 3 * TILE + 32)])
        pygame.draw.circle(surface, PIPE_DARK, (px, 3 * TILE), 6)
    for g in game.goombas:
        if g.alive or g.squashed:
            b = g.body
            _goomba(surface, round(b.x - left), round(b.y), b.w, b.h, not g.alive)
    if game.mario.y < HEIGHT:
        _mario(surface, game, left)
    _dashboard(surface, game)
