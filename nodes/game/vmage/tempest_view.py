"""TempestRun's picture: the tunnel in perspective from just behind the runner, drawn in code.

The camera sits on the tunnel's axis a few units behind the runner and turns with it, so the
runner's lane is always the bottom panel and a turn shows as the whole tunnel rotating. Rings are
drawn every cell length out to the foresight, far to near, so nearer things cover farther ones;
what the model must tell apart is colour and shape: red spikes low on the floor, purple walls
standing up from it, green enemies with eyes. The distance score sits at the top left, as in the
released game.
"""

from __future__ import annotations

import math

import pygame

from nodes.game.vmage.base import font
from nodes.game.vmage.tempest_rules import (
    DEPTH,
    FORESIGHT,
    HEIGHT,
    LANE_ANGLE,
    LANES,
    RADIUS,
    WIDTH,
    Obstacle,
    TempestRules,
)

BEHIND = 30.0  # the camera's distance behind the runner
NEAR = 10.0  # nothing nearer the camera than this is drawn (it would be off the screen)
FOCAL = 800.0  # pixels per unit at one unit of depth
CENTRE = (WIDTH / 2, HEIGHT / 2)

BACKGROUND = (6, 4, 18)
PANEL = ((16, 20, 46), (30, 36, 72))
OWN_PANEL = (34, 44, 86)
NEON = (60, 220, 255)
SPIKE = (235, 40, 50)
WALL = (160, 60, 220)
WALL_EDGE = (220, 150, 255)
ENEMY = (60, 215, 90)
RUNNER = (255, 170, 40)
WHITE = (245, 245, 245)
BLACK = (10, 10, 10)


def project(angle: float, radius: float, depth: float) -> tuple[float, float]:
    """A point at ``angle`` (0 = straight down from the axis), ``radius`` from the axis and
    ``depth`` ahead of the camera, on the screen."""
    scale = FOCAL / max(depth, NEAR)
    return CENTRE[0] + radius * math.sin(angle) * scale, CENTRE[1] + radius * math.cos(angle) * scale


def _panel(angle: float, depth: float, lift: float = 0.0, shrink: float = 0.0) -> list[tuple[float, float]]:
    """The two floor corners of a lane centred at ``angle`` at ``depth``, raised by ``lift`` and
    narrowed by ``shrink`` of the lane's width on each side."""
    half = LANE_ANGLE / 2 * (1 - shrink)
    r = RADIUS - lift
    return [project(angle - half, r, depth), project(angle + half, r, depth)]


def draw_tempest(game: TempestRules, surface: pygame.Surface) -> None:
    surface.fill(BACKGROUND)
    camera = game.z - BEHIND
    first_ring = math.floor(camera / game.cell) * game.cell
    rings = [first_ring + k * game.cell for k in range(int(FORESIGHT / game.cell) + 3)]
    rings = [z for z in rings if camera + NEAR <= z <= game.z + FORESIGHT] or [game.z]
    near, far = camera + NEAR, rings[-1]
    edges = [near] + [z for z in rings if z > near]
    seams = [(i + 0.5) * LANE_ANGLE - game.angle for i in range(LANES)]  # seam i: between lanes i and i + 1
    corners = {z: [project(angle, RADIUS, z - camera) for angle in seams] for z in edges}
    for a, b in reversed(list(zip(edges, edges[1:]))):  # the floor panels between rings, far to near
        front, back = corners[a], corners[b]
        for lane in range(LANES):
            colour = OWN_PANEL if lane == game.lane else PANEL[(lane + round(b / game.cell)) % 2]
            pygame.draw.polygon(surface, colour, [front[lane - 1], front[lane], back[lane], back[lane - 1]])
    for z in reversed(rings):  # the neon rings
        if z > near:
            pygame.draw.polygon(surface, NEON, corners[z], 2 if z - camera < 40 else 1)
    for i in range(LANES):  # the seams between lanes, from the nearest ring to the farthest
        pygame.draw.line(surface, NEON, corners[near][i], corners[far][i] if far in corners else corners[near][i], 1)
    drawn = sorted((o for o in game.obstacles if not o.kicked and o.z + DEPTH > near and o.z < game.z + FORESIGHT),
                   key=lambda o: -o.z)
    runner_drawn = False
    for o in drawn:
        if not runner_drawn and o.z < game.z:
            _runner(game, surface)
            runner_drawn = True
        _obstacle(surface, o, o.lane * LANE_ANGLE - game.angle, o.z - camera)
    if not runner_drawn:
        _runner(game, surface)
    text = font(56).render(f"{game.score:g}", True, WHITE)
    surface.blit(font(56).render(f"{game.score:g}", True, BLACK), (22, 18))
    surface.blit(text, (20, 16))


