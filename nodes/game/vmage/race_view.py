"""Race's pictures, drawn in code: the arena, the car, the trophy, and the two cameras.

The spec describes what a player must see: a red car with a visible front and back, a golden cup,
white lines for the walls (§2.1). The map view shows the whole 1024x768 arena. The car view
follows the car: the camera is centred on it at 3/4 scale, so the trophy is in sight from the
start of each car-view layout, while the picture is not turned with the car: the car's nose shows
where it faces, and the player must imagine the driver's left and right (V-MAGE's car prompt asks
exactly that). There is no HUD: V-MAGE's Race frames carry no text.
"""

from __future__ import annotations

import math

import pygame

from nodes.game.vmage.race_rules import ARENA, CAR_LENGTH, CAR_WIDTH, HEIGHT, TROPHY_RADIUS, WIDTH, RaceRules

CAR_SCALE = 0.75  # the car view's zoom

GRASS = (58, 122, 62)
GRASS_DARK = (50, 108, 54)
ASPHALT = (86, 88, 94)
LINE = (245, 245, 245)
BLOCK = (214, 90, 40)
BLOCK_EDGE = (250, 240, 230)
CAR = (210, 30, 36)
GLASS = (150, 200, 235)
TAIL = (255, 210, 60)
GOLD = (240, 190, 40)
GOLD_DARK = (170, 120, 20)

_car_sprite: pygame.Surface | None = None
_static: dict[tuple[object, float], pygame.Surface] = {}  # the newest layout's still picture, per scale


def car_sprite() -> pygame.Surface:
    """The car pointing up: a windscreen at the front, dark rear window and yellow lights behind."""
    global _car_sprite
    if _car_sprite is None:
        s = pygame.Surface((CAR_WIDTH, CAR_LENGTH), pygame.SRCALPHA)
        pygame.draw.rect(s, CAR, (0, 0, CAR_WIDTH, CAR_LENGTH), border_radius=9)
        pygame.draw.polygon(s, (240, 240, 240), [(CAR_WIDTH // 2, 2), (6, 12), (CAR_WIDTH - 6, 12)])  # the nose
        pygame.draw.rect(s, GLASS, (5, 14, CAR_WIDTH - 10, 12), border_radius=3)  # the windscreen
        pygame.draw.rect(s, (60, 60, 70), (6, 38, CAR_WIDTH - 12, 8), border_radius=2)  # the rear window
        for x in (3, CAR_WIDTH - 9):
            pygame.draw.rect(s, TAIL, (x, CAR_LENGTH - 5, 6, 4))
        for y in (8, CAR_LENGTH - 18):  # wheels
            pygame.draw.rect(s, (20, 20, 20), (0, y, 3, 10))
            pygame.draw.rect(s, (20, 20, 20), (CAR_WIDTH - 3, y, 3, 10))
        _car_sprite = s
    return _car_sprite


def draw_trophy(surface: pygame.Surface, x: float, y: float) -> None:
    r = TROPHY_RADIUS
    cx, cy = round(x), round(y)
    pygame.draw.circle(surface, (255, 245, 200), (cx, cy), round(r))  # a pale disc: the area to touch
    cup = [(cx - 16, cy - 20), (cx + 16, cy - 20), (cx + 10, cy + 2), (cx - 10, cy + 2)]
    pygame.draw.polygon(surface, GOLD, cup)
    pygame.draw.polygon(surface, GOLD_DARK, cup, 2)
    for side in (-1, 1):  # handles
        pygame.draw.circle(surface, GOLD_DARK, (cx + side * 17, cy - 12), 7, 3)
    pygame.draw.rect(surface, GOLD, (cx - 3, cy + 2, 6, 10))
    pygame.draw.rect(surface, GOLD_DARK, (cx - 11, cy + 12, 22, 7))


def still_world(game: RaceRules, scale: float) -> pygame.Surface:
    """Everything but the car, at ``scale``: drawn once per layout, since only the car moves."""
    key = ((round(game.trophy_x), round(game.trophy_y), *(tuple(r) for r in game.obstacles)), scale)
    surface = _static.get(key)
    if surface is None:
        surface = pygame.Surface((WIDTH, HEIGHT))
        surface.fill(GRASS)
        for x in range(0, WIDTH, 64):
            pygame.draw.rect(surface, GRASS_DARK, (x, 0, 32, HEIGHT))
        pygame.draw.rect(surface, ASPHALT, ARENA)
        pygame.draw.rect(surface, LINE, ARENA.inflate(12, 12), 6)
        for rect in game.obstacles:
            pygame.draw.rect(surface, BLOCK, rect)
            pygame.draw.rect(surface, BLOCK_EDGE, rect, 4)
            if rect.width > 40 and rect.height > 40:
                pygame.draw.line(surface, BLOCK_EDGE, rect.topleft, rect.bottomright, 4)
                pygame.draw.line(surface, BLOCK_EDGE, rect.topright, rect.bottomleft, 4)
        draw_trophy(surface, game.trophy_x, game.trophy_y)
        if scale != 1.0:
            surface = pygame.transform.smoothscale(surface, (round(WIDTH * scale), round(HEIGHT * scale)))
        for old in [k for k in _static if k[1] == scale]:
            del _static[old]
        _static[key] = surface
    return surface


def draw(game: RaceRules, surface: pygame.Surface) -> None:
    """The map view: the arena as it is; the car view: the arena at 3/4 scale moved under a
    camera that keeps the car in the middle of the window."""
    sprite = car_sprite()
    if game.view == "map":
        surface.blit(still_world(game, 1.0), (0, 0))
        centre = (round(game.x), round(game.y))
    else:
        surface.fill(GRASS_DARK)
        left = math.floor(WIDTH / 2 - game.x * CAR_SCALE)
        top = math.floor(HEIGHT / 2 - game.y * CAR_SCALE)
        surface.blit(still_world(game, CAR_SCALE), (left, top))
        sprite = pygame.transform.smoothscale(sprite, (round(CAR_WIDTH * CAR_SCALE), round(CAR_LENGTH * CAR_SCALE)))
        centre = (WIDTH // 2, HEIGHT // 2)
    turned = pygame.transform.rotate(sprite, game.heading - 90.0)
    surface.blit(turned, turned.get_rect(center=centre))
