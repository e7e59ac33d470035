"""The rooms of BEHAVIOR's scenes, laid out as rectangles side by side.

OmniGibson's scenes are 3-D houses this project does not ship, but ``bddl`` ships what the agent
needs from one: each of BEHAVIOR's 51 scenes' room instances, with the furniture in each room
(``generated_data/combined_room_object_list.json``). The rooms are VAB's "reachable rooms" and what
``move_to_room`` goes to; the furniture lends each room its scenery. A scene name bddl does not know
gets ``DEFAULT_HOUSE``. When an activity puts an object ``inroom`` a room type the scene lacks
(BEHAVIOR samples scenes per activity; a few of VAB's pairs use its own edited problems), that room
is added to the scene as ``<type>_0`` so every activity can run in every scene. Room sizes vary with
the seed; rooms stand in a row along x, each a rectangle.
"""

from __future__ import annotations

import json
import os
import random
from functools import lru_cache

from .model import Room

DEFAULT_HOUSE: tuple[str, ...] = ("kitchen_0", "living_room_0", "bedroom_0", "bathroom_0", "corridor_0")

# (min, max) edge lengths in metres for a room type; others use DEFAULT_SPAN.
SPANS: dict[str, tuple[float, float]] = {
    "grocery_store": (9.0, 11.0), "garden": (7.0, 9.0), "garage": (5.5, 7.0), "living_room": (5.0, 7.0),
    "kitchen": (4.5, 6.0), "corridor": (3.0, 4.0), "bathroom": (3.0, 4.0), "pantry_room": (3.0, 3.5),
    "closet": (2.0, 3.0), "staircase": (2.5, 3.5), "entryway": (2.5, 3.5), "utility_room": (2.5, 3.5),
}
DEFAULT_SPAN = (4.0, 5.5)


def room_kind(room_name: str) -> str:
    """``living_room_0`` -> ``living_room``."""
    head, _, tail = room_name.rpartition("_")
    return head if tail.isdigit() else room_name


@lru_cache(maxsize=1)
def _behavior_scenes() -> dict[str, dict[str, dict[str, int]]]:
    """scene -> room -> {object model ("sofa-mnfbbh"): count}, as bddl ships it."""
    import bddl

    path = os.path.join(os.path.dirname(bddl.__file__), "generated_data", "combined_room_object_list.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)["scenes"]


def scene_names() -> list[str]:
    """BEHAVIOR's scenes, as bddl lists them."""
    return sorted(_behavior_scenes())


def furniture(scene: str, room: str) -> list[str]:
    """The object categories BEHAVIOR's scene has in ``room`` (``sofa``, ``straight_chair``, ...), by name."""
    models = _behavior_scenes().get(scene, {}).get(room, {})
    return sorted({m.rsplit("-", 1)[0] for m in models})


def room_names(scene: str, needed_kinds: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The scene's room instances (bddl's order: by name), plus ``<type>_0`` for each needed room type it lacks."""
    rooms = _behavior_scenes().get(scene)
    names = sorted(rooms) if rooms else list(DEFAULT_HOUSE)
    kinds = {room_kind(n) for n in names}
    for kind in needed_kinds:
        if kind not in kinds:
            names.append(f"{kind}_0")
            kinds.add(kind)
    return names


def layout(scene: str, needed_kinds: list[str] | tuple[str, ...], rng: random.Random) -> dict[str, Room]:
    """Rooms as rectangles in a row along x (seeded sizes); keys in the scene's own order."""
    rooms: dict[str, Room] = {}
    x = 0.0
    for name in room_names(scene, needed_kinds):
        kind = room_kind(name)
        lo, hi = SPANS.get(kind, DEFAULT_SPAN)
        w, d = round(rng.uniform(lo, hi), 2), round(rng.uniform(lo, hi), 2)
        rooms[name] = Room(name=name, kind=kind, x0=x, y0=0.0, x1=round(x + w, 2), y1=d)
        x = round(x + w, 2)
    return rooms