def _obstacle(surface: pygame.Surface, o: Obstacle, angle: float, depth: float) -> None:
    if o.kind == "spike":
        left, right = _panel(angle, depth, shrink=0.1)
        for k in range(3):  # three teeth across the lane
            a = (left[0] + (right[0] - left[0]) * k / 3, left[1] + (right[1] - left[1]) * k / 3)
            b = (left[0] + (right[0] - left[0]) * (k + 1) / 3, left[1] + (right[1] - left[1]) * (k + 1) / 3)
            tip_angle = angle + LANE_ANGLE * 0.9 * ((k + 0.5) / 3 - 0.5)
            tip = project(tip_angle, RADIUS - 1.2, depth)
            pygame.draw.polygon(surface, SPIKE, [a, b, tip])
    elif o.kind == "wall":
        base = _panel(angle, depth, shrink=0.05)
        top = _panel(angle, depth, lift=5.0, shrink=0.05)
        face = [base[0], base[1], top[1], top[0]]
        pygame.draw.polygon(surface, WALL, face)
        pygame.draw.polygon(surface, WALL_EDGE, face, 2)
    else:
        x, y = project(angle, RADIUS - 1.3, depth)
        r = max(2, round(1.2 * FOCAL / max(depth, NEAR)))
        pygame.draw.circle(surface, ENEMY, (round(x), round(y)), r)
        eye = max(1, r // 4)
        for side in (-1, 1):
            pygame.draw.circle(surface, WHITE, (round(x + side * r * 0.4), round(y - r * 0.2)), eye)
            pygame.draw.circle(surface, BLACK, (round(x + side * r * 0.4), round(y - r * 0.2)), max(1, eye // 2))


def _runner(game: TempestRules, surface: pygame.Surface) -> None:
    """The runner at the bottom of the view: upright, flat on a slide, or raised in a jump."""
    tilt = game.angle - game.floor_lane * LANE_ANGLE  # a turn shows as the runner leaning off-centre
    tilt = (tilt + math.pi) % (2 * math.pi) - math.pi
    scale = FOCAL / BEHIND
    foot_x, foot_y = project(-tilt, RADIUS - game.height, BEHIND)
    if game.ducking:
        w, h = 2.0 * scale, 0.8 * scale
    else:
        w, h = 1.0 * scale, 2.4 * scale
    body = pygame.Rect(0, 0, round(w), round(h))
    body.midbottom = (round(foot_x), round(foot_y))
    if game.airborne:  # the shadow stays on the floor
        sx, sy = project(-tilt, RADIUS, BEHIND)
        pygame.draw.ellipse(surface, BLACK, (sx - w / 2, sy - 8, w, 16))
    pygame.draw.rect(surface, RUNNER, body, border_radius=round(min(w, h) / 3))
    head = round(0.45 * scale)
    hx, hy = (body.right - head, body.top + head) if game.ducking else (body.centerx, body.top - head + 4)
    pygame.draw.circle(surface, RUNNER, (hx, hy), head)
    pygame.draw.circle(surface, WHITE, (hx, hy), head, 3)
