"""The football environment node: Google Research Football on the bus, MageBench's way by default.

Each episode is one scenario (MageBench's 108 or a gfootball level, chosen by the episode index so
``episodes = scenarios x repeats``). Agents control footballers through their seats; the rest play
by gfootball's AI. The node follows the environment convention (docs/environments.md):

* ``obs`` per decision: the action names, the raw state, a text rendering, and the rendered
  frame when ``frames`` is on (only the frames an agent sees are drawn);
* ``step`` per decision: the applied actions and every engine frame the decision played (state and
  action codes), which is what the reward judge (nodes/judge/football.py) scores.

Clocks: in lockstep the match stands still until every seated agent answered (auto-rendering may
then play several frames for one decision); in realtime each clock tick plays one frame with the
newest action of each agent, and frames that passed without a new decision are counted.
"""

from __future__ import annotations

import time
from typing import Any, Literal

import numpy as np
from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepRecord, StepResult
from kernel.sdk.node import Episode, NodeParams, service
from nodes.game.football import actions as A
from nodes.game.football import oracle, scenarios
from nodes.game.football.autorender import AutoRenderConfig, Plan, SeatMemory, plan_for
from nodes.game.football.engine import Match
from nodes.game.football.raw_state import State, frames_played
from nodes.game.football.seats import Seat, fixed_players, parse_seats
from nodes.game.football.text_view import render as render_text

GOAL = ("Attack the goal on the right side and score; the episode ends on a goal, when the ball goes "
        "out of play, or when the opponents win the ball.")


def magebench_colors(frame: np.ndarray) -> np.ndarray:
    """MageBench's fixed colour change (brightness x1.5, contrast x0.6, brightness x1.2), which its
    code applies to every frame to work around washed colours on some GPU/OpenGL setups."""
    img = np.clip(frame.astype(np.float32) * 1.5, 0, 255)
    # contrast pulls towards the mean grey level, as PIL's ImageEnhance.Contrast does
    grey = float((img @ np.array([0.299, 0.587, 0.114], np.float32)).mean())
    img = np.clip(grey + (img - grey) * 0.6, 0, 255)
    return np.clip(img * 1.2, 0, 255).astype(np.uint8)


class AutoRender(NodeParams):
    """MageBench's auto-rendering: while no seat must decide, the world plays on."""

    max_frames: int = Field(10, gt=0, description="frames one decision may play at most")
    lookahead: int = Field(5, gt=0, description="frames looked ahead for a ball that settles")
    threshold: float = Field(0.01, gt=0, description="ball movement (field units) that counts as settled")


