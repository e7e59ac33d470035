"""What each thing looks like: the boxes it is drawn as, their colours, and what stays hidden.

Every shape is built from axis-aligned boxes ("parts") so one painter's sort orders a whole room:
a table is a top and four legs (what is under it shows between them), an open cabinet or fridge
is its five walls, its shelves and a door swung out (what is inside shows), a closed one is a
solid block with a door drawn on its front (what is inside does not), and a bowl, sink or bin
that holds something is a tub open at the top.
"""

from __future__ import annotations

import colorsys
import hashlib
from dataclasses import dataclass

from nodes.game.household.camera import facing
from nodes.game.household.model import Box, Household, Room, Thing

Color = tuple[int, int, int]

PANEL = 0.03  # wall thickness of containers drawn open, metres
LEG = 0.05
TABLE_TOP = 0.04
SHELF = 0.02
DOOR = 0.025

TABLE_WORDS = ("table", "desk")
SHELF_WORDS = ("shelf", "bookcase", "rack")
GLASS_WORDS = ("fridge", "refrigerator")

STATE_TINTS: dict[str, tuple[Color, float]] = {
    # the drawn cue for a unary state: blend the category colour this far towards a tint
    "burnt": ((25, 20, 15), 0.8),
    "cooked": ((140, 80, 30), 0.45),
    "frozen": ((210, 235, 255), 0.55),
    "hot": ((230, 70, 30), 0.35),
    "toggled_on": ((255, 235, 140), 0.35),
}


@dataclass(frozen=True)
class Part:
    """One box to draw. ``front`` marks a closed container's door face (an axis, e.g. (1, 0)) and
    ``doors`` how many leaves to draw there; ``alpha`` < 255 draws it see-through (glass shelves)."""

    owner: str
    box: Box
    color: Color
    front: tuple[int, int] | None = None
    doors: int = 0
    alpha: int = 255


def category_color(category: str) -> Color:
    """A stable, muted colour per category (blake2s, not ``hash``: that is salted per process).
    Muted so the bright label palette stays the loudest thing on the picture."""
    digest = hashlib.blake2s(category.encode("utf-8"), digest_size=4).digest()
    hue = digest[0] / 256 + digest[1] / 65536
    sat = 0.25 + 0.25 * digest[2] / 255
    val = 0.55 + 0.30 * digest[3] / 255
    r, g, b = colorsys.hsv_to_rgb(hue, sat, val)
    return round(r * 255), round(g * 255), round(b * 255)


def blend(a: Color, b: Color, t: float) -> Color:
    return (round(a[0] + (b[0] - a[0]) * t), round(a[1] + (b[1] - a[1]) * t), round(a[2] + (b[2] - a[2]) * t))


def thing_color(thing: Thing) -> Color:
    color = category_color(thing.category)
    for state in sorted(thing.states):
        if state in STATE_TINTS:
            tint, amount = STATE_TINTS[state]
            color = blend(color, tint, amount)
    return color


def hidden(hh: Household, thing: Thing) -> bool:
    """Inside a closed container (at any depth), or in the agent's hand, so not drawn."""
    if hh.agent.holding == thing.name:
        return True
    seen = {thing.name}
    rel = thing.relation
    while rel is not None and rel[1] in hh.things and rel[1] not in seen:
        holder = hh.things[rel[1]]
        if rel[0] == "inside" and holder.openable and not holder.is_open:
            return True
        if hh.agent.holding == holder.name:
            return True
        seen.add(holder.name)
        rel = holder.relation
    return False


def contents(hh: Household, thing: Thing) -> list[Thing]:
    return [t for t in hh.things.values() if t.relation == ("inside", thing.name)]


def drawn(hh: Household, room: str) -> list[Thing]:
    """The things of ``room`` that get parts, in name order (so the sort's ties are stable).
    Floors are the room's own floor, drawn with the walls."""
    return sorted((t for t in hh.things.values() if t.room == room and not t.name.startswith("floor:")
                   and t.category != "floor" and not hidden(hh, t)), key=lambda t: t.name)


def parts(hh: Household, thing: Thing) -> list[Part]:
    color = thing_color(thing)
    b = thing.box
    cat = thing.category
    room = hh.rooms.get(thing.room)
    front = facing(b, room.x0, room.y0, room.x1, room.y1) if room else (1, 0)
    if any(w in cat for w in TABLE_WORDS) and not thing.openable:
        return _table(thing.name, b, color)
    if thing.openable and not thing.is_open:
        leaves = 2 if _front_width(b, front) > 1.0 else 1
        return [Part(thing.name, b, color, front=front, doors=leaves)]
    if thing.openable or any(w in cat for w in SHELF_WORDS):
        return _open_box(hh, thing, color, front)
    if contents(hh, thing) and b.h > 0.08:
        return _tub(thing.name, b, color)
    return [Part(thing.name, b, color)]


def _front_width(b: Box, front: tuple[int, int]) -> float:
    return b.d if front[0] else b.w


def _slab(b: Box, x0: float, y0: float, z0: float, x1: float, y1: float, z1: float) -> Box:
    """A box from corner bounds, clamped inside ``b``."""
    x0, x1 = max(x0, b.x - b.w / 2), min(x1, b.x + b.w / 2)
    y0, y1 = max(y0, b.y - b.d / 2), min(y1, b.y + b.d / 2)
    return Box((x0 + x1) / 2, (y0 + y1) / 2, z0, max(x1 - x0, 1e-3), max(y1 - y0, 1e-3), max(z1 - z0, 1e-3))


def _bounds(b: Box) -> tuple[float, float, float, float]:
    return b.x - b.w / 2, b.y - b.d / 2, b.x + b.w / 2, b.y + b.d / 2


