"""Where things land on the agent's picture: a pinhole camera at the agent's eyes.

The renderer draws with it and the rules can ask it which things fall inside the frame, so the
labels on the picture and the objects the agent may name come from one projection. VAB's Fetch
camera looks about 13 degrees below the horizon (its starting quaternion points the optical axis
at -0.22 in z) and sits at one of three heights; both matter here, as they do there: a raised
camera sees the tops of tall furniture, a lowered one sees under tables.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nodes.game.household.model import FRAME_SIZE, Box, Household, Thing

Point = tuple[float, float, float]
Rect = tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels, x1/y1 exclusive

TILT = math.radians(13.0)
"""How far below the horizon the agent's camera looks (VAB's orientation gives about 12.8)."""

FIELD_OF_VIEW = math.radians(90.0)
"""Horizontal; the vertical one follows from the 16:9 frame (about 59 degrees)."""

FRIDGE_FIELD_OF_VIEW = math.radians(100.0)
"""Wider: VAB's fridge camera hangs 16 cm under the fridge's ceiling and must take in its shelves."""

FRIDGE_CAMERA_DROP = 0.16
NEAR = 0.03  # metres in front of the lens; closer geometry is cut away, not projected


@dataclass(frozen=True)
class Camera:
    """A pinhole at (x, y, z) looking along ``yaw`` (anticlockwise from +x) and ``pitch`` below
    the horizon, with square pixels and the principal point at the frame's centre."""

    x: float
    y: float
    z: float
    yaw: float
    pitch: float
    field_of_view: float = FIELD_OF_VIEW
    size: tuple[int, int] = FRAME_SIZE

    @property
    def focal(self) -> float:
        return self.size[0] / 2 / math.tan(self.field_of_view / 2)

    def to_view(self, p: Point) -> Point:
        """World -> camera coordinates: (right, up, forward)."""
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        cp, sp = math.cos(self.pitch), math.sin(self.pitch)
        dx, dy, dz = p[0] - self.x, p[1] - self.y, p[2] - self.z
        right = dx * sy - dy * cy
        ahead = dx * cy + dy * sy  # along the heading in plan
        return right, ahead * sp + dz * cp, ahead * cp - dz * sp

    def to_screen(self, v: Point) -> tuple[float, float]:
        """Camera coordinates (in front of the lens) -> pixel coordinates, y down."""
        f = self.focal
        return self.size[0] / 2 + f * v[0] / v[2], self.size[1] / 2 - f * v[1] / v[2]

    def polygon(self, points: Sequence[Point]) -> list[tuple[float, float]]:
        """A planar world polygon as pixels, cut at the near plane; empty when wholly behind."""
        return [self.to_screen(v) for v in clip_near([self.to_view(p) for p in points])]


def clip_near(poly: Sequence[Point]) -> list[Point]:
    """Keep the part of a camera-space polygon in front of ``NEAR`` (one Sutherland-Hodgman pass):
    a floor or a wall reaches behind the agent, and projecting those points would flip them."""
    out: list[Point] = []
    n = len(poly)
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        a_in, b_in = a[2] >= NEAR, b[2] >= NEAR
        if a_in:
            out.append(a)
        if a_in != b_in:
            t = (NEAR - a[2]) / (b[2] - a[2])
            out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), NEAR))
    return out


def corners(box: Box) -> list[Point]:
    hw, hd = box.w / 2, box.d / 2
    return [(box.x + sx * hw, box.y + sy * hd, z) for z in (box.z, box.top) for sy in (-1, 1) for sx in (-1, 1)]


_EDGES = [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)]


def agent_camera(hh: Household) -> Camera:
    a = hh.agent
    return Camera(a.x, a.y, a.camera_height, yaw=(a.heading % 4) * math.pi / 2, pitch=TILT)


def fridge_camera(hh: Household, fridge: Thing) -> Camera:
    """VAB's fridge view: from just under the fridge's ceiling, straight down onto the shelves.
    The picture's top points at the fridge's back so its open door is at the bottom edge."""
    b = fridge.box
    room = hh.rooms.get(fridge.room)
    fx, fy = facing(b, room.x0, room.y0, room.x1, room.y1) if room else (1, 0)
    return Camera(b.x, b.y, b.top - FRIDGE_CAMERA_DROP, yaw=math.atan2(-fy, -fx), pitch=math.pi / 2,
                  field_of_view=FRIDGE_FIELD_OF_VIEW)


def facing(box: Box, x0: float, y0: float, x1: float, y1: float) -> tuple[int, int]:
    """Which way a piece of furniture's front (its doors) points: towards the room's middle, as a
    unit axis. The model stores no orientation; furniture stands against walls, facing in."""
    dx, dy = (x0 + x1) / 2 - box.x, (y0 + y1) / 2 - box.y
    # normalise by the room's half-size so a long narrow room does not make everything face its ends
    nx, ny = dx / max((x1 - x0) / 2, 1e-6), dy / max((y1 - y0) / 2, 1e-6)
    if abs(nx) >= abs(ny):
        return (1 if nx >= 0 else -1), 0
    return 0, (1 if ny >= 0 else -1)


def screen_rect(camera: Camera, box: Box) -> tuple[float, float, float, float] | None:
    """The unclipped pixel bounds of a box (edges cut at the near plane), or None if all behind."""
    view = [camera.to_view(p) for p in corners(box)]
    xs: list[float] = []
    ys: list[float] = []
    for i, j in _EDGES:
        for v in clip_near([view[i], view[j]]):
            sx, sy = camera.to_screen(v)
            xs.append(sx)
            ys.append(sy)
    if not xs:
        return None
    return min(xs), min(ys), max(xs), max(ys)


def project(hh: Household, box: Box, camera: Camera | None = None) -> Rect | None:
    """A box's rectangle on the picture, clipped to the frame; None when behind or outside.
    ``camera`` defaults to the agent's."""
    cam = camera or agent_camera(hh)
    r = screen_rect(cam, box)
    if r is None:
        return None
    w, h = cam.size
    x0, y0 = max(0, math.floor(r[0])), max(0, math.floor(r[1]))
    x1, y1 = min(w, math.ceil(r[2])), min(h, math.ceil(r[3]))
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    return x0, y0, x1, y1


def boxes(hh: Household, names: Iterable[str], camera: Camera | None = None) -> dict[str, Rect]:
    """The on-picture rectangles of the named things that fall inside the frame, by name."""
    cam = camera or agent_camera(hh)
    out: dict[str, Rect] = {}
    for name in names:
        thing = hh.things.get(name)
        if thing is None:
            raise KeyError(f"household {hh.activity!r}: no thing named {name!r} to project")
        rect = project(hh, thing.box, cam)
        if rect is not None:
            out[name] = rect
    return out
