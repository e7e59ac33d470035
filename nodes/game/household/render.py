"""The agent's picture: its room in perspective, every thing in it as shaded boxes, and VAB's
marks (an outline and an "{id}.{category}" tag) on the named things it can see.

Drawing is a painter's algorithm over the boxes of ``shapes.parts``: two boxes whose pictures
overlap are ordered by a plane that separates them (the one on the camera's side is in front),
which is exact for boxes that do not interpenetrate, and by distance otherwise. Everything is
integer pixels from deterministic arithmetic, so one household gives one PNG, byte for byte.
"""

from __future__ import annotations

import heapq
import io
import math
from collections.abc import Collection

import numpy as np
from PIL import Image, ImageDraw

from nodes.game.household.camera import (
    Camera,
    Rect,
    agent_camera,
    clip_near,
    corners,
    fridge_camera,
    project,
    screen_rect,
)
from nodes.game.household.labels import draw_marks
from nodes.game.household.model import Box, Household, Thing
from nodes.game.household.scene import background, draw_room, shade
from nodes.game.household.shapes import Part, drawn, hidden, parts, room_of

# corner indices (see camera.corners) of each face, with the face's outward axis and its light
_FACES: list[tuple[tuple[int, int, int], tuple[int, int, int, int], float]] = [
    ((0, 0, 1), (4, 5, 7, 6), 1.00), ((0, 0, -1), (0, 1, 3, 2), 0.50),
    ((1, 0, 0), (1, 3, 7, 5), 0.80), ((-1, 0, 0), (0, 2, 6, 4), 0.68),
    ((0, 1, 0), (2, 3, 7, 6), 0.88), ((0, -1, 0), (0, 1, 5, 4), 0.74),
]
_EPS = 1e-6
MIN_PIXELS = 48  # a thing showing less than this gets no mark (a sliver past a table's edge)
_STRIDE = 2  # the marks read every second pixel of the owner picture each way


def frame(hh: Household, visible: Collection[str]) -> Image.Image:
    """The egocentric view: the agent's room from its camera, with the marks of ``visible``."""
    cam = agent_camera(hh)
    return _picture(hh, hh.agent.room, cam, visible)


def fridge_frame(hh: Household, fridge_name: str, visible: Collection[str]) -> Image.Image:
    """VAB's get_fridge_view: from inside the open fridge, down onto its shelves and contents.
    Only what is inside the fridge is marked: the fridge itself would be one frame-sized box, and
    what lies outside it is behind its walls (the marks do not test occlusion)."""
    fridge = hh.things.get(fridge_name)
    if fridge is None:
        raise KeyError(f"household {hh.activity!r}: no thing named {fridge_name!r} for the fridge view")
    if not (fridge.openable and fridge.is_open):
        raise ValueError(f"fridge view of {fridge_name!r}: it must be an open openable thing "
                         f"(openable={fridge.openable}, is_open={fridge.is_open})")
    inside = {t.name for t in hh.things.values() if _within(hh, t, fridge_name)}
    return _picture(hh, fridge.room, fridge_camera(hh, fridge), [n for n in visible if n in inside])


def _within(hh: Household, thing: Thing, holder: str) -> bool:
    """``thing`` lies inside ``holder``, directly or inside something inside it."""
    seen: set[str] = set()
    rel = thing.relation
    while rel is not None and rel[1] not in seen:
        if rel[0] == "inside" and rel[1] == holder:
            return True
        seen.add(rel[1])
        nxt = hh.things.get(rel[1])
        rel = nxt.relation if nxt is not None else None
    return False


def render(hh: Household, visible: Collection[str], fridge: str | None = None) -> np.ndarray:
    """What the env node hands the kernel, as the other game packs do: an RGB uint8 array."""
    img = frame(hh, visible) if fridge is None else fridge_frame(hh, fridge, visible)
    return np.asarray(img, dtype=np.uint8)


