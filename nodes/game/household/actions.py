"""VAB-OmniGibson's 20 actions and ``done()``, applied to the household.

The preconditions are VAB's (its ``env.py`` and ``utils/actions.py``): the robot reaches 1.2 m,
acts on what it sees, holds, or has within 2.4 m, may ``move`` only to what it has seen and what is
in its room, opens containers before putting things in, and has one hand. Two deliberate changes:
reach is measured in the plan (VAB measured from the robot's base in 3-D, which made high shelves
unreachable for ``cook`` or ``open``), and a thing shut inside a closed container cannot be acted on
until the container is opened. Every check runs before any change, so a failed action leaves the
household exactly as it was; its feedback says why, in this project's words.
"""

from __future__ import annotations

import difflib
import math
import random
from dataclasses import dataclass

from .model import CAMERA_HEIGHTS, HEADINGS, Box, Household, Thing
from .parsing import ActionCall, ParseError, parse
from .placement import (carried_with, carry, follow_agent, footprint_overlap, is_floor, place_inside,
                        place_next_to, place_on, place_under, planar_distance, shut_in)
from .visibility import fridge_view_ok, observe

REACH = 1.2
NEAR_ENOUGH = 2.4  # VAB acts on unseen things this close
STAND_OFF = (0.25, 0.45, 0.7)
NO_ARGS = ("turn_left", "turn_right", "raise_camera", "lower_camera", "get_fridge_view", "done")
TWO_ARGS = ("put_inside", "put_on_top", "put_under", "put_next_to")
ONE_ARG = ("grasp", "move", "move_to_room", "cook", "burn", "freeze", "heat", "open", "close", "toggle_on",
           "toggle_off")
FUNCTIONS = NO_ARGS[:-1] + ONE_ARG + TWO_ARGS + ("done",)
STATE_ACTIONS = {"cook": ("cooked", "cooked"), "burn": ("burnt", "burnt"), "freeze": ("frozen", "frozen"),
                 "heat": ("hot", "heated"), "toggle_on": ("toggled_on", "switched on"),
                 "toggle_off": ("toggled_on", "switched off")}
HINTS = {"pick_up": "grasp", "pick": "grasp", "take": "grasp", "move_to_object": "move", "move_to_obj": "move",
         "go_to": "move", "place": "put_on_top, put_inside, put_under or put_next_to",
         "put": "put_on_top, put_inside, put_under or put_next_to", "put_in": "put_inside",
         "place_into": "put_inside", "put_on": "put_on_top", "place_on": "put_on_top"}


@dataclass
class ActionResult:
    ok: bool
    feedback: str
    action: str  # the call as carried out (or as written, when it could not be read)
    func: str | None
    done: bool = False
    fridge_view: bool = False


def apply(hh: Household, text: str) -> ActionResult:
    """Carry out the first action in ``text`` on ``hh``; on failure nothing changes."""
    try:
        call = parse(text)
    except ParseError as exc:
        return ActionResult(False, str(exc), text.strip()[:200], None)
    result = _dispatch(hh, call)
    if result.ok and not result.done:
        observe(hh, fridge(hh).name if result.fridge_view else None)
    return result


def _fail(call: ActionCall, message: str) -> ActionResult:
    return ActionResult(False, message, call.text, call.func)


