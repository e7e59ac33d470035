"""The room around the agent: floor, walls, doorways to the rooms next door, and the colours of
each kind of room, so that a kitchen reads as a kitchen before any furniture is drawn.

Rooms are closed boxes seen from inside, so painting the floor and the walls over a background
of ceiling (or sky, out of doors) paints every pixel right; the furniture goes on top.
"""

from __future__ import annotations

import hashlib

from PIL import ImageDraw

from nodes.game.household.camera import NEAR, Camera, Point
from nodes.game.household.model import Household, Room

Color = tuple[int, int, int]

WALL_HEIGHT = 2.7
HEDGE_HEIGHT = 1.1  # out of doors the "walls" are a low hedge under the sky
DOOR_WIDTH = 0.9
DOOR_HEIGHT = 2.05
SHARED_EDGE = 0.05  # metres: rooms whose edges lie this close are neighbours

OUTDOOR = frozenset({"garden", "balcony", "patio", "porch", "terrace", "yard"})
CEILING: Color = (242, 240, 234)
SKY: Color = (172, 208, 236)

ROOM_COLORS: dict[str, tuple[Color, Color, str]] = {
    # kind: (floor, walls, floor pattern)
    "kitchen": ((196, 192, 182), (236, 226, 198), "tiles"),
    "pantry_room": ((186, 176, 154), (232, 226, 206), "tiles"),
    "bathroom": ((204, 214, 218), (220, 234, 240), "tiles"),
    "utility_room": ((182, 186, 190), (214, 224, 220), "tiles"),
    "living_room": ((158, 118, 84), (226, 216, 196), "planks"),
    "dining_room": ((148, 108, 74), (232, 212, 190), "planks"),
    "bedroom": ((172, 138, 108), (206, 216, 232), "planks"),
    "childs_room": ((188, 150, 110), (240, 222, 182), "planks"),
    "private_office": ((150, 120, 96), (214, 220, 208), "planks"),
    "home_office": ((150, 120, 96), (214, 220, 208), "planks"),
    "corridor": ((142, 132, 122), (226, 222, 212), "planks"),
    "storage_room": ((132, 132, 130), (202, 202, 196), "plain"),
    "garage": ((122, 122, 126), (186, 186, 182), "plain"),
    "garden": ((112, 160, 82), (72, 122, 62), "plain"),
}


def room_colors(kind: str) -> tuple[Color, Color, str]:
    """A known kind's colours, or stable ones made from the kind's name (not ``hash``: salted)."""
    if kind in ROOM_COLORS:
        return ROOM_COLORS[kind]
    d = hashlib.blake2s(kind.encode("utf-8"), digest_size=3).digest()
    floor = (110 + d[0] % 80, 100 + d[1] % 70, 90 + d[2] % 60)
    wall = (200 + d[1] % 45, 200 + d[2] % 45, 195 + d[0] % 45)
    return floor, wall, "plain"


def shade(c: Color, k: float) -> Color:
    return min(255, round(c[0] * k)), min(255, round(c[1] * k)), min(255, round(c[2] * k))


def background(room: Room) -> Color:
    return SKY if room.kind in OUTDOOR else CEILING


def segment(cam: Camera, p: Point, q: Point) -> list[tuple[float, float]]:
    """A world line segment as pixels, cut at the near plane; empty when wholly behind."""
    a, b = cam.to_view(p), cam.to_view(q)
    if a[2] < NEAR and b[2] < NEAR:
        return []
    if a[2] < NEAR or b[2] < NEAR:
        t = (NEAR - a[2]) / (b[2] - a[2])
        cut = (a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), NEAR)
        a, b = (cut, b) if a[2] < NEAR else (a, cut)
    return [cam.to_screen(a), cam.to_screen(b)]


