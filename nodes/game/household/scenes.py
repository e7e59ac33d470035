"""The rooms of each scene VAB's tasks use, laid out as rectangles side by side.

OmniGibson's scenes are 3-D houses this project does not ship; what the agent needs from a scene
is the list of rooms it may ``move_to_room`` into (VAB's "reachable rooms") and a plan for where
things stand. The room lists below are this project's own plausible choice for each of the 19
scenes in VAB's task list; any other scene name gets ``DEFAULT_HOUSE``. When an activity puts an
object ``inroom`` a room type the scene lacks (BEHAVIOR samples scenes per activity, this project
does not), that room is added to the scene as ``<type>_0`` so every activity can run in every scene.
Room sizes vary with the seed; rooms stand in a row along x, each a rectangle.
"""

from __future__ import annotations

import random

from .model import Room

SCENES: dict[str, tuple[str, ...]] = {
    "Rs_int": ("kitchen_0", "living_room_0", "bedroom_0", "bathroom_0", "corridor_0", "storage_room_0"),
    "Beechwood_0_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0",
                        "storage_room_0", "private_office_0", "garden_0"),
    "Beechwood_1_int": ("bedroom_0", "bedroom_1", "bedroom_2", "bathroom_0", "bathroom_1", "corridor_0",
                        "storage_room_0"),
    "Benevolence_0_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "storage_room_0"),
    "Benevolence_1_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0",
                          "garden_0"),
    "Benevolence_2_int": ("bedroom_0", "bedroom_1", "bedroom_2", "bathroom_0", "corridor_0"),
    "Ihlen_0_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0", "garage_0",
                    "storage_room_0", "garden_0"),
    "Ihlen_1_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0", "bedroom_0",
                    "private_office_0", "garden_0"),
    "Merom_0_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0", "garage_0",
                    "storage_room_0"),
    "Merom_1_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0", "bedroom_0",
                    "pantry_room_0", "storage_room_0"),
    "Pomaria_0_garden": ("garden_0", "corridor_0", "living_room_0", "kitchen_0"),
    "Pomaria_0_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0",
                      "storage_room_0"),
    "Pomaria_1_int": ("kitchen_0", "living_room_0", "corridor_0", "bathroom_0", "bedroom_0", "bedroom_1",
                      "garden_0"),
    "Pomaria_2_int": ("bedroom_0", "bedroom_1", "bathroom_0", "corridor_0", "private_office_0"),
    "Wainscott_0_int": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0",
                        "private_office_0", "garage_0", "garden_0"),
    "Wainscott_1_int": ("bedroom_0", "bedroom_1", "bathroom_0", "bathroom_1", "corridor_0",
                        "private_office_0"),
    "grocery_store_cafe": ("grocery_store_0", "corridor_0", "dining_room_0", "kitchen_0"),
    "house_double_floor_lower": ("kitchen_0", "living_room_0", "dining_room_0", "corridor_0", "bathroom_0",
                                 "garage_0", "garden_0", "storage_room_0"),
    "house_double_floor_upper": ("bedroom_0", "bedroom_1", "bathroom_0", "corridor_0", "private_office_0",
                                 "childs_room_0"),
}
DEFAULT_HOUSE: tuple[str, ...] = ("kitchen_0", "living_room_0", "bedroom_0", "bathroom_0", "corridor_0")

# (min, max) edge lengths in metres for a room type; others use DEFAULT_SPAN.
SPANS: dict[str, tuple[float, float]] = {
    "grocery_store": (9.0, 11.0), "garden": (7.0, 9.0), "garage": (5.5, 7.0), "living_room": (5.0, 7.0),
    "kitchen": (4.5, 6.0), "corridor": (3.0, 4.0), "bathroom": (3.0, 4.0), "pantry_room": (3.0, 3.5),
}
DEFAULT_SPAN = (4.0, 5.5)


def room_kind(room_name: str) -> str:
    """``living_room_0`` -> ``living_room``."""
    head, _, tail = room_name.rpartition("_")
    return head if tail.isdigit() else room_name


def room_names(scene: str, needed_kinds: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The scene's room instances, plus ``<type>_0`` for each needed room type it lacks."""
    names = list(SCENES.get(scene, DEFAULT_HOUSE))
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
