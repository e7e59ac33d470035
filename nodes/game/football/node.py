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
from typing import Any

import numpy as np

from kernel.sdk.node import Episode, Node, service
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


def _resolution(params: dict[str, Any]) -> tuple[int, int]:
    res = params.get("resolution", [1280, 720])
    if isinstance(res, (int, float)):  # MageBench's --resolution: the width, 16:9
        return int(res), int(round(res * 0.5625))
    w, h = res
    return int(w), int(h)


class FootballEnv(Node):
    """Params (all optional):

    * ``scenarios``: ``mini`` (MageBench's 20, default), ``all`` (108), ``zone:N``, ``category:P``,
      a MageBench id (``R1_P_1``), a gfootball level (``academy_3_vs_1_with_keeper``) or a list;
      episode ``i`` plays scenario ``i % len(scenarios)``, repeat ``i // len(scenarios)``;
    * ``players``: ``{agent_id: left | right | left:N | right:N}`` (``seats.py``); default: the one
      wired agent follows the left team's active player;
    * ``frames`` (false): publish rendered RGB frames; ``resolution`` ([1280, 720], or a width);
      ``color_adjust``: ``none`` (default) or ``magebench``;
    * ``actions``: ``magebench`` (the benchmark's 16 names, default) or ``full``;
    * ``auto_render``: true (default), false, or ``{max_frames, lookahead, threshold}``;
    * ``right_frame``: ``own`` (default: a right-team agent's directions and text are in its own
      frame, attacking right) or ``global``;
    * ``max_decisions`` (400, MageBench's loop limit), ``max_frames`` (none: the level's own
      duration; set it to cut long gfootball levels short), ``settings`` (scenario-config
      overrides such as ``right_team_difficulty``), ``data`` (another scenario file);
    * ``text`` (true): the text rendering in ``obs``; ``judge``: whether a judge ends episodes
      (default: when ``step`` is wired).
    """

    inputs = ("action",)
    outputs = ("obs", "step")

    async def setup(self) -> None:
        p = self.params
        self.data_path: str | None = p.get("data")
        self.names = scenarios.resolve(p.get("scenarios", p.get("scenario")), self.data_path)
        self.frames_on = bool(p.get("frames", False))
        self.width, self.height = _resolution(p)
        self.color_adjust = str(p.get("color_adjust", "none"))
        if self.color_adjust not in ("none", "magebench"):
            raise ValueError(f"param color_adjust must be none or magebench, got {self.color_adjust!r}")
        set_name = str(p.get("actions", "magebench"))
        if set_name not in A.ACTION_SETS:
            raise ValueError(f"param actions must be one of {', '.join(A.ACTION_SETS)}, got {set_name!r}")
        self.allowed = list(A.ACTION_SETS[set_name])
        self.accepted = set(self.allowed) | {A.IDLE}
        auto = p.get("auto_render", True)
        self.auto = (AutoRenderConfig(**auto) if isinstance(auto, dict) else AutoRenderConfig(enabled=bool(auto)))
        self.right_frame = str(p.get("right_frame", "own"))
        if self.right_frame not in ("own", "global"):
            raise ValueError(f"param right_frame must be own or global, got {self.right_frame!r}")
        self.max_decisions = int(p.get("max_decisions", 400))
        self.max_frames = int(p["max_frames"]) if p.get("max_frames") is not None else None
        self.settings = dict(p.get("settings") or {})
        self.with_text = bool(p.get("text", True))
        agents = list(self.clock.wait_for or self.sources("action"))
        self.seats: list[Seat] = parse_seats(p.get("players"), agents)
        self.match = Match(width=self.width, height=self.height,
                           physics_steps_per_frame=int(p.get("physics_steps_per_frame", 10)))
        self.judged = bool(p.get("judge", bool(self.readers("step"))))
        self.levels: dict[str, str] = {}
        self.totals = {"episodes": 0, "frames": 0, "decisions": 0, "render_s": 0.0, "frames_without_new_action": 0}
        self.episode_frames = 0

    async def teardown(self) -> None:
        if getattr(self, "match", None) is not None:
            self.match.close()

    # -- episodes -------------------------------------------------------------------------------
    async def run(self) -> None:
        realtime = self.clock.mode == "realtime"
        while (episode := await self.next_episode()) is not None:
            name = self.names[episode.index % len(self.names)]
            repeat = episode.index // len(self.names)
            if name not in self.levels:
                self.levels[name] = scenarios.install_level(name, fixed_players(self.seats), self.settings,
                                                            self.data_path)
            state = self.match.reset(self.levels[name], self.seats, episode.seed)
            self._check_seats(name, state)
            self.episode_frames = 0
            self.log.info("episode", episode=episode.id, scenario=name, repeat=repeat)
            if realtime:
                await self._play_realtime(episode, name, repeat, state)
            else:
                await self._play_lockstep(episode, name, repeat, state)
            self.totals["episodes"] += 1
            self.summarize("football_env", dict(self.totals))

    def _check_seats(self, name: str, state: State) -> None:
        for seat in self.seats:
            size = len(state[f"{seat.team}_team"])
            if seat.player is not None and seat.player >= size:
                raise ValueError(f"{seat.agent} is seated at {seat.label}, but the {seat.team} team of {name} has "
                                 f"only {size} players (0-{size - 1})")

    async def _play_lockstep(self, episode: Episode, name: str, repeat: int, state: State) -> None:
        memory = {s.agent: SeatMemory(last_direction=self._to_global(s, "action_right")) for s in self.seats}
        initial, invalid_logged = state, False
        for t in range(self.max_decisions):
            await self._publish_obs(episode, t, name, repeat, state)
            chosen = await self.clock.actions(t)
            applied, valid, stop = self._read_actions(chosen)
            if not valid and not invalid_logged:
                invalid_logged = True
                self.log.warning("invalid action", episode=episode.id, t=t, got=chosen)
            if stop is not None:
                await self._publish_step(episode, t, name, repeat, applied, valid, [], 0, True, "stopped",
                                         initial if t == 0 else None, stop)
                return
            plans = {s.agent: plan_for(self._to_global(s, applied[s.agent]), memory[s.agent], state, s.team, self.auto)
                     for s in self.seats}
            played, reward, done = [], 0, False
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
            self.totals["frames"] += len(played)
            self.totals["decisions"] += 1
            end = self._end_reason(state, done, self.episode_frames, t)
            await self._publish_step(episode, t, name, repeat, applied, valid, played, reward, end is not None, end,
                                     initial if t == 0 else None)
            if end is not None:
                return

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
        return self.max_frames is not None and frames >= self.max_frames

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
        if t is not None and t + 1 >= self.max_decisions:
            return "max_decisions"
        return None

    async def _play_realtime(self, episode: Episode, name: str, repeat: int, state: State) -> None:
        """One engine frame per clock tick. An agent's action is applied on the first frame after
        it arrives; later frames until its next decision play idle, so the engine's sticky state
        (running direction, sprint, dribble) carries on as if the button were held."""
        initial, last_seen = state, {s.agent: None for s in self.seats}
        stale_frames = {s.agent: 0 for s in self.seats}
        limit = self.max_frames if self.max_frames is not None else self.match.duration
        for t in range(limit):
            await self._publish_obs(episode, t, name, repeat, state)
            chosen = await self.clock.actions(t)
            fresh: dict[str, Any] = {}
            for seat in self.seats:
                body = chosen.get(seat.agent)
                # the clock hands back the same stored body until a newer decision arrives
                if body is not None and body is not last_seen[seat.agent]:
                    fresh[seat.agent] = body
                    last_seen[seat.agent] = body
                else:
                    stale_frames[seat.agent] += 1
                    self.totals["frames_without_new_action"] += 1
            applied, valid, stop = self._read_actions({s.agent: fresh.get(s.agent) for s in self.seats})
            if stop is not None:
                await self._publish_step(episode, t, name, repeat, applied, valid, [], 0, True, "stopped",
                                         initial if t == 0 else None, stop)
                return
            codes = [A.code(self._to_global(s, applied[s.agent])) for s in self.seats]
            state, done, reward = self.match.step(codes)
            self.totals["frames"] += 1
            self.episode_frames += 1
            self.totals["decisions"] += len(fresh)
            end = self._end_reason(state, done, t + 1, None)
            if end is None and t + 1 >= limit:
                end = "max_frames" if self.max_frames is not None else "time"
            await self._publish_step(episode, t, name, repeat, applied, valid, [{"state": state, "codes": codes}],
                                     reward, end is not None, end, initial if t == 0 else None,
                                     extra={"fresh": sorted(fresh), "frames_without_new_action": dict(stale_frames)})
            if end is not None:
                return

    # -- actions ----------------------------------------------------------------------------------
    def _read_actions(self, chosen: dict[str, Any]) -> tuple[dict[str, str], bool, str | None]:
        """Action names per seat (idle for none or invalid), whether all were valid, and the reason
        of a stop request if an agent gave up."""
        applied: dict[str, str] = {}
        valid, stop = True, None
        for seat in self.seats:
            body = chosen.get(seat.agent)
            if isinstance(body, dict) and body.get("stop"):
                stop = f"{seat.agent}: {body.get('reason') or 'stopped'}"
                applied[seat.agent] = A.IDLE
            elif body is None:
                applied[seat.agent] = A.IDLE
            elif isinstance(body, str) and body in self.accepted:
                applied[seat.agent] = body
            else:
                applied[seat.agent] = A.IDLE
                valid = False
        return applied, valid, stop

    def _to_global(self, seat: Seat, name: str) -> str:
        return A.mirror(name) if seat.team == "right" and self.right_frame == "own" else name

    # -- publishing -------------------------------------------------------------------------------
    async def _publish_obs(self, episode: Episode, t: int, name: str, repeat: int, state: State) -> None:
        """The observation every agent reads. ``text`` is the single seat's view; in a match with
        several seats it is neutral, and ``views`` holds each agent's own text (its player marked,
        its team attacking right)."""
        first = self.seats[0] if self.seats else None
        obs: dict[str, Any] = {
            "env": "football", "episode": episode.id, "t": t, "scenario": name, "repeat": repeat,
            "actions": self.allowed, "idle": A.IDLE, "goal": GOAL, "state": state,
            "frame_index": frames_played(state, self.match.duration),
            "players": {s.agent: s.label for s in self.seats},
        }
        if self.with_text:
            obs["text"] = self._text(first if len(self.seats) == 1 else None, state)
            if len(self.seats) > 1:
                obs["views"] = {s.agent: {"team": s.team, "player": s.player,
                                          "controlled": state["controlled"].get(s.agent, -1),
                                          "text": self._text(s, state)} for s in self.seats}
        if self.frames_on:
            started = time.perf_counter()
            frame = self.match.frame()
            if self.color_adjust == "magebench":
                frame = magebench_colors(frame)
            self.totals["render_s"] += time.perf_counter() - started
            obs["frame"] = frame
        await self.publish("obs", obs, step=t)

    def _text(self, seat: Seat | None, state: State) -> str:
        """The text for one seat's agent; with no seat (or for the shared ``text`` of a match with
        several seats) the neutral left-team view plus who plays whom."""
        if seat is None:
            text = render_text(state, duration=self.match.duration)
            if self.seats:
                text += "\nAgents: " + ", ".join(
                    f"{s.agent} plays {s.team} #{state['controlled'].get(s.agent, -1)}" for s in self.seats) + "."
            return text
        team = seat.team if self.right_frame == "own" else "left"
        return render_text(state, team=team, controlled=state["controlled"].get(seat.agent),
                           duration=self.match.duration)

    async def _publish_step(self, episode: Episode, t: int, name: str, repeat: int, applied: dict[str, str],
                            valid: bool, played: list[dict[str, Any]], reward: int, done: bool, end: str | None,
                            initial: State | None, stop: str | None = None,
                            extra: dict[str, Any] | None = None) -> None:
        first = self.seats[0].agent if self.seats else None
        info: dict[str, Any] = {
            "scenario": name, "repeat": repeat, "frames": played, "actions": applied,
            "seats": [{"agent": s.agent, "team": s.team, "player": s.player, "slot": s.slot} for s in self.seats],
            "duration": self.match.duration, "end": end,
        }
        if initial is not None:
            info["initial"] = initial
        if stop is not None:
            info["stopped"] = stop
        if extra:
            info.update(extra)
        await self.publish("step", {"episode": episode.id, "t": t, "action": applied.get(first) if first else None,
                                    "valid": valid, "reward": float(reward), "done": done, "info": info}, step=t)
        if done and not self.judged:
            last = played[-1]["state"] if played else (initial or {})
            score = last.get("score", [0, 0])
            await self.end_episode(episode, scenario=name, repeat=repeat, end=end or "", goals_for=score[0],
                                   goals_against=score[1], decisions=t + 1, frames=self.episode_frames)

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
        return action if self.right_frame == "own" or seat.team == "left" else A.mirror(action)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": "football", "actions": self.allowed, "idle": A.IDLE, "goal": GOAL,
                "scenarios": scenarios.describe(self.names, self.data_path),
                "players": {s.agent: s.label for s in self.seats}, "frames": self.frames_on,
                "resolution": [self.width, self.height], "auto_render": self.auto.__dict__,
                "max_decisions": self.max_decisions, "max_frames": self.max_frames}
