"""What the robot's camera shows: the one rule the renderer draws and the actions check.

VAB labels (and so lets the agent name) only what its camera's segmentation sees. Without a
renderer-in-the-loop this is decided from the plan: the agent's room, a 90-degree field of view
along its heading (anything within ``NEAR`` metres shows regardless), and the camera height, which
is what makes ``raise_camera``/``lower_camera`` matter: things under furniture show only from the
lowest height, things on a surface above the camera only from the highest. Things shut inside a
closed container never show; the fridge's inside shows through ``get_fridge_view``. It runs every
step, so it is a single pass over the things with a small memo.
"""

from __future__ import annotations

import math

from .model import CAMERA_HEIGHTS, Household, Thing
from .placement import carried_with, is_floor, planar_distance

HALF_FOV = math.radians(45.0)
NEAR = 0.5
FRIDGE_VIEW_REACH = 2.7  # VAB's distance for get_fridge_view
DIRECTIONS = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))  # heading 0..3, anticlockwise from +x


def in_field(hh: Household, t: Thing) -> bool:
    """Whether any part of ``t``'s footprint lies within the field of view (or it is near)."""
    a = hh.agent
    b = t.box
    if planar_distance(a.x, a.y, b) <= NEAR:
        return True
    hx, hy = DIRECTIONS[a.heading % 4]
    for px, py in ((b.x, b.y), (b.x - b.w / 2, b.y - b.d / 2), (b.x + b.w / 2, b.y - b.d / 2),
                   (b.x - b.w / 2, b.y + b.d / 2), (b.x + b.w / 2, b.y + b.d / 2)):
        dx, dy = px - a.x, py - a.y
        dist = math.hypot(dx, dy)
        if dist > 1e-9 and (dx * hx + dy * hy) / dist >= math.cos(HALF_FOV) - 1e-9:
            return True
    return False


def visible(hh: Household) -> set[str]:
    """Names of the things the camera shows now (the held thing is "at hand", not in view)."""
    a = hh.agent
    top_camera = len(CAMERA_HEIGHTS) - 1
    memo: dict[str, bool] = {}

    def shows(t: Thing, depth: int = 0) -> bool:
        if t.name in memo:
            return memo[t.name]
        ok = t.room == a.room and t.name != a.holding and depth < 16
        if ok and is_floor(t):
            memo[t.name] = True
            return True
        ok = ok and in_field(hh, t)
        if ok and t.relation is not None:
            kind, target = t.relation
            support = hh.things[target]
            if kind == "under":
                ok = a.camera == 0
            elif kind == "ontop" and not is_floor(support):
                ok = (support.box.top <= a.camera_height or a.camera == top_camera) and shows(support, depth + 1)
            elif kind == "inside":
                ok = (not support.openable or support.is_open) and shows(support, depth + 1)
        memo[t.name] = ok
        return ok

    return {t.name for t in hh.things.values() if shows(t)}


def fridge_view_ok(hh: Household, fridge: Thing) -> str | None:
    """Why the fridge view cannot be had now, or None when it can."""
    if planar_distance(hh.agent.x, hh.agent.y, fridge.box) > FRIDGE_VIEW_REACH:
        return "far"
    if fridge.openable and not fridge.is_open:
        return "closed"
    return None


def fridge_view_visible(hh: Household, fridge: str) -> set[str]:
    """What a camera inside the open fridge shows: the fridge and what is in it, at any depth,
    except what is shut inside a closed container within it."""
    out = {fridge}
    for t in carried_with(hh, fridge):
        blocked = False
        u = t
        while u.relation is not None and u.relation[1] != fridge:
            up = hh.things[u.relation[1]]
            if u.relation[0] == "inside" and up.openable and not up.is_open:
                blocked = True
                break
            u = up
        if not blocked:
            out.add(t.name)
    return out


def observe(hh: Household, fridge: str | None = None) -> set[str]:
    """Take the observation: record what it shows as ``in_view`` and add it to ``seen``."""
    shown = fridge_view_visible(hh, fridge) if fridge is not None else visible(hh)
    hh.in_view = set(shown)
    hh.seen |= shown
    return shown
