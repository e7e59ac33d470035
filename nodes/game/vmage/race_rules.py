"""Race's rules as V-MAGE plays them: drive a car to a trophy in a walled arena without touching anything.

Spec §2.1 (Tables 18-19). Six levels, two views with different action names:

* levels 1-3, the **map** view (``LEFT, RIGHT, UP, DOWN``): the whole arena is shown and an action
  translates the car in that screen direction (no inertia), one frame per decision;
* levels 4-6, the **car** view (``LEFT, RIGHT, FORWARD, BACKWARD``; level 6 lists them FORWARD
  first, as the released configs do): the camera follows the car, and the actions are the
  driver's: FORWARD / BACKWARD accelerate along or against the car's facing, LEFT / RIGHT steer.
  The car keeps its speed between decisions (acceleration "low" on level 4, "mid" on 5 and 6), so
  a player must read its velocity from the frames.

Levels 7-9 are V-MAGE's "No History" variants of levels 1-3: the same game, seed for seed, where
the model is shown only the current screenshot. What the model is shown is the agent's business
in framebus, so the game is unchanged and the level names its own prompt template, whose
defaults give the agent no memory (am 0, om 1); see catalog.template_for and docs/vmage.md.

Touching the trophy scores 100 and ends the episode; touching the arena's white boundary or an
obstacle ends it at 0, as does reaching the level's ``max_rounds`` frames (100 on level 1 and its
No History variant, 150 on the others). Layouts follow the spec's randomisation (the car and the
trophy on opposite sides, mirrored at random, heights drawn; level 2's square block and level 3's
short wall midway between them); distances and speeds are ours, in pixels of the 1024x768 window
and per logic frame.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar

import pygame

from nodes.game.vmage.base import Game, Level, level_table

WIDTH, HEIGHT = 1024, 768
ARENA = pygame.Rect(40, 40, WIDTH - 80, HEIGHT - 80)  # inside the white boundary lines
CAR_LENGTH, CAR_WIDTH = 56, 32
CAR_RADIUS = 24.0  # the car's body for collisions: a circle (our simplification of the rotated box)
TROPHY_RADIUS = 28.0
TOP_SPEED = 12.0  # car view, px per frame forward; backward at most half of it
DRAG = 0.96  # car view: speed kept per frame while not accelerating
TURN = 6.0  # car view: degrees of steering per frame
ACCELERATION = {"low": 0.4, "mid": 0.8}  # car view, px per frame per frame

MAP_ACTIONS = ("LEFT", "RIGHT", "UP", "DOWN")
CAR_ACTIONS = ("LEFT", "RIGHT", "FORWARD", "BACKWARD")
CAR_ACTIONS_L6 = ("FORWARD", "BACKWARD", "LEFT", "RIGHT")
IDLE = "NONE"  # no key held: never offered to the model (V-MAGE's Race has no such action); the realtime
# clock plays it while no decision has arrived (the map-view car stands, the car-view car coasts)

_MAP = {"view": "map", "step": 30, "heading": None, "acceleration": None}
_CAR = {"view": "car", "step": None, "sample_frames": 3}
LEVELS: dict[int, Level] = level_table("race", {
    1: {**_MAP, "obstacle": None, "max_rounds": 100, "history": True, "base": 1},
    2: {**_MAP, "obstacle": "square", "history": True, "base": 2},
    3: {**_MAP, "obstacle": "wall", "history": True, "base": 3},
    4: {**_CAR, "obstacle": None, "heading": "up", "acceleration": "low", "actions": CAR_ACTIONS, "history": True,
        "base": 4},
    5: {**_CAR, "obstacle": None, "heading": "horizontal", "acceleration": "mid", "actions": CAR_ACTIONS,
        "history": True, "base": 5},
    6: {**_CAR, "obstacle": "square", "heading": "up", "acceleration": "mid", "actions": CAR_ACTIONS_L6,
        "sample_frames": 1, "history": True, "base": 6},
    7: {**_MAP, "obstacle": None, "max_rounds": 100, "history": False, "base": 1},
    8: {**_MAP, "obstacle": "square", "history": False, "base": 2},
    9: {**_MAP, "obstacle": "wall", "history": False, "base": 3},
}, sample_frames=1, max_rounds=150, actions=MAP_ACTIONS, idle=IDLE)

NO_HISTORY = {7: 1, 8: 2, 9: 3}
"""V-MAGE's "Level N No History" by our level number."""