def draw_room(draw: ImageDraw.ImageDraw, hh: Household, room: Room, cam: Camera) -> None:
    floor, wall, pattern = room_colors(room.kind)
    x0, y0, x1, y1 = room.x0, room.y0, room.x1, room.y1
    poly = cam.polygon([(x0, y0, 0.0), (x1, y0, 0.0), (x1, y1, 0.0), (x0, y1, 0.0)])
    if len(poly) >= 3:
        draw.polygon(poly, fill=floor)
    _floor_pattern(draw, room, cam, shade(floor, 0.88), pattern)
    height = HEDGE_HEIGHT if room.kind in OUTDOOR else WALL_HEIGHT
    walls = [((x0, y0), (x1, y0), 0.86), ((x1, y0), (x1, y1), 0.95), ((x1, y1), (x0, y1), 0.80),
             ((x0, y1), (x0, y0), 0.90)]
    for (ax, ay), (bx, by), k in walls:
        poly = cam.polygon([(ax, ay, 0.0), (bx, by, 0.0), (bx, by, height), (ax, ay, height)])
        if len(poly) >= 3:
            draw.polygon(poly, fill=shade(wall, k), outline=shade(wall, 0.62), width=2)
    for door in doorways(hh, room):
        _doorway(draw, cam, door, min(DOOR_HEIGHT, height))


def _floor_pattern(draw: ImageDraw.ImageDraw, room: Room, cam: Camera, color: Color, pattern: str) -> None:
    """Tile joints or plank seams: lines that converge show the floor's depth at a glance."""
    if pattern == "plain":
        return
    step_x, step_y = (0.6, 0.6) if pattern == "tiles" else (0.0, 0.22)
    lines: list[tuple[Point, Point]] = []
    if step_x:
        x = room.x0 + step_x
        while x < room.x1 - 1e-6:
            lines.append(((x, room.y0, 0.0), (x, room.y1, 0.0)))
            x += step_x
    y = room.y0 + step_y
    while y < room.y1 - 1e-6:
        lines.append(((room.x0, y, 0.0), (room.x1, y, 0.0)))
        y += step_y
    for p, q in lines:
        pts = segment(cam, p, q)
        if pts:
            draw.line(pts, fill=color, width=1)


Doorway = tuple[Point, Point, Color]  # the opening's two bottom corners and the colour beyond


def doorways(hh: Household, room: Room) -> list[Doorway]:
    """One doorway in the middle of each wall this room shares with another room (the model has
    no doors: VAB's move_to_room passes between any listed rooms, so a hint is all it needs)."""
    out: list[Doorway] = []
    for other in sorted(hh.rooms.values(), key=lambda r: r.name):
        if other.name == room.name:
            continue
        beyond = shade(room_colors(other.kind)[0], 0.55)
        for fixed, near, lo, hi in _shared(room, other):
            if hi - lo < DOOR_WIDTH + 0.2:
                continue
            mid = (lo + hi) / 2
            a, b = mid - DOOR_WIDTH / 2, mid + DOOR_WIDTH / 2
            if near == "x":
                out.append(((fixed, a, 0.0), (fixed, b, 0.0), beyond))
            else:
                out.append(((a, fixed, 0.0), (b, fixed, 0.0), beyond))
    return out


def _shared(a: Room, b: Room) -> list[tuple[float, str, float, float]]:
    """Edges of ``a`` lying on an edge of ``b``: (the fixed coordinate, which axis is fixed, the
    overlap's ends along the other axis)."""
    out = []
    for ea, eb in ((a.x1, b.x0), (a.x0, b.x1)):
        if abs(ea - eb) <= SHARED_EDGE:
            out.append((ea, "x", max(a.y0, b.y0), min(a.y1, b.y1)))
    for ea, eb in ((a.y1, b.y0), (a.y0, b.y1)):
        if abs(ea - eb) <= SHARED_EDGE:
            out.append((ea, "y", max(a.x0, b.x0), min(a.x1, b.x1)))
    return out


def _doorway(draw: ImageDraw.ImageDraw, cam: Camera, door: Doorway, height: float) -> None:
    (ax, ay, _), (bx, by, _), beyond = door
    poly = cam.polygon([(ax, ay, 0.0), (bx, by, 0.0), (bx, by, height), (ax, ay, height)])
    if len(poly) >= 3:
        draw.polygon(poly, fill=beyond, outline=(96, 78, 60), width=4)