def encode(img: Image.Image) -> bytes:
    """PNG bytes (no timestamps or other metadata, so equal pictures give equal bytes)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _picture(hh: Household, room_name: str, cam: Camera, visible: Collection[str]) -> Image.Image:
    room = room_of(hh, room_name)
    img = Image.new("RGB", cam.size, background(room))
    draw = ImageDraw.Draw(img, "RGBA")
    draw_room(draw, hh, room, cam)
    things = drawn(hh, room.name)
    # beside the picture, which thing each pixel shows (0: none), drawn in the same order: the
    # marks come from it as VAB's come from the camera's segmentation, so a thing hidden behind
    # furniture gets no box, and a partly hidden one a box round what shows of it
    owners = Image.new("I", cam.size, 0)
    paint = ImageDraw.Draw(owners)
    index: dict[str, int] = {}
    for part in _painter_order([p for t in things for p in parts(hh, t)], cam):
        for pts, light, normal in _faces(cam, part):
            fill = shade(part.color, light)
            draw.polygon(pts, fill=(*fill, part.alpha), outline=(*shade(part.color, light * 0.6), 255))
            if part.alpha == 255:  # glass does not hide what is behind it
                paint.polygon(pts, fill=index.setdefault(part.owner, len(index) + 1))
            if part.front is not None and normal[:2] == part.front:
                _door_marks(draw, cam, part.box, part)
    draw_marks(draw, _marks(hh, room.name, cam, visible, np.asarray(owners), index), cam.size)
    return img


def _marks(hh: Household, room: str, cam: Camera, visible: Collection[str], owners: np.ndarray,
           index: dict[str, int]) -> list[tuple[int, str, Rect]]:
    """Visible named things that show on the picture (in this room, not shut away or in the hand,
    at least ``MIN_PIXELS`` of them in sight), each boxed round the pixels that show it. A thing
    drawn with no solid part (a floor) keeps the box of its outline."""
    out: list[tuple[int, str, Rect]] = []
    coarse = owners[::_STRIDE, ::_STRIDE]
    for name in sorted(set(visible)):
        thing = hh.things.get(name)
        if thing is None:
            raise KeyError(f"household {hh.activity!r}: visible names {name!r}, which is not a thing of the scene")
        if thing.id is None or thing.room != room or hidden(hh, thing):
            continue
        if name not in index:
            rect = project(hh, thing.box, cam)
            if rect is not None:
                out.append((thing.id, thing.label, rect))
            continue
        mask = coarse == index[name]
        if int(mask.sum()) * _STRIDE * _STRIDE < MIN_PIXELS:
            continue
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        w, h = cam.size
        out.append((thing.id, thing.label, (int(cols[0]) * _STRIDE, int(rows[0]) * _STRIDE,
                                            min(w, (int(cols[-1]) + 1) * _STRIDE),
                                            min(h, (int(rows[-1]) + 1) * _STRIDE))))
    return sorted(out)


def _painter_order(items: list[Part], cam: Camera) -> list[Part]:
    """Far to near. Kahn's sort over 'is behind' between parts whose pictures overlap, always
    taking the farthest ready part; a cycle (interpenetrating boxes) is broken at its farthest."""
    w, h = cam.size
    rects: list[tuple[float, float, float, float]] = []
    keep: list[Part] = []
    for part in items:
        r = screen_rect(cam, part.box)
        if r is None or r[2] < 0 or r[3] < 0 or r[0] > w or r[1] > h:
            continue
        keep.append(part)
        rects.append(r)
    n = len(keep)
    depth = [-_distance(cam, p.box) for p in keep]  # heap pops the farthest first
    behind: list[list[int]] = [[] for _ in range(n)]  # behind[i]: parts to draw after i
    indeg = [0] * n
    for i in range(n):
        for j in range(i + 1, n):
            a, b = rects[i], rects[j]
            if a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]:
                continue
            front = _in_front(keep[i].box, keep[j].box, cam)
            if front is None:
                continue
            first, then = (j, i) if front else (i, j)
            behind[first].append(then)
            indeg[then] += 1
    ready = [(depth[i], i) for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    done = [False] * n
    out: list[Part] = []
    while len(out) < n:
        if ready:
            _, i = heapq.heappop(ready)
        else:
            i = min((k for k in range(n) if not done[k]), key=lambda k: (depth[k], k))
        if done[i]:
            continue
        done[i] = True
        out.append(keep[i])
        for k in behind[i]:
            indeg[k] -= 1
            if indeg[k] == 0 and not done[k]:
                heapq.heappush(ready, (depth[k], k))
    return out


def _distance(cam: Camera, b: Box) -> float:
    """From the lens to the box's nearest point."""
    dx = max(b.x - b.w / 2 - cam.x, 0.0, cam.x - b.x - b.w / 2)
    dy = max(b.y - b.d / 2 - cam.y, 0.0, cam.y - b.y - b.d / 2)
    dz = max(b.z - cam.z, 0.0, cam.z - b.top)
    return math.sqrt(dx * dx + dy * dy + dz * dz)


