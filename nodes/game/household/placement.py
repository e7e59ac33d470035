"""Where a thing can go: free spots on surfaces and floors, room inside containers, and carrying.

The initial state (``world.build``) and the agent's put actions (``actions.py``) must agree on what
"full" means and where a placed thing ends up, so both place things through these functions. A
thing's ``relation`` names its support; what rests on or inside it travels with it (``shift``).
Every function here either succeeds and changes the household, or returns ``False`` and changes
nothing, so a failed action can leave the world as it was.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from typing import Iterable

from .model import Box, Household, Thing

GAP = 0.04  # between things set side by side
FILL = 0.8  # share of a container's volume that things may take
HOLD_HEIGHT = 0.9  # where a carried thing rides


def volume(t: Thing) -> float:
    return t.box.w * t.box.d * t.box.h


def is_floor(t: Thing) -> bool:
    return t.category == "floor"


def floors_of(hh: Household, room: str) -> list[Thing]:
    return [t for t in hh.things.values() if is_floor(t) and t.room == room]


def resting_on(hh: Household, name: str, kinds: tuple[str, ...] = ("ontop", "inside")) -> list[Thing]:
    """The things whose support is ``name`` by one of ``kinds``."""
    return [t for t in hh.things.values() if t.relation is not None and t.relation[1] == name
            and t.relation[0] in kinds]


def carried_with(hh: Household, name: str) -> list[Thing]:
    """Everything resting on or inside ``name``, at any depth: it travels when ``name`` moves."""
    out, todo = [], [name]
    while todo:
        for t in resting_on(hh, todo.pop()):
            out.append(t)
            todo.append(t.name)
    return out


def shift(hh: Household, name: str, x: float, y: float, z: float, room: str) -> None:
    """Move ``name`` so its box sits at (x, y, z); what it carries moves by the same offset."""
    t = hh.things[name]
    dx, dy, dz = x - t.box.x, y - t.box.y, z - t.box.z
    for u in [t, *carried_with(hh, name)]:
        u.box = replace(u.box, x=round(u.box.x + dx, 3), y=round(u.box.y + dy, 3), z=round(u.box.z + dz, 3))
        u.room = room


def forget_neighbours(hh: Household, name: str) -> None:
    """A thing that moves is no longer next to what it was put beside (either way round)."""
    hh.things[name].nextto.clear()
    for t in hh.things.values():
        t.nextto.discard(name)


def enclosing(hh: Household, t: Thing) -> Iterable[Thing]:
    """The supports above ``t`` while it rests on or inside things (not the floor it stands on)."""
    seen = set()
    while t.relation is not None and t.relation[0] in ("ontop", "inside") and t.relation[1] not in seen:
        seen.add(t.relation[1])
        up = hh.things[t.relation[1]]
        yield t.relation[0], up
        t = up


def shut_in(hh: Household, t: Thing) -> Thing | None:
    """The closed container ``t`` is shut inside, if any (at any depth)."""
    for rel, up in enclosing(hh, t):
        if rel == "inside" and up.openable and not up.is_open:
            return up
    return None


def footprint_overlap(a: Box, b: Box) -> bool:
    return abs(a.x - b.x) * 2 < a.w + b.w - 1e-6 and abs(a.y - b.y) * 2 < a.d + b.d - 1e-6


def planar_distance(x: float, y: float, b: Box) -> float:
    """From a point to a box's footprint (0 inside it), as VAB's reach test measures."""
    dx = max(b.x - b.w / 2 - x, 0.0, x - (b.x + b.w / 2))
    dy = max(b.y - b.d / 2 - y, 0.0, y - (b.y + b.d / 2))
    return math.hypot(dx, dy)


def _fits(hh: Household, t: Thing, spot: Box, others: list[Thing]) -> bool:
    return not any(footprint_overlap(spot, o.box) for o in others if o.name != t.name)


def _grid(cx: float, cy: float, w: float, d: float, step: float) -> list[tuple[float, float]]:
    """Centres over a w x d span, its edges included (so things can pack against them)."""
    nx, ny = max(0, math.ceil(w / step)), max(0, math.ceil(d / step))
    xs = [cx - w / 2 + i * w / nx for i in range(nx + 1)] if nx else [cx]
    ys = [cy - d / 2 + j * d / ny for j in range(ny + 1)] if ny else [cy]
    return [(round(x, 3), round(y, 3)) for x in xs for y in ys]


def obstacles_on_floor(hh: Household, room: str) -> list[Thing]:
    """What stands on a room's floor: furniture and things resting on a floor of that room."""
    floors = {f.name for f in floors_of(hh, room)}
    return [t for t in hh.things.values() if t.room == room and not is_floor(t) and t.name != hh.agent.holding
            and ((t.relation is None and not t.movable) or (t.relation is not None and t.relation[1] in floors
                                                            and t.relation[0] == "ontop"))]


