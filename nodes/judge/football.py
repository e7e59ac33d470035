"""MageBench's football score: a dense shaped reward computed from the raw match state, frame by frame.

The environment streams every engine frame a decision played (state + the action codes applied)
on its ``step`` output; this judge replays that stream through ``ShapedReward`` and ends each
episode with the summed reward and its terms. Two variants exist, because the paper's formula and
the released code disagree (spec §2.3 and §7.16):

* ``code`` (default): what MageBench's evaluator computes. Weights 0.8 / 1.0 / 2.0 / 1.0 / 20 / 100
  times 20; only *new* forward progress pays; successive successful passes pay x0.75 each; the
  shot pays at most 13.33 and scales with closeness to goal; only the first shot until the ball
  changes hands counts; an interception pays 20·t/400 and ends the task; no time-out bonus.
  The published baselines (idle 2.53, random 17.33) and every model score were produced by this
  code, so it is the one to compare against.
* ``paper``: Eq. 1 as printed: λ = 16, 20, 40, 20, 400, 100; ball progress and opponents passed
  both count backwards moves (so a score can go negative); passes do not decay; the shot term is
  uncapped; the ball going out of play counts as an interception; surviving to T = 400 frames
  pays λ4.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from kernel.sdk.judge import JudgedEpisode, JudgeNode
from kernel.sdk.node import NodeParams
from kernel.sdk.steps import StepRecord
from nodes.game.football.raw_state import State, mirror
from nodes.game.football.scenarios import load_magebench, mini_subset
from nodes.judge.football_paper import SCORES, SETS, SOURCE, paper_set

PASS_CODES = frozenset({9, 10, 11})
SHOT_CODE = 12
T_FRAMES = 400
GOAL_TARGETS = ((1.0, -0.044), (1.0, -0.02), (1.0, 0.0), (1.0, 0.022), (1.0, 0.044))
PATH_SAMPLES = 100
TERMS = ("progress", "opponents_passed", "goal", "interception", "pass", "shot", "timeout")


@dataclass(frozen=True)
class Weights:
    progress: float
    opponents_passed: float
    goal: float
    interception: float
    pass_: float
    shot: float


# The code's weights with its x20 scaling folded in; the shot is then capped at goal / 3.
CODE_WEIGHTS = Weights(progress=16.0, opponents_passed=20.0, goal=40.0, interception=20.0, pass_=400.0, shot=2000.0)
PAPER_WEIGHTS = Weights(progress=16.0, opponents_passed=20.0, goal=40.0, interception=20.0, pass_=400.0, shot=100.0)


def opponents_passed(state: State) -> int:
    """How many opponents the ball has got past (opponents with a smaller x than the ball)."""
    bx = state["ball"][0]
    return sum(1 for p in state["right_team"] if bx > p[0])


def pass_clearance(state: State, at: tuple[float, float]) -> float:
    """S_pass: how free the receiver at ``at`` is, min over opponents of distance / (10·max(cos,0) + 1),
    where the angle is between the receiver->opponent and receiver->goal directions: an opponent
    standing between the receiver and the goal counts ten times as close."""
    gx, gy = 1.0 - at[0], 0.0 - at[1]
    glen = math.hypot(gx, gy) or 1e-9
    best = math.inf
    for p in state["right_team"]:
        dx, dy = p[0] - at[0], p[1] - at[1]
        dist = math.hypot(dx, dy)
        cos = (dx * gx + dy * gy) / (dist * glen) if dist > 0 else 1.0
        best = min(best, dist / (10.0 * max(cos, 0.0) + 1.0))
    return 0.0 if best is math.inf else best


def shot_clearance(state: State) -> float:
    """S_shot: over five aim points across the goal mouth, the best of (the closest any opponent
    comes to the straight ball path), each path sampled at 100 points."""
    bx, by = state["ball"][0], state["ball"][1]
    opponents = state["right_team"]
    best = 0.0
    for tx, ty in GOAL_TARGETS:
        closest = math.inf
        for i in range(1, PATH_SAMPLES + 1):
            px, py = bx + (tx - bx) * i / PATH_SAMPLES, by + (ty - by) * i / PATH_SAMPLES
            for o in opponents:
                closest = min(closest, math.hypot(px - o[0], py - o[1]))
        if closest != math.inf:
            best = max(best, closest)
    return best


def shot_distance_factor(state: State) -> float:
    """The code's extra shot factor: 1 within 0.3 of the goal line, else the ball's x (0 at midfield)."""
    dist = 1.0 - state["ball"][0]
    return 1.0 if dist < 0.3 else max(1.0 - dist, 0.0)


@dataclass
class ShapedReward:
    """The reward of one episode, fed frame by frame (states in the judged team's frame: it is the
    left team, attacking x = 1)."""

    variant: str = "code"
    terms: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TERMS, 0.0))
    finished: bool = False
    frames: int = 0

    def __post_init__(self) -> None:
        if self.variant not in ("code", "paper"):
            raise ValueError(f"reward variant must be code or paper, got {self.variant!r}")
        self.w = CODE_WEIGHTS if self.variant == "code" else PAPER_WEIGHTS
        self.started = False

    @property
    def total(self) -> float:
        return sum(self.terms.values())

    def start(self, state: State) -> None:
        """The state before the first frame: the baselines progress and passing are measured from."""
        self.started = True
        self.best_x = self.last_x = state["ball"][0]
        self.last_passed = opponents_passed(state)
        self.pass_scale = 1.0
        self.passing = False
        self.prev_owner = -1
        self.shot_taken = False
        self.scored = False

    def frame(self, state: State, code: int) -> float:
        """Add one played frame (``code``: the judged player's applied action); returns its reward."""
        if not self.started:
            self.start(state)
        if self.finished:
            return 0.0
        self.frames += 1
        before = self.total
        if self.variant == "code":
            self._code_frame(state, code)
        else:
            self._paper_frame(state, code)
        return self.total - before

    def _code_frame(self, s: State, code: int) -> None:
        w = self.w
        owner, team = s["ball_owned_player"], s["ball_owned_team"]
        if owner != -1 and team == 0:
            x = s["ball"][0]
            self.terms["progress"] += w.progress * max(0.0, x - self.best_x)
            self.best_x = max(self.best_x, x)
            now = opponents_passed(s)
            self.terms["opponents_passed"] += w.opponents_passed * (now - self.last_passed) / 11
            self.last_passed = now
        if s["score"][0] > 0:
            self.terms["goal"] += w.goal
        stolen = team == 1 and not self.shot_taken
        if stolen:
            self.terms["interception"] += w.interception * (1.0 - s["steps_left"] / T_FRAMES)
            self.finished = True
        if self.passing and self.prev_owner != -1 and owner != -1 and not stolen and owner != self.prev_owner:
            self.terms["pass"] += w.pass_ * pass_clearance(s, (s["ball"][0], s["ball"][1])) * self.pass_scale
            self.pass_scale *= 0.75
            self.passing = False
        if owner != -1:
            self.prev_owner = owner
        if code in PASS_CODES:
            self.passing = True
        if code == SHOT_CODE and owner != -1 and team == 0 and not self.shot_taken:
            raw = w.shot * shot_clearance(s) * shot_distance_factor(s)
            self.terms["shot"] += min(raw, w.goal / 3)
            self.shot_taken = True
        if self.shot_taken and self.prev_owner != owner:
            self.shot_taken = False  # the ball left the shooter: a later shot may count again

    def _paper_frame(self, s: State, code: int) -> None:
        w = self.w
        owner, team = s["ball_owned_player"], s["ball_owned_team"]
        if owner != -1 and team == 0:
            x, now = s["ball"][0], opponents_passed(s)
            self.terms["progress"] += w.progress * (x - self.last_x)
            self.terms["opponents_passed"] += w.opponents_passed * (now - self.last_passed) / 11
            self.last_x, self.last_passed = x, now
            if self.passing and self.prev_owner not in (-1, owner):
                receiver = s["left_team"][owner]
                self.terms["pass"] += w.pass_ * pass_clearance(s, (receiver[0], receiver[1]))
                self.passing = False
            if self.prev_owner != owner:
                self.shot_taken = False
            self.prev_owner = owner
        if s["score"][0] > 0 and not self.scored:
            self.scored = True
            self.terms["goal"] += w.goal
            self.finished = True
            return
        if team == 1 or (s["game_mode"] != 0 and not self.scored):
            # intercepted, or the ball went out of play / a foul stopped the attack
            self.terms["interception"] += w.interception * min(1.0, (T_FRAMES - s["steps_left"]) / T_FRAMES)
            self.finished = True
            return
        if code in PASS_CODES and owner != -1 and team == 0:
            self.passing = True
        if code == SHOT_CODE and owner != -1 and team == 0 and not self.shot_taken:
            self.terms["shot"] += w.shot * shot_clearance(s)
            self.shot_taken = True

    def finish(self, end: str | None) -> None:
        """Close the episode: the paper pays λ4 to an attack that is still alive at T = 400 frames."""
        if self.variant == "paper" and not self.finished and end == "time":
            self.terms["timeout"] += self.w.interception
        self.finished = True


class FootballJudgeParams(NodeParams):
    variant: Literal["code", "paper"] = Field("code", description="the reward weights: the released code's "
                                              "(code) or the paper's (paper)")
    agent: str | None = Field(None, description="the seat to score (an agent id); default the first seat on the "
                              "left team, else the first seat")


class FootballJudge(JudgeNode):
    """Scores each episode from the football environment's step stream and ends it.

    Params: ``variant`` (``code`` default, or ``paper``); ``agent`` (the seat to score: default the
    first seat on the left team, else the first seat; a right-team seat is scored in its own
    frame). Each episode's metrics: ``reward`` and one ``reward_<term>`` per term, ``scenario``,
    ``repeat``, ``frames``, ``decisions``, ``end``, ``goal``, ``stopped``; summary.json gets a
    ``football`` section with the mean reward overall and per scenario, and MageBench's published
    scores beside it (:func:`summary`)."""

    Params = FootballJudgeParams
    params: FootballJudgeParams
    section = "football"

    async def setup(self) -> None:
        self.variant = self.params.variant
        ShapedReward(self.variant)  # validates the variant before the run starts
        self.sums: dict[str, list[float]] = defaultdict(list)
        await super().setup()

    def _seat(self, info: dict[str, Any]) -> dict[str, Any] | None:
        seats = info.get("seats") or []
        wanted = self.params.agent
        if wanted:
            for s in seats:
                if s["agent"] == wanted:
                    return s
            raise ValueError(f"param agent: {wanted!r} has no seat in this match ({[s['agent'] for s in seats]})")
        left = [s for s in seats if s["team"] == "left"]
        return (left or seats or [None])[0]

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        """Replays every frame the episode's decisions played through the shaped reward."""
        reward = ShapedReward(self.variant)
        for record in records:
            info = record["info"]
            seat = self._seat(info)
            flip = seat is not None and seat["team"] == "right"
            if info.get("initial") is not None:
                reward.start(mirror(info["initial"]) if flip else info["initial"])
            for played in info.get("frames") or ():
                state = mirror(played["state"]) if flip else played["state"]
                code = played["codes"][seat["slot"]] if seat is not None else 0
                reward.frame(state, int(code))
        info = records[-1]["info"]
        reward.finish(info.get("end"))
        total = reward.total
        scenario = str(info.get("scenario", ""))
        self.sums[scenario].append(total)
        metrics = {"reward": total, **{f"reward_{k}": v for k, v in reward.terms.items()},
                   "scenario": scenario, "repeat": info.get("repeat", 0), "frames": reward.frames,
                   "decisions": episode.labels["steps"], "end": info.get("end") or "",
                   "goal": float(reward.terms["goal"] > 0), "stopped": episode.labels["stopped"]}
        self.log.info("scored", episode=episode.id, scenario=scenario, reward=round(total, 2), end=metrics["end"])
        return metrics

    def summary(self) -> dict[str, Any] | None:
        return summary(self.variant, self.sums) if self.sums else None


def summary(variant: str, sums: dict[str, list[float]]) -> dict[str, Any]:
    """The ``football`` section of summary.json: the mean reward overall and per scenario and, when
    the scenarios played are one of MageBench's sets and the reward is the code's (the one its
    numbers were computed with), the published scores of that set beside them."""
    everything = [r for rs in sums.values() for r in rs]
    out: dict[str, Any] = {
        "variant": variant, "episodes": len(everything),
        "mean_reward": sum(everything) / len(everything) if everything else 0.0,
        "per_scenario": {k: {"episodes": len(v), "mean_reward": sum(v) / len(v)} for k, v in sums.items()},
    }
    magebench = load_magebench()
    published = paper_set(list(sums), set(mini_subset()), set(magebench)) if variant == "code" else None
    if published is not None:
        out["paper_set"] = SETS[published]
        out["paper_source"] = SOURCE
        out["paper"] = dict(SCORES[published])
    return out