def _span(b: Box, axis: int) -> tuple[float, float]:
    if axis == 0:
        return b.x - b.w / 2, b.x + b.w / 2
    if axis == 1:
        return b.y - b.d / 2, b.y + b.d / 2
    return b.z, b.top


def _in_front(a: Box, b: Box, cam: Camera) -> bool | None:
    """True if ``a`` hides ``b`` where they overlap, False if the other way round, None if no
    axis-aligned plane separates them with the camera off the gap between them."""
    eye = (cam.x, cam.y, cam.z)
    for axis in (2, 0, 1):
        a0, a1 = _span(a, axis)
        b0, b1 = _span(b, axis)
        c = eye[axis]
        if a1 <= b0 + _EPS:  # a on the low side
            if c <= a1 - _EPS:
                return True
            if c >= b0 + _EPS:
                return False
        elif b1 <= a0 + _EPS:  # b on the low side
            if c <= b1 - _EPS:
                return False
            if c >= a0 + _EPS:
                return True
    return None


def _faces(cam: Camera, part: Part) -> list[tuple[list[tuple[float, float]], float, tuple[int, int, int]]]:
    """The faces of a part the camera sees: screen polygon, light, outward axis."""
    b = part.box
    view = [cam.to_view(p) for p in corners(b)]
    lo = (b.x - b.w / 2, b.y - b.d / 2, b.z)
    hi = (b.x + b.w / 2, b.y + b.d / 2, b.top)
    eye = (cam.x, cam.y, cam.z)
    out = []
    for normal, idx, light in _FACES:
        axis = 0 if normal[0] else 1 if normal[1] else 2
        if not (eye[axis] > hi[axis] if normal[axis] > 0 else eye[axis] < lo[axis]):
            continue
        poly = clip_near([view[k] for k in idx])
        if len(poly) >= 3:
            out.append(([cam.to_screen(v) for v in poly], light, normal))
    return out


def _door_marks(draw: ImageDraw.ImageDraw, cam: Camera, b: Box, part: Part) -> None:
    """A closed container's front: the seam round each door leaf and its handle."""
    assert part.front is not None
    fx, fy = part.front
    width = b.d if fx else b.w
    off = 0.003

    def at(u: float, v: float) -> tuple[float, float, float]:  # u across the front, v up it
        if fx:
            return b.x + fx * (b.w / 2 + off), b.y - fx * (u - 0.5) * width, b.z + v * b.h
        return b.x + fy * (u - 0.5) * width, b.y + fy * (b.d / 2 + off), b.z + v * b.h

    seam = (*shade(part.color, 0.45), 255)
    handle = (70, 70, 74, 255)
    gap_u, gap_v = min(0.02 / width, 0.1), min(0.02 / max(b.h, 1e-3), 0.1)
    leaves = max(1, part.doors)
    hv = (0.45, 0.6) if b.h > 1.2 else (0.62, 0.85) if b.h > 0.45 else (0.7, 0.85)
    for k in range(leaves):
        u0, u1 = k / leaves + gap_u, (k + 1) / leaves - gap_u
        quad = [at(u0, gap_v), at(u1, gap_v), at(u1, 1 - gap_v), at(u0, 1 - gap_v)]
        pts = cam.polygon(quad)
        if len(pts) >= 3:
            draw.polygon(pts, outline=seam, width=2)
        hu = u1 - 0.06 / width if (leaves == 1 or k == 0) else u0 + 0.06 / width
        bar = cam.polygon([at(hu - 0.012 / width, hv[0]), at(hu + 0.012 / width, hv[0]),
                           at(hu + 0.012 / width, hv[1]), at(hu - 0.012 / width, hv[1])])
        if len(bar) >= 3:
            draw.polygon(bar, fill=handle)