MAP_X = (300.0, 420.0)  # the map view: the car's (or, mirrored, the trophy's) range of x; y in MAP_Y
MAP_Y = (200.0, 568.0)
UP_X, UP_Y = (400.0, 624.0), (540.0, 300.0)  # levels 4 and 6: x range, the car's y and the trophy's
SIDE_X = 330.0  # level 5: the x of the car or of the trophy (mirrored); y in 250-518
BLOCK = 120  # the side of the square obstacle (levels 2, 6)
WALL = (24, 180)  # the short wall of level 3: thickness, length


def level_name(level: int) -> str:
    """The paper's name of a level ("Level 1 No History" is our level 7)."""
    return f"Level {NO_HISTORY[level]} No History" if level in NO_HISTORY else f"Level {level}"


def race_template(level: int) -> str:
    """The bundled prompt template of a level: the map view's with or without the obstacle
    question (levels 2-3 ask it), the car view's, and the no-history versions, whose defaults give
    the agent no memory (one image per call)."""
    base = NO_HISTORY.get(level, level)
    name = "vmage_race_car" if base >= 4 else "vmage_race_map_obstacles" if base >= 2 else "vmage_race_map"
    return f"{name}_no_history" if level in NO_HISTORY else name


def circle_hits_rect(x: float, y: float, r: float, rect: pygame.Rect) -> bool:
    nx, ny = min(max(x, rect.left), rect.right), min(max(y, rect.top), rect.bottom)
    return (x - nx) ** 2 + (y - ny) ** 2 < r * r