def place_on(hh: Household, t: Thing, surface: Thing, near: tuple[float, float] | None = None,
             rng: random.Random | None = None, pad: float = 0.0) -> bool:
    """Set ``t`` on ``surface`` at a free spot (nearest ``near``, else seeded); False when full.
    ``pad`` keeps that much space around it (the init spaces things out so hands fit between)."""
    for w, d in ((t.box.w, t.box.d), (t.box.d, t.box.w)):  # as it is, then turned a quarter
        if _place_on(hh, t, surface, w, d, near, rng, pad):
            return True
    return False


def _place_on(hh: Household, t: Thing, surface: Thing, w: float, d: float, near: tuple[float, float] | None,
              rng: random.Random | None, pad: float) -> bool:
    if is_floor(surface):
        room = hh.rooms[surface.room]
        others = obstacles_on_floor(hh, surface.room)
        cx, cy = (room.x0 + room.x1) / 2, (room.y0 + room.y1) / 2
        span_w, span_d = room.x1 - room.x0 - w - 0.2, room.y1 - room.y0 - d - 0.2
    else:
        others = [o for o in resting_on(hh, surface.name, ("ontop",))]
        cx, cy = surface.box.x, surface.box.y
        span_w, span_d = max(0.0, surface.box.w - w), max(0.0, surface.box.d - d)
    step = 0.2 if is_floor(surface) else max(0.05, min(w, d, 0.25) / 2)
    spots = _grid(cx, cy, span_w, span_d, step)
    if near is not None:
        spots.sort(key=lambda p: (round(math.hypot(p[0] - near[0], p[1] - near[1]), 3), p))
    elif rng is not None:
        rng.shuffle(spots)
    z = surface.box.top
    for x, y in spots:
        spot = Box(x, y, z, w, d, t.box.h)
        if _fits(hh, t, replace(spot, w=w + pad, d=d + pad), others):
            settle(hh, t, ("ontop", surface.name), spot, surface.room)
            return True
    return False


