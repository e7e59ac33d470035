"""Building a household from an activity's BDDL problem and a scene, deterministically per seed.

BEHAVIOR samples an activity's initial state in a 3-D scene; here the same initial literals are made
true in a plan of rectangles: every problem object becomes a ``Thing`` (floors span their room,
furniture stands along the walls of its ``inroom`` room, items rest where ``ontop``/``inside``/
``under``/``nextto`` put them, ``open``/``cooked``/... and their negations set states). The seed
varies room sizes, which wall each piece stands at and in what order, spots on surfaces, a few
pieces of unnamed scenery and where the robot starts, so VAB's 181 instances differ from one
another yet rebuild identically for the same (activity, scene, seed).

Objects the init does not place: furniture without a room stands in the robot's room, items
without a support lie on the floor of the room their ``inroom`` names (else the robot's room), and
``future`` objects (things a transition would create, which this household does not simulate) are
left out of the world; the BDDL backend reads them as not yet real.
"""

from __future__ import annotations

import random

from . import activities
from .activities import Problem
from .catalog import kind
from .model import START_CAMERA, Agent, Box, Household, Room, Thing
from .placement import (floors_of, footprint_overlap, ground_level, is_floor, place_inside, place_next_to,
                        place_on, place_under, settle)
from .scenes import furniture, layout
from .visibility import fridge_view_visible, observe, visible  # noqa: F401  (re-exported)

WALL_GAP = 0.3
SCENERY: dict[str, tuple[str, ...]] = {
    "kitchen": ("dishwasher", "chair", "pot_plant"), "living_room": ("sofa", "armchair", "pot_plant",
                                                                     "television_receiver"),
    "bedroom": ("wardrobe", "chair", "pot_plant"), "bathroom": ("toilet", "bathtub"),
    "corridor": ("bench", "pot_plant"), "dining_room": ("chair", "chair", "pot_plant"),
    "garage": ("shelf", "washer"), "garden": ("tree", "bench"), "grocery_store": ("pot_plant", "bench"),
    "private_office": ("desk", "chair", "armchair"), "storage_room": ("shelf", "wardrobe"),
}
# parts of the building or flat things, not pieces to stand along a wall
NOT_SCENERY = {"door", "sliding_door", "window", "openable_window", "lawn", "driveway", "floors", "walls", "ceilings",
               "tile", "plywood", "turf", "carpet", "rug", "picture", "mirror"}
UNARY_STATES = ("cooked", "frozen", "toggled_on", "hot", "burnt")