class FootballEnv(EnvNode):
    """Episode ``i`` plays scenario ``i % len(scenarios)``, repeat ``i // len(scenarios)``;
    parameters: ``launch describe football.env``."""

    class Params(EnvParams):
        scenarios: str | list[str] = Field("mini", description="mini (MageBench's 20), all (108), zone:N, "
                                           "category:P, a MageBench id (R1_P_1), a gfootball level, or a list")
        players: dict[str, str] | None = Field(None, description="{agent_id: left | right | left:N | right:N}; "
                                               "default: the one agent follows the left team's active player")
        resolution: int | tuple[int, int] = Field((1280, 720), description="[width, height], or a width (16:9)")
        color_adjust: Literal["none", "magebench"] = Field("none", description="magebench: its fixed colour change")
        actions: Literal["magebench", "full"] = Field("magebench", description="the benchmark's 16 names, or all")
        auto_render: bool | AutoRender = Field(True, description="play frames while no seat must decide")
        right_frame: Literal["own", "global"] = Field("own", description="own: a right-team agent's directions "
                                                      "and text are in its own frame, attacking right")
        max_decisions: int = Field(400, gt=0, description="lockstep decisions per episode (MageBench's loop limit)")
        max_frames: int | None = Field(None, gt=0, description="engine frames per episode (none: the level's own)")
        settings: dict[str, Any] = Field({}, description="scenario-config overrides (right_team_difficulty, ...)")
        data: str | None = Field(None, description="another scenario file")
        text: bool = Field(True, description="the text rendering in obs")
        physics_steps_per_frame: int = Field(10, gt=0, description="engine physics steps per frame")

    env = "football"
    params: Params

    async def setup(self) -> None:
        p = self.params
        self.names = scenarios.resolve(p.scenarios, p.data)
        res = p.resolution
        self.width, self.height = (res, int(round(res * 0.5625))) if isinstance(res, int) else res
        self.allowed = list(A.ACTION_SETS[p.actions])
        auto = p.auto_render
        self.auto = AutoRenderConfig(enabled=auto) if isinstance(auto, bool) else AutoRenderConfig(**auto.model_dump())
        agents = list(self.clock.wait_for or self.sources("action"))
        self.seats: list[Seat] = parse_seats(p.players, agents)
        self.match = Match(width=self.width, height=self.height, physics_steps_per_frame=p.physics_steps_per_frame)
        self.realtime = self.clock.mode == "realtime"
        self.levels: dict[str, str] = {}
        self.totals = {"episodes": 0, "frames": 0, "decisions": 0, "render_s": 0.0, "frames_without_new_action": 0}

    async def teardown(self) -> None:
        if getattr(self, "match", None) is not None:
            self.match.close()

    # -- episodes -------------------------------------------------------------------------------
    async def reset(self, episode: Episode) -> None:
        name = self.name = self.names[episode.index % len(self.names)]
        self.repeat = episode.index // len(self.names)
        if name not in self.levels:
            self.levels[name] = scenarios.install_level(name, fixed_players(self.seats), self.params.settings,
                                                        self.params.data)
        self.state = self.initial = self.match.reset(self.levels[name], self.seats, episode.seed)
        self._check_seats(name, self.state)
        self.t, self.episode_frames = 0, 0
        self.memory = {s.agent: SeatMemory(last_direction=self._to_global(s, "action_right")) for s in self.seats}
        self.last_seen: dict[str, Any] = {s.agent: None for s in self.seats}
        self.stale_frames = {s.agent: 0 for s in self.seats}
        self.log.info("episode", episode=episode.id, scenario=name, repeat=self.repeat)

    def _check_seats(self, name: str, state: State) -> None:
        for seat in self.seats:
            size = len(state[f"{seat.team}_team"])
            if seat.player is not None and seat.player >= size:
                raise ValueError(f"{seat.agent} is seated at {seat.label}, but the {seat.team} team of {name} has "
                                 f"only {size} players (0-{size - 1})")

    async def act(self, actions: dict[str, str | None]) -> StepResult:
        applied = {s.agent: actions.get(s.agent) or A.IDLE for s in self.seats}
        if self.realtime:
            result = self._play_frame(actions)
        else:
            result = self._play_decision(applied)
        self.t += 1
        if result.done:
            self._finished()
        return result

    async def stop(self, reason: str) -> StepResult:
        self._finished()
        return StepResult(0.0, True, self._info({s.agent: A.IDLE for s in self.seats}, [], "stopped"))

    def _finished(self) -> None:
        self.totals["episodes"] += 1
        self.summarize("football_env", dict(self.totals))

    def _play_decision(self, applied: dict[str, str]) -> StepResult:
        """Lockstep: one decision plays frames until a seat must decide again (auto-rendering)."""
        state = self.state
        plans = {s.agent: plan_for(self._to_global(s, applied[s.agent]), self.memory[s.agent], state, s.team,
                                   self.auto) for s in self.seats}
        played: list[dict[str, Any]] = []
        reward, done = 0, False
        while True:
            codes = self._next_codes(plans, state, first=not played)
            if codes is None:
                break
            state, done, r = self.match.step(codes)
            reward += r
            played.append({"state": state, "codes": codes})
            for plan in plans.values():
                plan.after_frame(state, done)
            self.episode_frames += 1
            if done or self._out_of_frames(self.episode_frames):
                break
        self.state = state
        self.totals["frames"] += len(played)
        self.totals["decisions"] += 1
        end = self._end_reason(state, done, self.episode_frames, self.t)
        return StepResult(float(reward), end is not None, self._info(applied, played, end))

    def _play_frame(self, actions: dict[str, str | None]) -> StepResult:
        """Realtime: one engine frame per clock tick. An agent's action is applied on the first
        frame after it arrives; later frames until its next decision play idle, so the engine's
        sticky state (running direction, sprint, dribble) carries on as if the button were held."""
        fresh: dict[str, str] = {}
        for seat in self.seats:
            body = actions.get(seat.agent)
            # the clock hands back the same stored body until a newer decision arrives
            if body is not None and body is not self.last_seen[seat.agent]:
                fresh[seat.agent] = self.last_seen[seat.agent] = body
            else:
                self.stale_frames[seat.agent] += 1
                self.totals["frames_without_new_action"] += 1
        applied = {s.agent: fresh.get(s.agent, A.IDLE) for s in self.seats}
        codes = [A.code(self._to_global(s, applied[s.agent])) for s in self.seats]
        self.state, done, reward = self.match.step(codes)
        self.totals["frames"] += 1
        self.episode_frames += 1
        self.totals["decisions"] += len(fresh)
        limit = self.params.max_frames if self.params.max_frames is not None else self.match.duration
        end = self._end_reason(self.state, done, self.t + 1, None)
        if end is None and self.t + 1 >= limit:
            end = "max_frames" if self.params.max_frames is not None else "time"
        info = self._info(applied, [{"state": self.state, "codes": codes}], end)
        info.update(fresh=sorted(fresh), frames_without_new_action=dict(self.stale_frames))
        return StepResult(float(reward), end is not None, info)
    def _next_codes(self, plans: dict[str, Plan], state: State, first: bool) -> list[int] | None:
        """One action index per seat for the coming frame, or None once any seat must decide again
        (a decision always plays at least one frame; with no seats at all, exactly one)."""
        codes: list[int] = []
        for seat in self.seats:
            action = plans[seat.agent].next_action(state)
            if action is None:
                if first:  # cannot happen: every plan plays at least one frame
                    action = A.IDLE
                else:
                    return None
            codes.append(A.code(action))
        if not codes and not first:
            return None  # nobody plays: one frame per decision
        return codes

    def _out_of_frames(self, frames: int) -> bool:
        return self.params.max_frames is not None and frames >= self.params.max_frames

    def _end_reason(self, state: State, done: bool, frames: int, t: int | None) -> str | None:
        """Why the episode ends after this decision (None: it goes on). ``t`` is the decision index
        when the decision budget applies (lockstep), None in realtime."""
        if done:
            if state["score"][0] > 0:
                return "goal_left"
            if state["score"][1] > 0:
                return "goal_right"
            if state["steps_left"] <= 0:
                return "time"
            if state["game_mode"] != 0:
                return "out_of_play"
            return "possession_change"
        if self._out_of_frames(frames):
            return "max_frames"
        if t is not None and t + 1 >= self.params.max_decisions:
            return "max_decisions"
        return None

    def _to_global(self, seat: Seat, name: str) -> str:
        return A.mirror(name) if seat.team == "right" and self.params.right_frame == "own" else name

    # -- observations -----------------------------------------------------------------------------
    def observe(self) -> Observation:
        """The observation every agent reads. ``text`` is the single seat's view; in a match with
        several seats it is neutral, and ``views`` holds each agent's own text (its player marked,
        its team attacking right)."""
        state = self.state
        first = self.seats[0] if self.seats else None
        obs: dict[str, Any] = {
            "scenario": self.name, "repeat": self.repeat, "actions": self.allowed, "idle": A.IDLE, "goal": GOAL,
            "state": state, "frame_index": frames_played(state, self.match.duration),
            "players": {s.agent: s.label for s in self.seats},
        }
        if self.params.text:
            obs["text"] = self._text(first if len(self.seats) == 1 else None, state)
            if len(self.seats) > 1:
                obs["views"] = {s.agent: {"team": s.team, "player": s.player,
                                          "controlled": state["controlled"].get(s.agent, -1),
                                          "text": self._text(s, state)} for s in self.seats}
        return obs

    def render(self) -> Any:
        started = time.perf_counter()
        frame = self.match.frame()
        if self.params.color_adjust == "magebench":
            frame = magebench_colors(frame)
        self.totals["render_s"] += time.perf_counter() - started
        return frame

    def _text(self, seat: Seat | None, state: State) -> str:
        """The text for one seat's agent; with no seat (or for the shared ``text`` of a match with
        several seats) the neutral left-team view plus who plays whom."""
        if seat is None:
            text = render_text(state, duration=self.match.duration)
            if self.seats:
                text += "\nAgents: " + ", ".join(
                    f"{s.agent} plays {s.team} #{state['controlled'].get(s.agent, -1)}" for s in self.seats) + "."
            return text
        team = seat.team if self.params.right_frame == "own" else "left"
        return render_text(state, team=team, controlled=state["controlled"].get(seat.agent),
                           duration=self.match.duration)

    def _info(self, applied: dict[str, str], played: list[dict[str, Any]], end: str | None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "scenario": self.name, "repeat": self.repeat, "frames": played, "actions": applied,
            "seats": [{"agent": s.agent, "team": s.team, "player": s.player, "slot": s.slot} for s in self.seats],
            "duration": self.match.duration, "end": end,
        }
        if self.t == 0:
            info["initial"] = self.initial
        return info

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        score = self.state.get("score", [0, 0])
        return {"scenario": self.name, "repeat": self.repeat, "end": last["info"]["end"] or "",
                "goals_for": score[0], "goals_against": score[1], "decisions": last["t"] + 1,
                "frames": self.episode_frames}

    # -- services ---------------------------------------------------------------------------------
    @service("oracle")
    def oracle(self, body: Any) -> str | None:
        """The scripted attacker's next action for a seat (``agent`` in the body; default the first
        seat), in that seat's own frame, from the current state."""
        body = body or {}
        if not self.seats or not self.match.state:
            return None
        seat = next((s for s in self.seats if s.agent == body.get("agent")), self.seats[0])
        controlled = self.match.state["controlled"].get(seat.agent, -1)
        action = oracle.attack(self.match.state, seat.team, controlled)
        return action if self.params.right_frame == "own" or seat.team == "left" else A.mirror(action)

    def action_names(self) -> list[str]:
        return list(self.allowed)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": "football", "actions": self.allowed, "idle": A.IDLE, "goal": GOAL,
                "scenarios": scenarios.describe(self.names, self.params.data),
                "players": {s.agent: s.label for s in self.seats}, "frames": self.params.frames,
                "resolution": [self.width, self.height], "auto_render": self.auto.__dict__,
                "max_decisions": self.params.max_decisions, "max_frames": self.params.max_frames}