class RaceRules(Game):
    name = "race"
    size = (WIDTH, HEIGHT)
    levels: ClassVar[dict[int, Level]] = LEVELS

    def __init__(self, level: int, seed: int) -> None:
        super().__init__(level, seed)
        s = self.level.settings
        self.view: str = s["view"]
        self.step = float(s["step"] or 0)
        self.accel = ACCELERATION.get(s["acceleration"] or "", 0.0)
        self.speed = 0.0
        self.obstacles: list[pygame.Rect] = []
        rng = self.rng
        if s["heading"] == "horizontal":  # level 5: the car beside the trophy, facing left or right at random
            left = rng.random() < 0.5
            self.x, self.trophy_x = (SIDE_X, WIDTH - SIDE_X) if left else (WIDTH - SIDE_X, SIDE_X)
            self.y, self.trophy_y = rng.uniform(250, 518), rng.uniform(250, 518)
            self.heading = rng.choice((0.0, 180.0))
        elif s["heading"] == "up":  # levels 4 and 6: the car at the bottom facing up, the trophy at the top
            self.x, self.y = rng.uniform(*UP_X), UP_Y[0]
            self.trophy_x, self.trophy_y = rng.uniform(*UP_X), UP_Y[1]
            self.heading = 90.0
        else:  # the map view: car and trophy on opposite sides, mirrored at random
            left = rng.random() < 0.5
            a, b = rng.uniform(*MAP_X), rng.uniform(WIDTH - MAP_X[1], WIDTH - MAP_X[0])
            self.x, self.trophy_x = (a, b) if left else (b, a)
            self.y, self.trophy_y = rng.uniform(*MAP_Y), rng.uniform(*MAP_Y)
            self.heading = 0.0 if left else 180.0  # the sprite faces its last move, the trophy at first
        mid = ((self.x + self.trophy_x) / 2, (self.y + self.trophy_y) / 2)
        if s["obstacle"] == "square":
            self.obstacles.append(pygame.Rect(0, 0, BLOCK, BLOCK))
        elif s["obstacle"] == "wall":
            thick, long = WALL
            self.obstacles.append(pygame.Rect(0, 0, *((thick, long) if rng.random() < 0.5 else (long, thick))))
        for rect in self.obstacles:
            rect.center = (round(mid[0]), round(mid[1]))
        self.start_distance = self.distance()
        self._field: dict[tuple[int, int], int] | None = None  # the map planner's, made at its first call
        self._origin = (self.x, self.y)

    # logic ---------------------------------------------------------------------------------------
    def tick(self, action: str) -> None:
        if self.view == "map":
            dx, dy, heading = {"LEFT": (-1, 0, 180.0), "RIGHT": (1, 0, 0.0), "UP": (0, -1, 90.0),
                               "DOWN": (0, 1, 270.0)}.get(action, (0, 0, self.heading))
            self.x += dx * self.step
            self.y += dy * self.step
            self.heading = heading
        else:
            self._drive(action)
        if self.distance() < CAR_RADIUS + TROPHY_RADIUS:
            self.score = 100.0
            self.end("the car reached the trophy")
        elif self.crashed(self.x, self.y):
            self.end("the car hit an obstacle" if self._hits_obstacle(self.x, self.y) else "the car hit the wall")

    def _drive(self, action: str) -> None:
        if action == "FORWARD":
            self.speed = min(TOP_SPEED, self.speed + self.accel)
        elif action == "BACKWARD":
            self.speed = max(-TOP_SPEED / 2, self.speed - self.accel)
        else:
            self.speed *= DRAG
            if action == "LEFT":
                self.heading = (self.heading + TURN) % 360.0
            elif action == "RIGHT":
                self.heading = (self.heading - TURN) % 360.0
        rad = math.radians(self.heading)
        self.x += math.cos(rad) * self.speed
        self.y -= math.sin(rad) * self.speed  # screen y grows downward; heading 90 is up

    def distance(self) -> float:
        return math.hypot(self.trophy_x - self.x, self.trophy_y - self.y)

    def _hits_obstacle(self, x: float, y: float, r: float = CAR_RADIUS) -> bool:
        return any(circle_hits_rect(x, y, r, rect) for rect in self.obstacles)

    def crashed(self, x: float, y: float, r: float = CAR_RADIUS) -> bool:
        """Whether a car at (x, y) touches the boundary or an obstacle."""
        outside = x - r < ARENA.left or x + r > ARENA.right or y - r < ARENA.top or y + r > ARENA.bottom
        return outside or self._hits_obstacle(x, y, r)

    def progress(self) -> float:
        """V-MAGE's 'completion degree': the share of the starting distance to the trophy covered."""
        if self.score >= 100.0:
            return 1.0
        return max(0.0, 1.0 - self.distance() / self.start_distance) if self.start_distance else 0.0

    # views -----------------------------------------------------------------------------------------
    def describe(self) -> str:
        moving = (f" It faces {self.heading:.0f} degrees (0 is right, 90 is up) and moves at {self.speed:+.1f} px "
                  f"per frame along that facing." if self.view == "car" else "")
        blocks = "; ".join(f"x {r.left}-{r.right}, y {r.top}-{r.bottom}" for r in self.obstacles) or "none"
        return (f"Race, {WIDTH}x{HEIGHT} arena walled at x {ARENA.left}-{ARENA.right}, y {ARENA.top}-{ARENA.bottom}, "
                f"y grows downward, {self.view} view. The car (radius {CAR_RADIUS:g}) is at x {self.x:.0f}, "
                f"y {self.y:.0f}.{moving} The trophy is at x {self.trophy_x:.0f}, y {self.trophy_y:.0f}, "
                f"{self.distance():.0f} px away. Obstacles: {blocks}.")

    def state(self) -> dict[str, Any]:
        return {"x": self.x, "y": self.y, "heading": self.heading, "speed": self.speed, "trophy_x": self.trophy_x,
                "trophy_y": self.trophy_y, "obstacles": [tuple(r) for r in self.obstacles],
                "progress": self.progress(), "view": self.view}

    # the scripted policy ------------------------------------------------------------------------------
    def policy(self) -> str:
        """Map view: the first move of a shortest path over the car's reachable grid; car view:
        steer for the trophy (or around an obstacle's corner) and keep a speed it can stop from."""
        return self._map_policy() if self.view == "map" else self._car_policy()

    def _cell_xy(self, cell: tuple[int, int]) -> tuple[float, float]:
        return self._origin[0] + cell[0] * self.step, self._origin[1] + cell[1] * self.step

    def _map_policy(self) -> str:
        if self._field is None:  # breadth-first distances to the trophy over the cells the car can reach
            self._origin = (self.x, self.y)  # the grid of the car's reachable positions from here
            free: dict[tuple[int, int], bool] = {}  # reachable cell -> whether the trophy is touched there
            for i in range(-40, 41):
                for j in range(-30, 31):
                    x, y = self._cell_xy((i, j))
                    if not self.crashed(x, y):
                        free[(i, j)] = math.hypot(self.trophy_x - x, self.trophy_y - y) < CAR_RADIUS + TROPHY_RADIUS
            field = {c: 0 for c, goal in free.items() if goal}
            queue = deque(field)
            while queue:
                i, j = queue.popleft()
                for n in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                    if n in free and n not in field:
                        field[n] = field[(i, j)] + 1
                        queue.append(n)
            self._field = field
        here = (round((self.x - self._origin[0]) / self.step), round((self.y - self._origin[1]) / self.step))
        moves = {"LEFT": (-1, 0), "RIGHT": (1, 0), "UP": (0, -1), "DOWN": (0, 1)}
        field = self._field
        return min(moves, key=lambda a: field.get((here[0] + moves[a][0], here[1] + moves[a][1]), 10**6))

    def _car_target(self) -> tuple[float, float]:
        """The next point of the shortest way to the trophy round the obstacles' corners (a
        visibility graph over the corners of each obstacle grown by the car and a margin)."""
        here, goal = (self.x, self.y), (self.trophy_x, self.trophy_y)
        grown = [r.inflate(2 * (CAR_RADIUS + 30), 2 * (CAR_RADIUS + 30)) for r in self.obstacles]
        solid = [r.inflate(2 * (CAR_RADIUS + 8), 2 * (CAR_RADIUS + 8)) for r in self.obstacles]
        points = [here, goal, *[c for r in grown for c in (r.topleft, r.topright, r.bottomleft, r.bottomright)]]

        def clear(a: tuple[float, float], b: tuple[float, float]) -> bool:
            line = (round(a[0]), round(a[1])), (round(b[0]), round(b[1]))
            return not any(r.clipline(*line) for r in solid)

        best = {0: 0.0}
        first: dict[int, int] = {}
        todo = set(range(len(points)))
        while todo:  # Dijkstra over a handful of points
            i = min((k for k in todo if k in best), key=best.__getitem__, default=None)
            if i is None:
                break
            todo.discard(i)
            for j in todo:
                if clear(points[i], points[j]):
                    d = best[i] + math.dist(points[i], points[j])
                    if d < best.get(j, math.inf):
                        best[j], first[j] = d, j if i == 0 else first[i]
        return points[first[1]] if 1 in first else goal

    def _car_policy(self) -> str:
        tx, ty = self._car_target()
        want = math.degrees(math.atan2(-(ty - self.y), tx - self.x))
        diff = (want - self.heading + 180.0) % 360.0 - 180.0
        frames = self.level.sample_frames
        if abs(diff) > TURN * frames / 2 and (abs(diff) > 20 or self.speed > 1.0):
            if abs(self.speed) > 4.0 and abs(diff) > 45:
                return "BACKWARD" if self.speed > 0 else "FORWARD"  # slow down before a sharp turn
            return "LEFT" if diff > 0 else "RIGHT"
        room = math.dist((self.x, self.y), (tx, ty))
        safe = min(TOP_SPEED, 0.7 * math.sqrt(2 * self.accel * max(room, 1.0)) + 2.0)
        if self.speed > safe + self.accel * frames:
            return "BACKWARD"
        if self.speed < safe:
            return "FORWARD"
        return "LEFT" if diff > 0 else "RIGHT"  # coast, correcting the facing