def _table(name: str, b: Box, color: Color) -> list[Part]:
    x0, y0, x1, y1 = _bounds(b)
    top = min(TABLE_TOP, b.h)
    out = [Part(name, _slab(b, x0, y0, b.top - top, x1, y1, b.top), color)]
    leg_color = blend(color, (40, 30, 25), 0.35)
    inset = min(0.04, b.w / 6, b.d / 6)
    for lx in (x0 + inset, x1 - inset - LEG):
        for ly in (y0 + inset, y1 - inset - LEG):
            out.append(Part(name, _slab(b, lx, ly, b.z, lx + LEG, ly + LEG, b.top - top), leg_color))
    return out


def _tub(name: str, b: Box, color: Color) -> list[Part]:
    """Bottom and four walls: what lies inside shows over the rim and from above."""
    x0, y0, x1, y1 = _bounds(b)
    t = min(PANEL, b.w / 4, b.d / 4)
    z0, z1 = b.z, b.top
    return [Part(name, _slab(b, x0, y0, z0, x1, y1, z0 + t), color),
            Part(name, _slab(b, x0, y0, z0, x0 + t, y1, z1), color),
            Part(name, _slab(b, x1 - t, y0, z0, x1, y1, z1), color),
            Part(name, _slab(b, x0 + t, y0, z0, x1 - t, y0 + t, z1), color),
            Part(name, _slab(b, x0 + t, y1 - t, z0, x1 - t, y1, z1), color)]


def _open_box(hh: Household, thing: Thing, color: Color, front: tuple[int, int]) -> list[Part]:
    """Five walls (none on the front), shelves under what stands inside, and the door(s) swung
    90 degrees out of the front, hinged at its outer edges. Each wall is two skins, the outer in
    the category's colour and the inner pale, so an open box reads as open from any side."""
    b, name = thing.box, thing.name
    x0, y0, x1, y1 = _bounds(b)
    t = min(PANEL, b.w / 4, b.d / 4, b.h / 4)
    s = t / 2
    glass = any(w in thing.category for w in GLASS_WORDS)
    inner = blend(color, (240, 242, 240), 0.8 if glass else 0.45)
    out = [Part(name, _slab(b, x0, y0, b.z, x1, y1, b.z + s), color),
           Part(name, _slab(b, x0, y0, b.z + s, x1, y1, b.z + t), inner),
           Part(name, _slab(b, x0, y0, b.top - t, x1, y1, b.top - s), inner),
           Part(name, _slab(b, x0, y0, b.top - s, x1, y1, b.top), color)]
    skins = {(-1, 0): ((x0, y0, x0 + s, y1), (x0 + s, y0, x0 + t, y1)),
             (1, 0): ((x1 - s, y0, x1, y1), (x1 - t, y0, x1 - s, y1)),
             (0, -1): ((x0, y0, x1, y0 + s), (x0, y0 + s, x1, y0 + t)),
             (0, 1): ((x0, y1 - s, x1, y1), (x0, y1 - t, x1, y1 - s))}
    for side, (outer, skin) in skins.items():
        if side != front:
            out.append(Part(name, _slab(b, outer[0], outer[1], b.z + t, outer[2], outer[3], b.top - t), color))
            out.append(Part(name, _slab(b, skin[0], skin[1], b.z + t, skin[2], skin[3], b.top - t), inner))
    for z in _shelf_heights(hh, thing, t):
        out.append(Part(name, _slab(b, x0 + t, y0 + t, z - SHELF, x1 - t, y1 - t, z), (200, 225, 235) if glass else
                        inner, alpha=80 if glass else 255))
    out.extend(_doors(name, b, front, color))
    return out


def _shelf_heights(hh: Household, thing: Thing, t: float) -> list[float]:
    """A shelf under each thing standing inside above the floor of the box, and for tall boxes
    evenly spaced ones too, unless one would cut through something inside."""
    b = thing.box
    inside = contents(hh, thing)
    heights = {round(c.box.z, 2) for c in inside if c.box.z > b.z + t + SHELF}
    if b.h > 1.0:
        n = 3 if b.h > 1.5 else 2
        for k in range(1, n + 1):
            z = round(b.z + b.h * k / (n + 1), 2)
            if not any(c.box.z - SHELF < z < c.box.top for c in inside):
                heights.add(z)
    return sorted(z for z in heights if z < b.top - t - SHELF)


def _doors(name: str, b: Box, front: tuple[int, int], color: Color) -> list[Part]:
    x0, y0, x1, y1 = _bounds(b)
    width = _front_width(b, front)
    leaves = 2 if width > 1.0 else 1
    reach = width / leaves
    door_color = blend(color, (255, 255, 255), 0.15)
    out: list[Part] = []
    fx, fy = front
    sign = fx or fy
    # u runs out of the front (x for an east or west front), v along it
    (u0, u1), (v0, v1) = ((x0, x1), (y0, y1)) if fx else ((y0, y1), (x0, x1))
    face = u1 if sign > 0 else u0
    lo, hi = (face, face + reach) if sign > 0 else (face - reach, face)
    hinges = [v0, v1] if leaves == 2 else [v1 if (sign > 0) == bool(fx) else v0]
    for h in hinges:
        va, vb = (h, h + DOOR) if h == v0 else (h - DOOR, h)
        u, v, du, dv = (lo + hi) / 2, (va + vb) / 2, hi - lo, vb - va
        box = Box(u, v, b.z, du, dv, b.h) if fx else Box(v, u, b.z, dv, du, b.h)
        out.append(Part(name, box, door_color))
    return out


def room_of(hh: Household, name: str) -> Room:
    room = hh.rooms.get(name)
    if room is None:
        raise KeyError(f"household {hh.activity!r}: the agent's room {name!r} is not among {sorted(hh.rooms)}")
    return room
