"""``pettingzoo.env``: any PettingZoo environment (Parallel or AEC) as one environment node.

    - id: env
      uses: pettingzoo.env
      params: {env: pettingzoo.classic.tictactoe_v3}          # the module; api: aec here
      inputs: {action_player_1: x/action, action_player_2: o/action}
    - id: x
      uses: agent.random
      inputs: {obs: env/obs_player_1}

Each PettingZoo agent ``A`` gets an output ``obs_A`` (the convention's observation: ``actions``
are the names of the moves legal now, from an ``action_mask`` where the env has one) and an input
``action_A``; ``step`` carries every decision with each agent's reward. Parallel: every live agent
gets its observation, then the node takes each live agent's action and steps once. AEC: only
the agent whose turn it is gets an observation and acts, in ``agent_selection`` order. An agent
that has left (terminated or truncated) gets no more observations in the episode. Without a judge
the node ends each episode with ``length`` and ``return_A`` per agent.

Discrete actions are sent by name; Box, MultiDiscrete and other spaces as a list of numbers checked
against the space (``moves``; ``obs["action_space"]`` describes it). On a lockstep clock the world
waits for the agents; on a realtime clock (``fps``: the env's ``render_fps``, which ``describe``
gives) it steps every frame with each agent's newest action, its idle action until it has sent one.
"""

from __future__ import annotations

import asyncio
import importlib
from typing import Any, Literal, Sequence

import numpy as np
from pydantic import Field, field_validator, model_validator

import kernel.sdk.spaces as decl
from kernel.sdk.env import EnvNode, EnvParams, StepResult, judge_ends_episodes
from kernel.sdk.node import Episode, service
from kernel.sdk.plain import plain
from kernel.sdk.steps import stop_reason
from nodes.game.gym import spaces as sp
from nodes.game.gym.moves import IdleParam, Moves

MISSING = {"pymunk": "pymunk", "Box2D": "box2d", "chess": "pettingzoo[classic]", "rlcard": "pettingzoo[classic]",
           "pygame": "pygame", "mpe2": "mpe2", "magent2": "magent2", "multi_agent_ale_py": "multi-agent-ale-py"}
"""A missing module an env imports -> what to pip install. Not pettingzoo[butterfly] or [sisl] for
pymunk and Box2D: those extras also ask for pygame-ce, which installs over pygame."""