def _dispatch(hh: Household, call: ActionCall) -> ActionResult:
    f, args = call.func, call.args
    if f not in FUNCTIONS:
        return _fail(call, _unknown_function(call))
    want = 0 if f in NO_ARGS else 2 if f in TWO_ARGS else 1
    if len(args) != want:
        return _fail(call, f"{f} takes {want or 'no'} argument{'s' if want != 1 else ''}, "
                           f"but {len(args)} {'were' if len(args) != 1 else 'was'} given.")
    ok = lambda msg, **kw: ActionResult(True, msg, call.text, f, **kw)  # noqa: E731
    a = hh.agent
    if f == "done":
        return ok("The episode ends here; the goal is checked now.", done=True)
    if f in ("turn_left", "turn_right"):
        a.heading = (a.heading + (1 if f == "turn_left" else -1)) % HEADINGS
        return ok(f"Turned {'left' if f == 'turn_left' else 'right'}; now facing another side of the room.")
    if f == "raise_camera":
        if a.camera == len(CAMERA_HEIGHTS) - 1:
            return _fail(call, "The camera cannot go any higher.")
        a.camera += 1
        return ok(f"The camera is now {CAMERA_HEIGHTS[a.camera]:.2f} m above the floor.")
    if f == "lower_camera":
        if a.camera == 0:
            return _fail(call, "The camera cannot go any lower.")
        a.camera -= 1
        return ok(f"The camera is now {CAMERA_HEIGHTS[a.camera]:.2f} m above the floor.")
    if f == "get_fridge_view":
        box = fridge(hh)
        if box is None:
            return _fail(call, "This task has no fridge to look into.")
        why = fridge_view_ok(hh, box)
        if why == "far":
            return _fail(call, f"{box.label} is too far away to look inside; move closer first.")
        if why == "closed":
            return _fail(call, f"{box.label} is closed; open it to look inside.")
        return ok(f"Showing the inside of {box.label}.", fridge_view=True)
    if f == "move_to_room":
        room = args[0]
        if room not in hh.rooms:
            return _fail(call, f"There is no room called {room!r}; the rooms are {', '.join(hh.rooms)}.")
        r = hh.rooms[room]
        a.room, a.x, a.y = room, *_entry(hh, room)
        follow_agent(hh)
        return ok(f"Now in {r.name}.")
    things = []
    for arg in args:
        t, why = _resolve(hh, arg)
        if t is None:
            return _fail(call, why)
        things.append(t)
    for t in things:
        why = _can_act_on(hh, f, t)
        if why:
            return _fail(call, why)
    return _object_action(hh, call, things, ok)


def _object_action(hh: Household, call: ActionCall, things: list[Thing], ok) -> ActionResult:
    f, a = call.func, hh.agent
    t = things[0]
    if f == "move":
        if a.holding == t.name:
            return ok(f"Already holding {t.label}.")
        a.room, a.x, a.y, a.heading = t.room, *approach(hh, t)
        follow_agent(hh)
        return ok(f"Moved next to {t.label}.")
    if f == "grasp":
        if a.holding is not None:
            return _fail(call, f"The hand is full: {hh.things[a.holding].label} must be put down first.")
        if not t.movable:
            return _fail(call, f"{t.label} is fixed in place and cannot be picked up.")
        if t.heavy:
            return _fail(call, f"{t.label} is too heavy to lift.")
        if not _within(hh, t):
            return _fail(call, f"{t.label} is out of reach; move closer first.")
        riders = len(carried_with(hh, t.name))
        carry(hh, t)
        extra = f" (with the {riders} thing{'s' if riders != 1 else ''} on or in it)" if riders else ""
        return ok(f"Picked up {t.label}{extra}.")
    if f in TWO_ARGS:
        return _put(hh, call, t, things[1], ok)
    if f in ("open", "close"):
        if not t.openable:
            return _fail(call, f"{t.label} has nothing to open or close.")
        if not _within(hh, t):
            return _fail(call, f"{t.label} is out of reach; move closer first.")
        t.is_open = f == "open"
        return ok(f"{t.label} is now {'open' if t.is_open else 'closed'}.")
    state, word = STATE_ACTIONS[f]
    if state not in t.capabilities:
        return _fail(call, f"{t.label} cannot be {word}.")
    if not _within(hh, t):
        return _fail(call, f"{t.label} is out of reach; move closer first.")
    if f == "toggle_off":
        t.states.discard(state)
    else:
        t.states.add(state)
        t.states.discard({"frozen": "hot", "hot": "frozen"}.get(state, ""))
    return ok(f"{t.label} is now {word}.")


