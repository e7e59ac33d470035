"""The rules of Sokoban as MageBench plays them, and its per-step reward.

Four actions, each a move that becomes a push when a box is in the way (MageBench folded gym-sokoban's
separate move and push actions into one). A push needs the cell behind the box free: no wall, no
second box. Boxes are never pulled. A move into a wall, or a blocked push, still spends the step.

Reward (gym-sokoban's, scaled by 5 as MageBench does): -0.5 per step, +4.5 when the step pushes a
box onto a target, -5.5 when it pushes one off, and +54.5 on the step that puts the last box on its
target (that already contains the last box's bonus: 5 x (10 + 1 - 0.1)).
"""

from __future__ import annotations

from dataclasses import dataclass

from nodes.game.sokoban.levels import Level

ACTIONS: tuple[str, ...] = ("Up", "Down", "Left", "Right")
LURD = {"Up": "u", "Down": "d", "Left": "l", "Right": "r"}
FROM_LURD = {v: k for k, v in LURD.items()}

STEP_REWARD = -0.5
BOX_ON_REWARD = 4.5
BOX_OFF_REWARD = -5.5
FINISH_REWARD = 54.5


def offsets(width: int) -> dict[str, int]:
    """How far each action moves on a board ``width`` cells wide (cells are ``row * width + col``)."""
    return {"Up": -width, "Down": width, "Left": -1, "Right": 1}


@dataclass(slots=True)
class StepOutcome:
    """What one action did: ``moved`` (the player changed cell), ``pushed`` (a box moved),
    ``box_on`` / ``box_off`` (the pushed box arrived on / left a target), ``solved`` and ``reward``."""

    moved: bool
    pushed: bool
    box_on: bool
    box_off: bool
    solved: bool
    reward: float


def step_reward(box_on: bool, box_off: bool, solved: bool) -> float:
    """MageBench's reward for one applied action."""
    if solved:
        return FINISH_REWARD
    if box_on:
        return BOX_ON_REWARD
    if box_off:
        return BOX_OFF_REWARD
    return STEP_REWARD


class Board:
    """A level in play: the fixed room from the :class:`Level` plus the moving boxes and player.

    Kept deliberately small and allocation-free per step, since benchmarks push thousands of steps
    a second through it."""

    __slots__ = ("level", "walls", "targets", "boxes", "player", "on_target", "_offsets")

    def __init__(self, level: Level) -> None:
        self.level = level
        self.walls = level.walls
        self.targets = level.targets
        self._offsets = offsets(level.width)
        self.reset()

    def reset(self) -> None:
        self.boxes: set[int] = set(self.level.boxes)
        self.player: int = self.level.player
        self.on_target: int = len(self.boxes & self.targets)

    @property
    def solved(self) -> bool:
        return self.on_target == len(self.targets)

    def step(self, action: str) -> StepOutcome:
        """Apply one of :data:`ACTIONS` (raises KeyError for anything else)."""
        d = self._offsets[action]
        nxt = self.player + d
        if nxt in self.walls:
            return StepOutcome(False, False, False, False, self.solved, STEP_REWARD)
        boxes = self.boxes
        box_on = box_off = pushed = False
        if nxt in boxes:
            beyond = nxt + d
            if beyond in self.walls or beyond in boxes:
                return StepOutcome(False, False, False, False, self.solved, STEP_REWARD)
            boxes.remove(nxt)
            boxes.add(beyond)
            pushed = True
            was, now = nxt in self.targets, beyond in self.targets
            box_on, box_off = now and not was, was and not now
            self.on_target += int(box_on) - int(box_off)
        self.player = nxt
        solved = self.solved
        return StepOutcome(True, pushed, box_on, box_off, solved,
                           step_reward(box_on, box_off, solved and box_on))

    def state(self) -> tuple[frozenset[int], int]:
        """A hashable snapshot ``(boxes, player)``."""
        return frozenset(self.boxes), self.player

    def as_level(self) -> Level:
        """The current position as a level (for the XSB text view and the solver)."""
        return self.level.with_state(self.boxes, self.player)


def lurd(actions: list[str], pushes: list[bool]) -> str:
    """LURD notation: ``u d l r`` for moves, upper case for pushes."""
    return "".join(LURD[a].upper() if p else LURD[a] for a, p in zip(actions, pushes))


def from_lurd(text: str) -> list[str]:
    """Action names from LURD notation (case is ignored: the push letters just document pushes)."""
    out = []
    for ch in text.strip():
        if ch.isspace():
            continue
        try:
            out.append(FROM_LURD[ch.lower()])
        except KeyError:
            raise ValueError(f"{ch!r} is not a LURD letter (u, d, l, r; upper case for pushes)") from None
    return out
