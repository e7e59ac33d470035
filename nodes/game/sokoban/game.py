"""One episode of MageBench Sokoban, independent of any transport: the bus node, the Gymnasium env
and the baseline script all play through this class, so they cannot disagree about the rules, the
step budget or the score.

An action is one of ``Up``, ``Down``, ``Left``, ``Right``. Following the framebus environment
convention (docs/environments.md):

* ``None`` (the agent had no usable action) spends a decision and changes nothing, with reward 0:
  in MageBench an unparsable reply never reaches the game but still uses up one of the 50 calls;
* ``{"stop": true}`` ends the episode at once; it spends no decision (a Global-setting agent sends it
  when its plan runs out);
* anything else is invalid, and is treated like ``None`` but marked ``valid: false``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nodes.game.sokoban import benchmark
from nodes.game.sokoban.levels import Level, load_xsb
from nodes.game.sokoban.rules import ACTIONS, Board, from_lurd
from nodes.game.sokoban.scoring import ScoreTracker
from nodes.game.sokoban.solver import Room, optimal_reward, solve
from nodes.game.sokoban.tiers import STEP_LIMIT

_ACTION_SET = frozenset(ACTIONS)


@dataclass(slots=True)
class Step:
    """What one decision did, in the shape of the convention's ``step`` message."""

    t: int
    action: str | None
    valid: bool
    reward: float
    done: bool
    pushed: bool
    stopped: bool


def is_stop(action: Any) -> bool:
    return isinstance(action, dict) and bool(action.get("stop"))


class SokobanGame:
    """A level in play with MageBench's step budget and score bookkeeping."""

    def __init__(self, level: Level, max_steps: int = STEP_LIMIT) -> None:
        self.level = level
        self.max_steps = max_steps
        self.board = Board(level)
        steps = level.meta.get("steps")
        if steps is None:
            raise ValueError(f"level {level.name!r} has no optimal step count; solve it first (prepare_level)")
        self.optimal_steps: int = int(steps)
        self.r_best: float = float(level.meta.get("r_best", optimal_reward(level, self.optimal_steps)))
        self.tracker = ScoreTracker(self.r_best)
        self.t = 0
        self.invalid = 0
        self.stopped = False
        self.history: list[str | None] = []
        self._room: Room | None = None
        self._plan: dict[tuple[frozenset[int], int], str] = {}
        self._stored = _names(level.meta.get("solution") or "")
        self._along: int | None = 0  # moves of the stored solution played so far; None once play left it

    # -- play ------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.board.solved or self.stopped or self.t >= self.max_steps

    def play(self, action: Any) -> Step:
        """Apply one decision's action body."""
        if self.done:
            raise RuntimeError("the episode is over")
        if is_stop(action):
            self.stopped = True
            return Step(self.t, None, True, 0.0, True, False, True)
        t = self.t
        self.t += 1
        if action in _ACTION_SET:
            out = self.board.step(action)
            self.history.append(action)
            if self._along is not None:
                on = self._along < len(self._stored) and self._stored[self._along] == action
                self._along = self._along + 1 if on else None
            self.tracker.add(out.reward)
            return Step(t, action, True, out.reward, self.done, out.pushed, False)
        valid = action is None
        if not valid:
            self.invalid += 1
        self.history.append(None)
        self.tracker.steps += 1
        return Step(t, None, valid, 0.0, self.done, False, False)

    # -- what observers need ---------------------------------------------------------------------
    @property
    def success(self) -> bool:
        return self.board.solved

    @property
    def score(self) -> float:
        return self.tracker.score

    @property
    def truncated(self) -> bool:
        """The step budget ran out before the level was solved (Gymnasium's ``truncated``)."""
        return self.t >= self.max_steps and not self.board.solved and not self.stopped

    def info(self) -> dict[str, Any]:
        """The judge's view of the episode so far (carried in every ``step`` message)."""
        b = self.board
        return {
            "level": self.level.name, "tier": self.level.tier, "cumulative_reward": self.tracker.cumulative,
            "best_reward": self.tracker.best, "r_best": self.r_best, "optimal_steps": self.optimal_steps,
            "boxes_on_target": b.on_target, "boxes": len(b.targets), "success": b.solved,
            "steps": self.t, "max_steps": self.max_steps, "invalid": self.invalid, "stopped": self.stopped,
            "score": self.tracker.score,
        }

    def goal(self) -> str:
        n = len(self.board.targets)
        return (f"Push {'the box' if n == 1 else f'all {n} boxes'} onto the target squares (red dots) "
                f"within {self.max_steps} steps.")

    # -- the oracle -------------------------------------------------------------------------------
    def oracle(self, max_states: int = 500_000) -> str | None:
        """The next action of a shortest solution from the current position, or None when no
        solution exists from here (a box is stuck). Follows the level's stored solution while play
        is still on it, and otherwise solves again from the position (and remembers that plan)."""
        b = self.board
        state = (frozenset(b.boxes), b.player)
        nxt = self._plan.get(state)
        if nxt is not None:
            return nxt
        if self._along is not None and self._along < len(self._stored):
            return self._stored[self._along]
        if self._room is None:
            self._room = Room(self.level)
        sol = solve(b.as_level(), max_states=max_states, room=self._room)
        if sol is None:
            return None
        self._remember(sol.actions)
        return sol.actions[0]

    def _remember(self, actions: tuple[str, ...]) -> None:
        board = Board(self.board.as_level())
        for a in actions:
            self._plan[(frozenset(board.boxes), board.player)] = a
            board.step(a)


def _names(lurd: str) -> list[str]:
    return from_lurd(lurd) if lurd else []


def prepare_level(level: Level, max_states: int = 2_000_000) -> Level:
    """A level with its optimal step count, solution and R_best filled in (benchmark levels
    already have them; levels a user brings are solved here)."""
    if "steps" in level.meta:
        return level
    sol = solve(level, max_states=max_states)
    if sol is None:
        raise ValueError(f"level {level.name!r}: no solution found (searched up to {max_states} states); "
                         "MageBench's score needs the optimal reward of every level")
    meta = {**level.meta, "steps": sol.steps, "solution": sol.lurd, "r_best": optimal_reward(level, sol.steps)}
    return Level(level.width, level.height, level.walls, level.targets, level.boxes, level.player, level.name,
                 level.tier, meta)


def load_levels(params: dict[str, Any]) -> list[Level]:
    """The levels a node (or the gym env) with these params plays, in episode order."""
    if params.get("levels"):
        return [prepare_level(lv) for lv in load_xsb(params["levels"])]
    found = benchmark.levels(params.get("set", "mini"), params.get("tier"))
    if not found:
        raise ValueError(f"no levels in set {params.get('set', 'mini')!r} for tier {params.get('tier')!r}")
    return found