def _put(hh: Household, call: ActionCall, t: Thing, target: Thing, ok) -> ActionResult:
    f = call.func
    if hh.agent.holding != t.name:
        return _fail(call, f"{t.label} is not in the hand; grasp it first.")
    if target.name == t.name or target in carried_with(hh, t.name):
        return _fail(call, f"{t.label} cannot be put {f[4:].replace('_', ' ')} itself or what it carries.")
    if f == "put_inside":
        if not target.container:
            return _fail(call, f"{target.label} cannot hold things inside it.")
        if target.openable and not target.is_open:
            return _fail(call, f"{target.label} is closed; open it first.")
    if f == "put_on_top" and not is_floor(target) and min(target.box.w, target.box.d) < 0.2 \
            and target.box.h > 1.0:
        return _fail(call, f"{target.label} has no top wide enough to hold anything.")
    if f == "put_under" and (is_floor(target) or target.box.h < 0.3 or target.box.z > 0.05):
        return _fail(call, f"Nothing can be put under {target.label}.")
    if f == "put_next_to" and is_floor(target):
        return _fail(call, f"{target.label} is a floor; use put_on_top to set something on it.")
    if not _within(hh, target):
        return _fail(call, f"{target.label} is out of reach; move closer first.")
    if f == "put_inside":
        if not place_inside(hh, t, target):
            return _fail(call, f"{target.label} is full; {t.label} does not fit.")
        return ok(f"{t.label} is now inside {target.label}.")
    if f == "put_on_top":
        if not place_on(hh, t, target, near=(hh.agent.x, hh.agent.y)):
            return _fail(call, f"There is no free space on {target.label} for {t.label}.")
        return ok(f"{t.label} is now on {target.label}.")
    if f == "put_under":
        if not place_under(hh, t, target):
            return _fail(call, f"There is no free space under {target.label}.")
        return ok(f"{t.label} is now under {target.label}.")
    if not place_next_to(hh, t, target):
        return _fail(call, f"There is no free space beside {target.label}.")
    return ok(f"{t.label} is now next to {target.label}.")


def _unknown_function(call: ActionCall) -> str:
    f = call.func
    if f == "move_to":
        first = call.args[0] if call.args else ""
        hint = "move" if first[:1].isdigit() else "move_to_room"
    else:
        hint = HINTS.get(f) or next(iter(difflib.get_close_matches(f, FUNCTIONS, n=1, cutoff=0.5)), "")
    tail = f" Did you mean {hint}?" if hint else ""
    return f"{f} is not one of the available actions.{tail}"


def fridge(hh: Household) -> Thing | None:
    """The task's fridge, the one ``get_fridge_view`` looks into (None when the task has none)."""
    return next((t for t in hh.labelled() if "refrigerator" in t.category or "fridge" in t.category), None)


def _resolve(hh: Household, arg: str) -> tuple[Thing | None, str]:
    """``3``, ``3.beer_bottle`` or ``3_beer_bottle`` -> the thing numbered 3 (its name must agree)."""
    if "." in arg:
        num, name = arg.split(".", 1)
    elif "_" in arg:
        num, _, name = arg.partition("_")
    else:
        num, name = arg, ""
    try:
        ident = int(num.strip())
    except ValueError:
        return None, f"{arg!r} is not an object here; name objects by the number shown on the picture."
    t = hh.by_id(ident)
    if t is None:
        top = max((u.id or 0) for u in hh.labelled()) if hh.labelled() else 0
        return None, f"There is no object number {ident}; the numbers run from 1 to {top}."
    name = name.strip().lower()
    if name and name not in (t.category, t.category.split("_")[-1], t.label):
        return None, f"Object {ident} is {t.label}, not {name!r}; check the number."
    return t, ""


def _can_act_on(hh: Household, f: str, t: Thing) -> str:
    a = hh.agent
    held = a.holding == t.name
    if f == "move":
        if not held and t.name not in hh.seen and t.name not in hh.in_view:
            return f"{t.label} has not been seen yet, so there is nowhere to move to."
        if not held and t.name not in hh.in_view and t.room != a.room:
            return f"{t.label} is not in this room; go to its room first."
        return ""
    if not held and t.name not in hh.in_view and not (
            t.room == a.room and planar_distance(a.x, a.y, t.box) <= NEAR_ENOUGH):
        return f"{t.label} is not in view."
    box = shut_in(hh, t)
    if box is not None and not held:
        return f"{t.label} is shut inside {box.label}; open it first."
    return ""