def build(activity_problem: Problem | str, scene: str, seed: int = 0) -> Household:
    """The household for ``activity_problem`` (a Problem, or an activity name / .bddl path) in ``scene``."""
    problem = activities.load(activity_problem) if isinstance(activity_problem, str) else activity_problem
    rng = random.Random(f"{problem.activity}|{scene}|{seed}")
    synsets = dict(problem.objects)
    inroom, relations, states, future = _read_init(problem)
    rooms = layout(scene, sorted(set(inroom.values())), rng)
    by_kind: dict[str, list[str]] = {}
    for name, room in rooms.items():
        by_kind.setdefault(room.kind, []).append(name)
    chosen = {k: rng.choice(v) for k, v in sorted(by_kind.items())}
    agent_floor = next((b for (p, a, b) in relations if p == "ontop" and synsets.get(a, "").startswith("agent.")),
                       None)
    first_room = next(iter(rooms))

    def room_for(inst: str) -> str:
        return chosen[inroom[inst]] if inst in inroom else ""

    things: dict[str, Thing] = {}
    for inst, synset in problem.objects:
        if synset.startswith("agent.") or inst in future:
            continue
        k = kind(synset)
        w, d, h = k.size
        things[inst] = Thing(name=inst, category=k.category, room=room_for(inst), box=Box(0, 0, 0, w, d, h),
                             movable=k.movable, heavy=k.heavy, openable=k.openable, container=k.container,
                             attachable=k.attachable, capabilities=k.capabilities)
    # Floors first (they fix the robot's room), then every room gets at least one floor.
    for t in things.values():
        if is_floor(t):
            t.room = t.room or first_room
    agent_room = things[agent_floor].room if agent_floor in things and things[agent_floor].room else first_room
    for t in things.values():
        if is_floor(t):
            r = rooms[t.room]
            t.box = Box((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, -0.02, r.x1 - r.x0, r.y1 - r.y0, 0.02)
    hh = Household(problem.activity, scene, seed, rooms, things, Agent(agent_room, 0.0, 0.0))
    for name, r in rooms.items():
        if not floors_of(hh, name):
            things[f"floor:{name}"] = Thing(f"floor:{name}", "floor", name,
                                            Box((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, -0.02, r.x1 - r.x0,
                                                r.y1 - r.y0, 0.02))
    placed_by_relation = {a for (p, a, b) in relations if p in ("ontop", "inside", "under", "nextto")
                          and a in things and b in things}
    furniture = [t for t in things.values() if not is_floor(t) and not t.movable and t.name not in placed_by_relation]
    for t in furniture:
        t.room = t.room or agent_room
    _add_scenery(hh, rng)
    _stand_furniture(hh, rng, placed_by_relation)
    _place_items(hh, relations, room_for, agent_room, rng)
    for inst, state, value in states:
        if inst in things:
            t = things[inst]
            if state == "open":
                t.is_open = value and t.openable
            elif value:
                t.states.add(state)
            else:
                t.states.discard(state)
    _number(hh, problem)
    _start_agent(hh, rng)
    observe(hh)
    return hh


def _read_init(problem: Problem):
    inroom: dict[str, str] = {}
    relations: list[tuple[str, str, str]] = []
    states: list[tuple[str, str, bool]] = []
    future: set[str] = set()
    for form in problem.init:
        positive = form[0] != "not"
        atom = form if positive else form[1]
        pred, *args = atom
        if pred == "inroom":
            inroom[args[0]] = args[1]
        elif pred == "future" and positive:
            future.add(args[0])
        elif len(args) == 2 and positive and pred in ("ontop", "inside", "under", "nextto"):
            relations.append((pred, args[0], args[1]))
        elif len(args) == 1 and (pred == "open" or pred in UNARY_STATES):
            states.append((args[0], pred, positive))
    return inroom, relations, states, future


def _add_scenery(hh: Household, rng: random.Random) -> None:
    """One to three unnamed pieces per room, drawn from the furniture BEHAVIOR's scene has in that
    room (those this project has a size for), else from a room type's usual pieces."""
    from .catalog import SIZES, size_of

    for name, room in hh.rooms.items():
        known = [c for c in furniture(hh.scene, name) if c not in NOT_SCENERY
                 and size_of(c, furniture=True) in SIZES.values()]
        options = tuple(known) or SCENERY.get(room.kind, ("pot_plant",))
        for i, category in enumerate(rng.sample(options, rng.randint(1, min(3, len(options))))):
            w, d, h = kind_size(category)
            hh.things[f"scenery:{category}_{name}_{i}"] = Thing(
                f"scenery:{category}_{name}_{i}", category, name, Box(0, 0, 0, w, d, h))


def kind_size(category: str) -> tuple[float, float, float]:
    from .catalog import size_of

    return size_of(category, furniture=True)


def _stand_furniture(hh: Household, rng: random.Random, skip: set[str]) -> None:
    """Along the walls in a seeded order; flat ground (lawn, driveway) and overflow in the middle."""
    for name, room in hh.rooms.items():
        pieces = [t for t in hh.things.values() if t.room == name and not is_floor(t) and not t.movable
                  and t.name not in skip]
        pieces.sort(key=lambda t: t.name)
        rng.shuffle(pieces)
        walls = [0, 1, 2, 3]
        rng.shuffle(walls)
        cursors = {w: rng.uniform(0.1, 0.6) for w in walls}
        standing: list[Thing] = []
        for t in pieces:
            if t.box.h <= 0.05:  # lawn, driveway: ground in the middle of the room
                _centre(t, room, standing, rng)
            elif not any(_against_wall(t, room, w, cursors, standing) for w in walls):
                _centre(t, room, standing, rng)
            standing.append(t)


def _against_wall(t: Thing, room: Room, wall: int, cursors: dict[int, float], standing: list[Thing]) -> bool:
    length = (room.x1 - room.x0) if wall in (0, 2) else (room.y1 - room.y0)
    w, d, h = t.box.w, t.box.d, t.box.h
    start = cursors[wall]
    if start + w > length - 0.1:
        return False
    along = start + w / 2
    z = 0.9 if t.category == "window" else 0.0
    if wall == 0:
        box = Box(room.x0 + along, room.y0 + d / 2 + 0.02, z, w, d, h)
    elif wall == 2:
        box = Box(room.x1 - along, room.y1 - d / 2 - 0.02, z, w, d, h)
    elif wall == 1:
        box = Box(room.x1 - d / 2 - 0.02, room.y0 + along, z, d, w, h)
    else:
        box = Box(room.x0 + d / 2 + 0.02, room.y1 - along, z, d, w, h)
    if any(footprint_overlap(box, o.box) for o in standing if o.box.h > 0.05):
        cursors[wall] = start + w + WALL_GAP
        return _against_wall(t, room, wall, cursors, standing)
    t.box = Box(round(box.x, 3), round(box.y, 3), box.z, box.w, box.d, box.h)
    cursors[wall] = start + w + WALL_GAP
    return True


def _centre(t: Thing, room: Room, standing: list[Thing], rng: random.Random) -> None:
    cx, cy = (room.x0 + room.x1) / 2, (room.y0 + room.y1) / 2
    for _ in range(40):
        x = cx + rng.uniform(-0.3, 0.3) * max(0.0, room.x1 - room.x0 - t.box.w)
        y = cy + rng.uniform(-0.3, 0.3) * max(0.0, room.y1 - room.y0 - t.box.d)
        box = Box(round(x, 3), round(y, 3), 0.0, t.box.w, t.box.d, t.box.h)
        if not any(footprint_overlap(box, o.box) for o in standing):
            break
    t.box = box


def _place_items(hh: Household, relations, room_for, agent_room: str, rng: random.Random) -> None:
    things = hh.things
    pending = [t for t in things.values() if t.movable and not is_floor(t)]
    pending += [things[a] for (p, a, b) in relations if a in things and not things[a].movable
                and not is_floor(things[a]) and things[a] not in pending]
    pending.sort(key=lambda t: list(things).index(t.name))
    placed: set[str] = {t.name for t in things.values() if t not in pending}
    rel_of: dict[str, list[tuple[str, str]]] = {}
    for p, a, b in relations:
        if a in things and b in things:
            rel_of.setdefault(a, []).append((p, b))
    while pending:
        progress = False
        for t in list(pending):
            rels = rel_of.get(t.name, [])
            main = next(((p, b) for p, b in rels if p != "nextto"), None) or next(iter(rels), None)
            if main is not None and main[1] not in placed:
                continue
            if main is None:
                room = room_for(t.name) or agent_room
                _put(hh, t, "ontop", floors_of(hh, room)[0], rng)
            else:
                _put(hh, t, main[0], things[main[1]], rng)
            pending.remove(t)
            placed.add(t.name)
            progress = True
        if not progress:  # a cycle of supports in the init: break it on the floor
            rel_of.pop(pending[0].name, None)
    for a, rels in rel_of.items():  # after every move, so no later placement clears them
        for p, b in rels:
            if p == "nextto":
                things[a].nextto.add(b)


def _front(hh: Household, surface: Thing, rng: random.Random) -> tuple[float, float] | None:
    """Where the init gathers what it lays on a surface: a seeded point, which for a deep surface (a
    bed) lies on its edge facing the room's middle so the robot can reach it from the floor."""
    b = surface.box
    if is_floor(surface) or b.h <= 0.05:
        return None
    if min(b.w, b.d) <= 0.9:  # shallow: anywhere along it; things cluster there, leaving room
        return b.x + rng.uniform(-0.5, 0.5) * b.w, b.y + rng.uniform(-0.5, 0.5) * b.d
    r = hh.rooms[surface.room]
    cx, cy = (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2
    along_w, along_d = rng.uniform(-0.4, 0.4) * b.w, rng.uniform(-0.4, 0.4) * b.d
    edges = [(b.x + along_w, b.y + b.d / 2), (b.x + along_w, b.y - b.d / 2),
             (b.x + b.w / 2, b.y + along_d), (b.x - b.w / 2, b.y + along_d)]
    return min(edges, key=lambda p: (p[0] - cx) ** 2 + (p[1] - cy) ** 2)


def _put(hh: Household, t: Thing, relation: str, target: Thing, rng: random.Random) -> None:
    front = _front(hh, target, rng) if relation == "ontop" else None
    if relation == "ontop":
        ok = place_on(hh, t, target, near=front, rng=rng, pad=0.1)
    elif relation == "inside":
        ok = place_inside(hh, t, target, rng)
    elif relation == "under":
        ok = place_under(hh, t, target)
    else:
        ok = place_next_to(hh, t, target)
    if not ok:  # the init asks for more than fits: set it there anyway, on the support's middle
        if relation == "nextto":
            relation, target = "ontop", floors_of(hh, target.room)[0]
        z = {"ontop": target.box.top, "inside": target.box.z + 0.02}.get(relation, ground_level(hh, target))
        spot = Box(target.box.x, target.box.y, z, t.box.w, t.box.d, t.box.h)
        settle(hh, t, (relation, target.name), spot, target.room)


def _number(hh: Household, problem: Problem) -> None:
    """VAB's identifiers: 1..N over the problem's objects, skipping the robot, and floors unless the
    goal mentions one."""
    goal_text = activities.sexpr(problem.goal)
    floors_count = "floor.n." in goal_text
    n = 0
    for inst, synset in problem.objects:
        t = hh.things.get(inst)
        if t is None or synset.startswith("agent.") or (is_floor(t) and not floors_count):
            continue
        n += 1
        t.id = n


def _start_agent(hh: Household, rng: random.Random) -> None:
    room = hh.rooms[hh.agent.room]
    standing = [t for t in hh.things.values() if t.room == room.name and not is_floor(t) and t.box.h > 0.05]
    cx, cy = (room.x0 + room.x1) / 2, (room.y0 + room.y1) / 2
    x, y = cx, cy
    for _ in range(50):
        x = cx + rng.uniform(-0.25, 0.25) * (room.x1 - room.x0)
        y = cy + rng.uniform(-0.25, 0.25) * (room.y1 - room.y0)
        probe = Box(x, y, 0, 0.5, 0.5, 1)
        if not any(footprint_overlap(probe, t.box) for t in standing):
            break
    hh.agent.x, hh.agent.y = round(x, 3), round(y, 3)
    hh.agent.heading, hh.agent.camera = 0, START_CAMERA
