"""The household's state as plain data: what the world changes, the BDDL backend reads and the
renderer draws.

Kept apart from the rules (``world.py``, ``actions.py``) and the pixels (``camera.py``,
``render.py``) so each of those can be written and tested against hand-built households.
Coordinates are metres in one plane for the whole scene (rooms are rectangles side by side),
``z`` up; a heading is a quarter turn counted anticlockwise from +x, as VAB's four camera
orientations are (``turn_left`` adds one, ``turn_right`` takes one away).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FRAME_SIZE = (1280, 720)
"""VAB renders OmniGibson at 1280 x 720; the drawn view keeps that size."""

CAMERA_HEIGHTS = (0.55, 1.05, 1.55)
"""VAB's camera starts at 1.05 m and moves by 0.5 m per raise/lower, one step each way."""

START_CAMERA = 1
HEADINGS = 4

Relation = Literal["ontop", "inside", "under", "nextto"]
UnaryState = Literal["cooked", "frozen", "toggled_on", "hot", "burnt"]


@dataclass(frozen=True)
class Box:
    """An axis-aligned box: (x, y) its centre in plan, z its bottom; w along x, d along y, h up."""

    x: float
    y: float
    z: float
    w: float
    d: float
    h: float

    @property
    def top(self) -> float:
        return self.z + self.h


@dataclass
class Room:
    name: str  # an instance, as VAB lists them: "kitchen_0"
    kind: str  # BDDL's room type: "kitchen", "living_room", "garden", ...
    x0: float
    y0: float
    x1: float
    y1: float

    def contains(self, x: float, y: float) -> bool:
        return self.x0 <= x <= self.x1 and self.y0 <= y <= self.y1


@dataclass
class Thing:
    """One object of the scene: a BDDL object instance, a room's floor, or unnamed scenery.

    ``id`` is VAB's numeric identifier (1..N over the task-relevant objects, in the order the
    problem lists them); ``None`` marks what the agent cannot name (scenery, floors the goal does
    not mention). ``relation`` is where the thing rests: ``("ontop", "countertop.n.01_1")``.
    """

    name: str  # BDDL instance "beer_bottle.n.01_1", "floor:kitchen_0", or "scenery:sofa_2"
    category: str  # "beer_bottle"
    room: str
    box: Box
    id: int | None = None
    movable: bool = False
    openable: bool = False
    is_open: bool = False
    capabilities: frozenset[str] = frozenset()  # which of UnaryState (and "open") this thing can take
    states: set[str] = field(default_factory=set)
    relation: tuple[Relation, str] | None = None
    nextto: set[str] = field(default_factory=set)  # names this thing was put next to (besides relation)

    @property
    def label(self) -> str:
        """How VAB names the thing to the agent and on the picture: ``3.beer_bottle``."""
        return f"{self.id}.{self.category}"


@dataclass
class Agent:
    room: str
    x: float
    y: float
    heading: int = 0
    camera: int = START_CAMERA  # an index into CAMERA_HEIGHTS
    holding: str | None = None  # a Thing's name

    @property
    def camera_height(self) -> float:
        return CAMERA_HEIGHTS[self.camera]


@dataclass
class Household:
    activity: str
    scene: str
    seed: int
    rooms: dict[str, Room]
    things: dict[str, Thing]  # by name, task-relevant and scenery alike
    agent: Agent

    def labelled(self) -> list[Thing]:
        """The things the agent can name, in identifier order."""
        return sorted((t for t in self.things.values() if t.id is not None), key=lambda t: t.id or 0)

    def by_id(self, ident: int) -> Thing | None:
        for t in self.things.values():
            if t.id == ident:
                return t
        return None