def _within(hh: Household, t: Thing) -> bool:
    a = hh.agent
    if a.holding == t.name or (t.room == a.room and is_floor(t)):
        return True
    return t.room == a.room and planar_distance(a.x, a.y, t.box) <= REACH


def _entry(hh: Household, room: str) -> tuple[float, float]:
    """Where ``move_to_room`` lands: a seeded spot near the middle of the room, clear of furniture."""
    r = hh.rooms[room]
    rng = random.Random(f"{hh.seed}|{room}")
    cx, cy = (r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2
    for _ in range(30):
        x, y = cx + rng.uniform(-0.15, 0.15) * (r.x1 - r.x0), cy + rng.uniform(-0.15, 0.15) * (r.y1 - r.y0)
        if _clear(hh, room, x, y, ()):
            return round(x, 3), round(y, 3)
    return round(cx, 3), round(cy, 3)


def _obstacles(hh: Household, room: str, ignore: tuple[str, ...]):
    """What the robot cannot stand on: furniture and things on the floor taller than a rug."""
    for t in hh.things.values():
        if t.room != room or is_floor(t) or t.box.h <= 0.05 or t.box.z > 0.5 or t.name in ignore \
                or t.name == hh.agent.holding:
            continue
        if t.relation is None or (t.relation[0] == "ontop" and is_floor(hh.things[t.relation[1]])):
            yield t


def _clear(hh: Household, room: str, x: float, y: float, ignore: tuple[str, ...]) -> bool:
    r = hh.rooms[room]
    if not (r.x0 + 0.25 <= x <= r.x1 - 0.25 and r.y0 + 0.25 <= y <= r.y1 - 0.25):
        return False
    me = Box(x, y, 0.0, 0.4, 0.4, 1.0)
    return not any(footprint_overlap(me, t.box) for t in _obstacles(hh, room, ignore))


def approach(hh: Household, t: Thing) -> tuple[float, float, int]:
    """Where ``move`` puts the robot: clear floor beside ``t`` (or beside what holds it), facing it."""
    r = hh.rooms[t.room]
    if is_floor(t):
        x, y = _entry(hh, t.room)
        return x, y, hh.agent.heading
    root = t
    while root.relation is not None and root.relation[0] in ("ontop", "inside"):
        up = hh.things[root.relation[1]]
        if is_floor(up) or up.box.h <= 0.05:  # flat ground (a lawn) is stood on, not walked around
            break
        root = up
    ignore = tuple(u.name for u in [root, *carried_with(hh, root.name)])
    b, c = root.box, t.box
    best = None
    for off in STAND_OFF:
        for x, y in ((b.x + b.w / 2 + off, c.y), (b.x - b.w / 2 - off, c.y),
                     (c.x, b.y + b.d / 2 + off), (c.x, b.y - b.d / 2 - off)):
            if _clear(hh, t.room, x, y, ignore):
                key = (round(planar_distance(x, y, c), 3), round(math.hypot(x - (r.x0 + r.x1) / 2,
                                                                            y - (r.y0 + r.y1) / 2), 3))
                if best is None or key < best[0]:
                    best = (key, x, y)
        if best is not None and best[0][0] <= REACH - 0.1:
            break
    if best is None or best[0][0] > REACH - 0.1:  # search the floor around it for any clear spot
        for i in range(-5, 6):
            for j in range(-5, 6):
                x, y = c.x + i * 0.2, c.y + j * 0.2
                if _clear(hh, t.room, x, y, ignore):
                    key = (round(planar_distance(x, y, c), 3), 0.0)
                    if key[0] > 0.2 and (best is None or key < best[0]):
                        best = (key, x, y)
    if best is None:
        x = min(max(c.x, r.x0 + 0.3), r.x1 - 0.3)
        y = min(max(c.y, r.y0 + 0.3), r.y1 - 0.3)
    else:
        _, x, y = best
    angle = math.atan2(c.y - y, c.x - x)
    heading = round(angle / (math.pi / 2)) % HEADINGS
    return round(x, 3), round(y, 3), heading