def load_module(path: str) -> Any:
    """The PettingZoo env module (``pettingzoo.classic.tictactoe_v3``); a ValueError saying what
    to install when it or what it imports is missing."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as exc:
        missing = (exc.name or "").split(".")[0]
        if missing == path.split(".")[0] or (exc.name and path.startswith(exc.name)):
            raise ValueError(f"no module {path!r}: give a PettingZoo env module such as pettingzoo.classic.rps_v2 "
                             f"or pettingzoo.classic.tictactoe_v3 ({exc})") from None
        raise ValueError(f"{path!r} needs the package {MISSING.get(missing, missing)!r}, which is not installed: "
                         f"pip install {MISSING.get(missing, missing)}") from None
    except ImportError as exc:  # PettingZoo's own "moved to another package" errors
        raise ValueError(f"{path!r} does not import: {exc}") from None


class PettingZooParams(EnvParams):
    env: str = Field(description="the PettingZoo env module, e.g. pettingzoo.classic.rps_v2, "
                     "pettingzoo.classic.tictactoe_v3, pettingzoo.classic.connect_four_v3")
    api: Literal["parallel", "aec"] | None = Field(None, description="which API to drive (default: parallel where "
                                                   "the module has parallel_env, else aec)")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for the env constructor")
    seed: int | None = Field(None, description="episode i resets with seed + i (none: the kernel's episode seed)")
    labels: list[str] | None = Field(None, description="names of every agent's Discrete actions, in order "
                                     "(default: the numbers)")
    idle: IdleParam = Field(None, description="the action applied for an agent that sent none or an invalid one, "
                            "and on a realtime clock on every frame before its first: a Discrete action's name, or "
                            "a list of numbers for a Box/MultiDiscrete space; or a mapping agent -> action. Default: "
                            "a vector space's zeros; for a Discrete space a uniform legal move (a realtime clock "
                            "needs an idle name)")

    @field_validator("env")
    @classmethod
    def _importable(cls, value: str) -> str:
        module = load_module(value)
        if not (hasattr(module, "env") or hasattr(module, "parallel_env")):
            raise ValueError(f"{value!r} has neither env() nor parallel_env(): not a PettingZoo env module")
        return value

    @model_validator(mode="after")
    def _api(self) -> PettingZooParams:
        module = importlib.import_module(self.env)
        if self.api == "parallel" and not hasattr(module, "parallel_env"):
            raise ValueError(f"api: {self.env} has no parallel_env(); use api: aec")
        if self.api == "aec" and not hasattr(module, "env"):
            raise ValueError(f"api: {self.env} has no env() (AEC); use api: parallel")
        return self


class PettingZooEnv(EnvNode):
    """One node for a whole multi-agent world: ``obs_A``/``action_A`` per PettingZoo agent, ``step``
    for judges; serves ``describe``."""

    Params = PettingZooParams
    params: PettingZooParams
    env = "pettingzoo"

    def ports(self, params: PettingZooParams) -> tuple[Sequence[str], Sequence[str]]:
        self._make(params)
        return ([f"action_{a}" for a in self.agents], [*(f"obs_{a}" for a in self.agents), "step"])

    def _make(self, params: PettingZooParams) -> None:
        if getattr(self, "_pz", None) is not None:
            return
        module = importlib.import_module(params.env)
        self.parallel = params.api == "parallel" or (params.api is None and hasattr(module, "parallel_env"))
        self._pz = (module.parallel_env if self.parallel else module.env)(**params.kwargs)
        self.agents = list(self._pz.possible_agents)
        self.name = str(self._pz.metadata.get("name") or params.env.rsplit(".", 1)[-1])

    async def setup(self) -> None:
        self._make(self.params)
        self.env = f"pettingzoo/{self.name}"
        realtime = self.clock.mode == "realtime"
        self.moves = {a: Moves.make(self.params.env, a, self._pz.action_space(a), self.params.labels, self.params.idle,
                                    realtime) for a in self.agents}
        self.names: dict[str, list[str] | None] = {a: m.names for a, m in self.moves.items()}
        self.rng = np.random.default_rng(self.params.seed or 0)

    # -- observations ----------------------------------------------------------------------------------
    def _obs(self, agent: str, value: Any, episode: Episode, t: int) -> dict[str, Any]:
        space = self._pz.observation_space(agent)
        fields = sp.fields(space, value)
        mask = fields.pop("action_mask", None)
        moves = self.moves[agent]
        legal = moves.legal(mask)
        idle = moves.idle_body if isinstance(moves.idle_body, str) and moves.idle_body in legal else None
        obs = {"env": self.env, "episode": episode.id, "t": t, "agent": agent, "actions": legal, "idle": idle,
               "text": f"you are {agent}\n" + sp.text(fields), **fields}
        if moves.names is None:
            obs["action_space"] = sp.describe(moves.space)
        for w in self._wrappers:
            obs = w.observation(obs)
        return obs

    async def _actions(self, t: int, seen: dict[str, dict[str, Any]]) -> dict[str, tuple[Any, Any, bool, str | None]]:
        """Each agent's (body as applied or None, env value, whether the body was invalid, a stop
        reason), from one frame of the clock; an agent without a valid action gets its fallback."""
        got = await self.clock.actions_of(t, [f"action_{a}" for a in seen])
        out: dict[str, tuple[Any, Any, bool, str | None]] = {}
        for agent, obs in seen.items():
            body = next(iter(got[f"action_{agent}"].values()), None)
            if (reason := stop_reason(body)) is not None:
                out[agent] = (None, None, False, f"{agent}: {reason}")
                continue
            moves = self.moves[agent]
            value, wrong = moves.parse(body, obs["actions"])
            if value is None:
                out[agent] = (None, moves.fallback(self.rng, obs["actions"]), wrong, None)
            else:
                out[agent] = (plain(body), value, False, None)
        return out

    # -- the loop -------------------------------------------------------------------------------------
    async def run(self) -> None:
        self._wrappers = self.wrappers()
        judged = judge_ends_episodes(self.params.judge, self.readers("step", observers=False))
        while (episode := await self.next_episode()) is not None:
            seed = episode.seed if self.params.seed is None else self.params.seed + episode.index
            self.rng = np.random.default_rng(seed)
            play = self._parallel if self.parallel else self._aec
            t, returns, invalid, stopped = await play(episode, int(seed) % 2**32)
            if not judged:
                await self.end_episode(episode, steps=t, length=t, invalid=invalid, stopped=bool(stopped),
                                       **{f"return_{a}": r for a, r in returns.items()})

    async def _publish_step(self, episode: Episode, t: int, action: Any, valid: bool, rewards: dict[str, float],
                            done: bool, info: dict[str, Any], truncated: bool = False) -> bool:
        result = StepResult(float(sum(rewards.values())), done, info, truncated)
        for w in self._wrappers:
            result = w.result(t, result)
        record = {"episode": episode.id, "t": t, "action": action, "valid": valid, "reward": result.reward,
                  "rewards": rewards, "done": bool(result.done or result.truncated), "truncated": bool(result.truncated),
                  "info": result.info}
        await self.publish("step", record, step=t)
        return record["done"]

    async def _parallel(self, episode: Episode, seed: int) -> tuple[int, dict[str, float], int, str | None]:
        observations, _ = await asyncio.to_thread(self._pz.reset, seed=seed)
        returns = {a: 0.0 for a in self.agents}
        t, invalid, stop = 0, 0, None
        while self._pz.agents:
            live = list(self._pz.agents)
            seen = {a: self._obs(a, observations[a], episode, t) for a in live}
            for a in live:
                await self.publish(f"obs_{a}", seen[a], step=t)
            decided = await self._actions(t, seen)
            chosen = {a: d[0] for a, d in decided.items()}
            bad = any(d[2] for d in decided.values())
            invalid += sum(d[2] for d in decided.values())
            stop = next((d[3] for d in decided.values() if d[3] is not None), None)
            if stop is not None:
                await self._publish_step(episode, t, chosen, not bad, {}, True,
                                         {"invalid": invalid, "stopped": stop, "agents": live})
                return t + 1, returns, invalid, stop
            moves = {a: d[1] for a, d in decided.items()}
            observations, rewards, terms, truncs, infos = await asyncio.to_thread(self._pz.step, moves)
            rewards = {a: float(r) for a, r in rewards.items()}
            for a, r in rewards.items():
                returns[a] = returns.get(a, 0.0) + r
            done = not self._pz.agents
            info = {"terminations": plain(terms), "truncations": plain(truncs), "infos": plain(infos),
                    "invalid": invalid, "stopped": False, "agents": live}
            if await self._publish_step(episode, t, chosen, not bad, rewards, done, info, _cut(done, terms, truncs)):
                return t + 1, returns, invalid, None
            t += 1
        return t, returns, invalid, None

    async def _aec(self, episode: Episode, seed: int) -> tuple[int, dict[str, float], int, str | None]:
        await asyncio.to_thread(self._pz.reset, seed=seed)
        returns = {a: 0.0 for a in self.agents}
        t, invalid = 0, 0
        while self._pz.agents:
            agent = self._pz.agent_selection
            value, _, term, trunc, _ = self._pz.last()
            if term or trunc:  # an agent that has left: PettingZoo wants a None step, the agent hears nothing
                self._pz.step(None)
                continue
            obs = self._obs(agent, value, episode, t)
            await self.publish(f"obs_{agent}", obs, step=t)
            name, move, wrong, stop = (await self._actions(t, {agent: obs}))[agent]
            invalid += wrong
            if stop is not None:
                await self._publish_step(episode, t, {agent: None}, not wrong, {}, True,
                                         {"invalid": invalid, "stopped": stop, "agent": agent})
                return t + 1, returns, invalid, stop
            await asyncio.to_thread(self._pz.step, move)
            rewards = {a: float(r) for a, r in self._pz.rewards.items()}
            for a, r in rewards.items():
                returns[a] = returns.get(a, 0.0) + r
            done = not self._pz.agents or all(self._pz.terminations.get(a) or self._pz.truncations.get(a)
                                               for a in self._pz.agents)
            info = {"terminations": plain(dict(self._pz.terminations)),
                    "truncations": plain(dict(self._pz.truncations)), "invalid": invalid, "stopped": False,
                    "agent": agent}
            cut = _cut(done, self._pz.terminations, self._pz.truncations)
            if await self._publish_step(episode, t, {agent: name}, not wrong, rewards, done, info, cut):
                return t + 1, returns, invalid, None
            t += 1
        return t, returns, invalid, None

    async def teardown(self) -> None:
        if getattr(self, "_pz", None) is not None:
            await asyncio.to_thread(self._pz.close)

    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "api": "parallel" if self.parallel else "aec", "agents": self.agents,
                "actions": {a: n for a, n in self.names.items()},
                "idle": {a: m.idle_body for a, m in self.moves.items()},
                "action_spaces": {a: sp.describe(self._pz.action_space(a)) for a in self.agents},
                "observation_spaces": {a: sp.describe(self._pz.observation_space(a)) for a in self.agents},
                "render_fps": plain(self._pz.metadata.get("render_fps"))}

    def spaces(self) -> dict[str, decl.ObsSpaces]:
        """Per ``obs_A``: agent A's observation as its body carries it (a Dict's fields less the
        ``action_mask``, or ``observation``; the text view where nothing is typed), and its action
        space (Discrete by name, else the space itself)."""
        out: dict[str, decl.ObsSpaces] = {}
        for agent in self.agents:
            published = sp.published(self._pz.observation_space(agent), True, None)
            if published is not None and published["type"] == "Dict":
                parts = {k: d for k, d in published["spaces"].items() if k != "action_mask"}
                published = parts.get("observation") if set(parts) == {"observation"} else (
                    {"type": "Dict", "spaces": parts} if parts else None)
                key = "observation" if published is not None and published["type"] != "Dict" else None
            else:
                key = "observation"
            observation: decl.ObservationSpace = decl.text() if published is None else {"key": key, "space": published}
            moves = self.moves[agent]
            action: decl.ActionSpace = {"space": sp.describe(moves.space)}
            if moves.names is not None:
                action["names"] = list(moves.names)
            out[f"obs_{agent}"] = {"observation": observation, "action": action}
        return out

    @service("oracle")
    def oracle(self, body: Any) -> Any:
        return None


def _cut(done: bool, terms: dict[str, Any], truncs: dict[str, Any]) -> bool:
    """Whether an episode that ends here was cut off (Gymnasium's ``truncated``): some agent was
    truncated and none terminated by the game's rules."""
    return done and any(bool(v) for v in truncs.values()) and not any(bool(v) for v in terms.values())