def place_inside(hh: Household, t: Thing, container: Thing, rng: random.Random | None = None) -> bool:
    """Put ``t`` into ``container`` if the volume left allows; False when it is full."""
    inside = resting_on(hh, container.name, ("inside",))
    if sum(volume(o) for o in inside if o.name != t.name) + volume(t) > FILL * volume(container):
        return False
    n = len(inside)
    jx = (rng.uniform(-0.25, 0.25) if rng else ((n % 3) - 1) * 0.25) * max(0.0, container.box.w - t.box.w)
    jy = (rng.uniform(-0.25, 0.25) if rng else (((n // 3) % 3) - 1) * 0.25) * max(0.0, container.box.d - t.box.d)
    z = container.box.z + min(0.05, container.box.h / 4)
    spot = Box(container.box.x + jx, container.box.y + jy, z, t.box.w, t.box.d, t.box.h)
    settle(hh, t, ("inside", container.name), spot, container.room)
    return True


def place_under(hh: Household, t: Thing, furniture: Thing) -> bool:
    """Lay ``t`` on the floor beneath ``furniture``; False when no free spot is left there."""
    others = resting_on(hh, furniture.name, ("under",))
    step = max(0.05, min(t.box.w, t.box.d) / 2)
    spots = _grid(furniture.box.x, furniture.box.y, max(0.0, furniture.box.w - t.box.w),
                  max(0.0, furniture.box.d - t.box.d), step)
    spots.sort(key=lambda p: (round(math.hypot(p[0] - furniture.box.x, p[1] - furniture.box.y), 3), p))
    base = ground_level(hh, furniture)
    for x, y in spots:
        spot = Box(x, y, base, t.box.w, t.box.d, t.box.h)
        if _fits(hh, t, spot, others):
            settle(hh, t, ("under", furniture.name), spot, furniture.room)
            return True
    return False


def ground_level(hh: Household, t: Thing) -> float:
    floors = floors_of(hh, t.room)
    return floors[0].box.top if floors else 0.0


def support_of(hh: Household, target: Thing) -> Thing | None:
    """What a thing set beside ``target`` would rest on: the same surface or container, else the floor."""
    if target.relation is not None and target.relation[0] in ("ontop", "inside"):
        return hh.things[target.relation[1]]
    floors = floors_of(hh, target.room)
    return floors[0] if floors else None


def place_next_to(hh: Household, t: Thing, target: Thing) -> bool:
    """Set ``t`` beside ``target`` on what ``target`` rests on; False when every side is taken."""
    support = support_of(hh, target)
    if support is None:
        return False
    if target.relation is not None and target.relation[0] == "inside":
        if not place_inside(hh, t, support):
            return False
        t.nextto.add(target.name)
        return True
    on_floor = is_floor(support)
    z = support.box.top
    others = obstacles_on_floor(hh, target.room) if on_floor else resting_on(hh, support.name, ("ontop",))
    room = hh.rooms[target.room]
    for x, y, w, d in _beside(target.box, t.box.w, t.box.d):
        spot = Box(round(x, 3), round(y, 3), z, w, d, t.box.h)
        if on_floor:
            inside_room = room.x0 + w / 2 <= x <= room.x1 - w / 2 and room.y0 + d / 2 <= y <= room.y1 - d / 2
        else:
            inside_room = abs(x - support.box.x) <= support.box.w / 2 and abs(y - support.box.y) <= support.box.d / 2
        if inside_room and _fits(hh, t, spot, [o for o in others if o.name != target.name]):
            settle(hh, t, ("ontop", support.name), spot, target.room)
            t.nextto.add(target.name)
            return True
    return False


def _beside(b: Box, w0: float, d0: float) -> list[tuple[float, float, float, float]]:
    """Spots beside ``b`` on each side: touching first, then a hand's width off; the middle of a side
    first, then slid along it; then the same with the thing turned a quarter."""
    out = []
    for w, d in ((w0, d0), (d0, w0)):
        for gap in (GAP, GAP + 0.1):
            for slide in (0.0, 0.1, -0.1, 0.2, -0.2, 0.3, -0.3, 0.45, -0.45, 0.6, -0.6, 0.8, -0.8, 1.0, -1.0):
                if abs(slide) <= (b.d + d) / 2 - 0.05:
                    out += [(b.x + (b.w + w) / 2 + gap, b.y + slide, w, d),
                            (b.x - (b.w + w) / 2 - gap, b.y + slide, w, d)]
                if abs(slide) <= (b.w + w) / 2 - 0.05:
                    out += [(b.x + slide, b.y + (b.d + d) / 2 + gap, w, d),
                            (b.x + slide, b.y - (b.d + d) / 2 - gap, w, d)]
    return out


def settle(hh: Household, t: Thing, relation: tuple, spot: Box, room: str) -> None:
    forget_neighbours(hh, t.name)
    shift(hh, t.name, spot.x, spot.y, spot.z, room)
    t.relation = relation  # type: ignore[assignment]
    if hh.agent.holding == t.name:
        hh.agent.holding = None


def carry(hh: Household, t: Thing) -> None:
    """``t`` goes into the robot's hand (with what rests on or inside it)."""
    forget_neighbours(hh, t.name)
    t.relation = None
    hh.agent.holding = t.name
    follow_agent(hh)


def follow_agent(hh: Household) -> None:
    """The carried thing rides with the robot wherever it goes."""
    if hh.agent.holding is not None:
        shift(hh, hh.agent.holding, hh.agent.x, hh.agent.y, HOLD_HEIGHT, hh.agent.room)
