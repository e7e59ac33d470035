"""TempestRun's rules as V-MAGE plays them: an endless runner inside a neon tunnel, seen from behind the runner.

Spec §2.5 and §8.15. The tunnel is a ring of ``LANES`` floor panels; the runner moves forward on
its own at the level's speed and the view turns with it, so its own lane is always at the bottom.
Three obstacles sit on the panels: red spikes (JUMP over them), purple walls (nothing clears them:
turn to another lane with LEFT or RIGHT) and green enemies (SLIDE into them to kick them away; a
runner on its feet or in the air dies on them). The score is the distance run, in steps of 10
(``int(z / 10) * 10``); the episode ends on death only (V-MAGE sets no frame limit).

The actions are key events, not held keys: JUMP and SLIDE press, RISE releases the slide, LEFT and
RIGHT each turn one lane, and the other frames of a decision send nothing (``repeats = False``),
so a decision is one event followed by ``sample_frames - 1`` frames of NONE. A slide therefore
lasts until RISE, and a sliding runner cannot jump: that is the price of sliding.

The released level settings (spec §2.5) fix the speed, the cell length (the distance between two
rings of the tunnel, where obstacles may stand) and the random rate (the chance that a panel of a
ring holds an obstacle); the foresight (how far ahead the tunnel is built and drawn) and the
rotation speed are the same on every level. Their units are not given: here distances are tunnel
units (the tunnel's radius is 10), speeds units per second of game time, and the rotation speed
radians per second, so a turn of one lane (45 degrees) takes three logic frames.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from nodes.game.vmage.base import DT, Game, Level, level_table

WIDTH, HEIGHT = 1024, 768
ACTIONS = ("JUMP", "LEFT", "RIGHT", "SLIDE", "RISE", "NONE")

LEVELS: dict[int, Level] = level_table("tempestrun", {
    1: {"cell_length": 25, "speed": 100, "random_rate": 0.15},
    2: {"cell_length": 20, "speed": 120, "random_rate": 0.18},
    3: {"cell_length": 15, "speed": 140, "random_rate": 0.25},
    4: {"cell_length": 15, "speed": 160, "random_rate": 0.33},
}, sample_frames=3, max_rounds=None, actions=ACTIONS, idle="NONE")

FORESIGHT = 180.0  # how far ahead the tunnel is built and drawn (every level)
ROTATION_SPEED = 8.0  # radians per second while turning to the next lane (every level)
LANES = 8
LANE_ANGLE = 2 * math.pi / LANES
RADIUS = 10.0

RUN_IN = FORESIGHT / 2  # the first obstacles stand this far ahead of the start
BODY = 2.0  # half the runner's depth along the tunnel
DEPTH = 4.0  # an obstacle's depth along the tunnel
JUMP_SPEED = 12.0  # units per second upward at take-off
GRAVITY = 40.0  # so a jump lasts about 0.6 s and peaks near 1.8 units
SPIKE_HEIGHT = 1.0
KINDS = ("spike", "wall", "enemy")
PLAN_DEPTH = 6  # decisions the scripted policy looks ahead (18 frames; 5 loses most level-4 runs to walls)


@dataclass(frozen=True, slots=True)
class Obstacle:
    """Frozen, so a copy of the game (the scripted policy's look-ahead) can share them; a kick
    replaces the enemy in the game's own list."""

    z: float  # its front, in tunnel units from the start
    lane: int
    kind: str  # spike, wall or enemy
    kicked: bool = False


class TempestRules(Game):
    name = "tempestrun"
    size = (WIDTH, HEIGHT)
    levels: ClassVar[dict[int, Level]] = LEVELS
    repeats: ClassVar[bool] = False  # key events: the other frames of a decision send nothing

    def __init__(self, level: int, seed: int) -> None:
        super().__init__(level, seed)
        s = self.level.settings
        self.cell = float(s["cell_length"])
        self.speed = float(s["speed"])
        self.rate = float(s["random_rate"])
        self.z = 0.0
        self.lane = self.rng.randrange(LANES)  # the lane the runner is on, or turning to
        self.angle = self.lane * LANE_ANGLE  # where it is now, as it turns
        self.height = 0.0
        self.vy = 0.0
        self.sliding = False  # the slide key is down (a slide takes effect on the floor)
        self.kicked = 0
        self.obstacles: list[Obstacle] = []
        self._built = RUN_IN - self.cell  # the z of the last ring built
        self._build()

    # the tunnel ahead ------------------------------------------------------------------------------
    def _build(self) -> None:
        """Rings every cell length up to the foresight; each panel of a ring holds an obstacle with
        the level's random rate, and a ring never walls off more than LANES - 2 panels."""
        while self._built + self.cell <= self.z + FORESIGHT:
            self._built += self.cell
            walls = 0
            for lane in range(LANES):
                if self.rng.random() < self.rate:
                    kind = self.rng.choice(KINDS)
                    walls += kind == "wall"
                    self.obstacles.append(Obstacle(self._built, lane, "spike" if walls > LANES - 2 else kind))

    # logic -----------------------------------------------------------------------------------------
    @property
    def airborne(self) -> bool:
        return self.height > 0.0 or self.vy > 0.0

    @property
    def ducking(self) -> bool:
        return self.sliding and not self.airborne

    @property
    def floor_lane(self) -> int:
        """The lane under the runner now (while turning, the nearer of the two)."""
        return round(self.angle / LANE_ANGLE) % LANES

    def tick(self, action: str) -> None:
        if action == "JUMP" and not self.airborne and not self.sliding:
            self.vy = JUMP_SPEED
        elif action == "SLIDE":
            self.sliding = True
        elif action == "RISE":
            self.sliding = False
        elif action in ("LEFT", "RIGHT"):
            self.lane = (self.lane + (-1 if action == "LEFT" else 1)) % LANES
        self._turn()
        if self.airborne:
            self.vy -= GRAVITY * DT
            self.height += self.vy * DT
            if self.height <= 0.0:
                self.height, self.vy = 0.0, 0.0
        before = self.z
        self.z += self.speed * DT
        self.score = float(int(self.z / 10) * 10)
        self._collide(before)
        passed = 0  # the list is in z order: drop what is well behind the runner
        while passed < len(self.obstacles) and self.obstacles[passed].z + DEPTH < self.z - BODY - 10:
            passed += 1
        if passed:
            del self.obstacles[:passed]
        self._build()

    def _turn(self) -> None:
        target = self.lane * LANE_ANGLE
        gap = (target - self.angle + math.pi) % (2 * math.pi) - math.pi  # the short way round
        step = ROTATION_SPEED * DT
        self.angle = target if abs(gap) <= step else self.angle + math.copysign(step, gap)
        self.angle %= 2 * math.pi

    def _collide(self, before: float) -> None:
        lane = self.floor_lane
        for i, o in enumerate(self.obstacles):
            if o.z > self.z + BODY:
                return
            if o.lane != lane or o.kicked or o.z + DEPTH < before - BODY:
                continue
            if o.kind == "spike" and self.height <= SPIKE_HEIGHT:
                self.end("the runner ran into red spikes")
            elif o.kind == "wall":
                self.end("the runner ran into a purple wall")
            elif o.kind == "enemy":
                if self.ducking:
                    self.obstacles[i] = Obstacle(o.z, o.lane, o.kind, kicked=True)
                    self.kicked += 1
                else:
                    self.end("the runner ran into a green enemy")
            if self.over:
                return

    def ahead(self, lane: int, within: float = FORESIGHT) -> list[Obstacle]:
        """The obstacles of ``lane`` not yet passed, nearest first."""
        found = [o for o in self.obstacles
                 if o.lane == lane and not o.kicked and o.z + DEPTH >= self.z - BODY and o.z - self.z <= within]
        return sorted(found, key=lambda o: o.z)

    # views -----------------------------------------------------------------------------------------
    def describe(self) -> str:
        pose = "jumping" if self.airborne else "sliding" if self.sliding else "running"
        parts = []
        for offset, name in ((0, "your lane"), (-1, "the lane to your left"), (1, "the lane to your right")):
            near = self.ahead((self.lane + offset) % LANES, 90.0)[:2]
            things = ", ".join(f"a {o.kind} {max(0.0, o.z - self.z):.0f} ahead" for o in near) or "clear"
            parts.append(f"{name}: {things}")
        return (f"Tempest Run, a tunnel of {LANES} lanes (numbered 0-{LANES - 1} round it, LEFT one lower); "
                f"you are in lane {self.lane}, run at {self.speed:.0f} units per second and are "
                f"{pose}{' with the slide key down' if self.sliding and self.airborne else ''}. Within 90 units: "
                f"{'; '.join(parts)}. Distance: {self.score:g}.")

    def policy(self) -> str:
        """The first action (in the order NONE, JUMP, SLIDE, RISE, LEFT, RIGHT) after which some
        plan survives the next ``PLAN_DEPTH`` decisions and lands any jump it is in: a search on
        copies of the state, not the picture, so it is the baseline a model should beat. Waiting
        comes first, so it acts at the last safe decision it can see."""
        for action in self._sensible():
            after = self._after(action)
            if after is not None and after._survives(PLAN_DEPTH - 1):
                return action
        return "NONE"

    def _sensible(self) -> list[str]:
        """The actions that would change anything now (a jump in the air does nothing)."""
        jump = [] if self.airborne or self.sliding else ["JUMP"]
        duck = ["RISE"] if self.sliding else ["SLIDE"]
        return ["NONE", *jump, *duck, "LEFT", "RIGHT"]

    def _after(self, action: str) -> TempestRules | None:
        """A copy played one decision on, None if it dies; it builds no new tunnel and so leaves
        this game's random generator alone."""
        twin = copy.copy(self)
        twin._built = math.inf
        twin.obstacles = list(self.obstacles)  # shared obstacles (frozen); its own list, for kicks
        for i in range(self.level.sample_frames):
            twin.tick(action if i == 0 else "NONE")
            if twin.over:
                return None
        return twin

    def _survives(self, depth: int) -> bool:
        if depth == 0:
            while self.airborne and not self.over:  # a jump must land somewhere safe
                self.tick("NONE")
            return not self.over
        return any(after is not None and after._survives(depth - 1)
                   for after in (self._after(a) for a in self._sensible()))

    def state(self) -> dict[str, Any]:
        nearest = self.ahead(self.lane)
        first = nearest[0] if nearest else None
        return {"z": self.z, "lane": self.lane, "angle": self.angle, "height": self.height, "vy": self.vy,
                "sliding": self.sliding, "kicked": self.kicked, "obstacles": len(self.obstacles),
                "next_kind": None if first is None else first.kind,
                "next_distance": None if first is None else first.z - self.z}
