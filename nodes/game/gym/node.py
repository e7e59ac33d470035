"""``gym.env``: any Gymnasium environment as a framebus environment node.

    - id: env
      uses: gym.env
      params: {id: ALE/Pong-v5, kwargs: {frameskip: 4}, frames: true, frame_size: [320, 420]}

The observation becomes typed fields of ``obs`` (a Dict's keys, or ``observation``; small arrays as
lists, pictures as arrays through shared memory), ``text`` renders them for text-only agents, and a
MiniGrid-style ``mission`` is the ``goal``. Discrete actions get the env's own names (ALE's
``get_action_meanings()``, MiniGrid's action enum, highway-env's meta-actions, or the ``labels``
param) and an agent sends the name; other action spaces take a list of numbers, checked against the
space. ``terminated`` and ``truncated`` stay apart in ``info`` (and ``truncated`` is the step record's
own field too); without a judge the node ends each
episode with its ``return`` and ``length``. ``protocol: balrog`` gives MiniGrid/BabyAI and Crafter
BALROG's text, action names and progression metric (``nodes.game.gym.balrog``). A bad ``id`` is
refused by ``launch validate`` at the line of the ``id``, naming the package to install.

Env calls run on the loop while they are quick; while the median of the latest calls is over
``OFFLOAD_S`` (a slow simulator, a software renderer) they run in a worker thread instead, so the
node keeps serving.
"""

from __future__ import annotations

import asyncio
import pkgutil
import statistics
import time
from collections import deque
from typing import Any, Callable, Literal

import gymnasium
import numpy as np
from gymnasium import spaces as gs
from pydantic import Field, ValidationInfo, field_validator

import kernel.sdk.spaces as decl
from kernel.sdk.env import EnvNode, EnvParams, Observation, StepRecord, StepResult
from kernel.sdk.env_wrappers import FrameResize
from kernel.sdk.node import Episode, service
from kernel.sdk.plain import plain
from nodes.game.gym import balrog, balrog_published
from nodes.game.gym import spaces as sp
from nodes.game.gym.worlds import check_id

OFFLOAD_S = 0.002
IDLE_NAMES = ("NOOP", "noop", "IDLE", "idle", "no_op", "NONE")


class GymParams(EnvParams):
    module: str | None = Field(None, description="a module to import first, for ids it registers (a pack's own "
                               "Gymnasium envs, e.g. nodes.game.sokoban.gym_env); ALE, MiniGrid/BabyAI, "
                               "highway-env and Crafter ids need none")
    id: str = Field(description="the Gymnasium env id (CartPole-v1, ALE/Pong-v5, MiniGrid-Empty-5x5-v0, "
                    "BabyAI-GoToRedBall-v0, highway-fast-v0, framebus/Crafter-v1, ...)")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="keyword arguments for gymnasium.make")
    seed: int | None = Field(None, description="episode i resets with seed + i (none: the kernel's episode seed)")
    labels: list[str] | None = Field(None, description="names of a Discrete space's actions, in order (default: "
                                     "the env's own names where it has them, else the numbers)")
    idle: str | None = Field(None, description="the action that does nothing, applied for a None body and on a "
                             "realtime clock while the agent thinks (default: NOOP/IDLE where the env has one)")
    images: bool = Field(True, description="put picture observations (uint8 HxWx3) in obs as arrays; off: "
                         "only their shapes are in the text")
    image_size: tuple[int, int] | None = Field(None, description="resize picture observations to [width, height] "
                                               "(nearest pixel)")
    oracle: str | None = Field(None, description="module:function(env, obs) -> action name: a scripted policy "
                               "served as 'oracle', for agent.scripted")
    protocol: Literal["gym", "balrog"] = Field("gym", description="balrog: BALROG's protocol for MiniGrid/BabyAI "
                                                "and Crafter ids (BabyAI-Text's sentences as the text, BALROG's "
                                                "action names, its progression 0-100 in the episode metrics)")

    @field_validator("id")
    @classmethod
    def _known(cls, value: str, info: ValidationInfo) -> str:
        return check_id(value, info.data.get("module"))

    @field_validator("oracle")
    @classmethod
    def _policy(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                fn = pkgutil.resolve_name(value)
            except (ImportError, AttributeError, ValueError) as exc:
                raise ValueError(f"cannot load the oracle policy {value!r} (module:function): {exc}") from None
            if not callable(fn):
                raise ValueError(f"{value!r} is not a function")
        return value

    @field_validator("protocol")
    @classmethod
    def _balrog_world(cls, value: str, info: ValidationInfo) -> str:
        env_id = info.data.get("id")
        if value == "balrog" and env_id is not None and balrog.world(env_id) is None:
            raise ValueError(f"params.protocol: balrog applies to MiniGrid-*/BabyAI-* and framebus/Crafter-* ids, "
                             f"not {env_id!r} (use protocol: gym)")
        if value == "balrog" and info.data.get("labels") is not None:
            raise ValueError("params.protocol: balrog names the actions itself; leave out params.labels")
        return value


class GymEnv(EnvNode):
    """Publishes ``obs``/``step`` for a Gymnasium env; serves ``describe`` (spaces, action names,
    render fps) and ``oracle`` (the ``oracle`` param's policy, or None)."""

    Params = GymParams
    params: GymParams
    env = "gym"

    async def setup(self) -> None:
        p = self.params
        self.env = p.id
        kwargs = dict(p.kwargs)
        self._gym: gymnasium.Env = await asyncio.to_thread(self._make, kwargs)
        self.space = self._gym.action_space
        self.obs_space = self._gym.observation_space
        self.names = sp.action_names(self._gym, self.space, p.labels)
        self._world = balrog.world(p.id) if p.protocol == "balrog" else None
        if self._world == "babyai":  # BALROG's six names; MiniGrid's 'done' (the 7th) is not offered
            self.space = gs.Discrete(len(balrog.BABYAI_ACTIONS))
            self.names = list(balrog.BABYAI_ACTIONS)
        elif self._world == "crafter":
            self.names = list(balrog.CRAFTER_ACTIONS)
        if p.labels is not None and (not isinstance(self.space, gs.Discrete) or len(p.labels) != int(self.space.n)):
            raise ValueError(f"params.labels: {len(p.labels)} names given, but {p.id}'s action space is {self.space}")
        if p.idle is not None and (self.names is None or p.idle not in self.names):
            raise ValueError(f"params.idle: {p.idle!r} is not an action of {p.id} (actions: {self.names})")
        self.idle = p.idle or next((n for n in IDLE_NAMES if self.names and n in self.names), None)
        if self._world == "crafter" and p.idle is None:
            self.idle = balrog.CRAFTER_IDLE
        self.progression = 0.0
        self._progressions: list[float] = []  # each ended episode's BALROG progression, for the summary
        self._renders = p.frames and "rgb_array" in (self._gym.metadata.get("render_modes") or [])
        self._resize = FrameResize(*p.image_size) if p.image_size else None
        self._oracle: Callable[..., Any] | None = pkgutil.resolve_name(p.oracle) if p.oracle else None
        self._offload = False
        self._times: deque[float] = deque(maxlen=32)  # the latest env calls' seconds
        self._slow = 0  # how many of them took over OFFLOAD_S
        self._obs: Any = None
        self._frame: Any = None
        self.fps = self._gym.metadata.get("render_fps")

    def _make(self, kwargs: dict[str, Any]) -> gymnasium.Env:
        mode = "rgb_array" if self.params.frames else None
        spec = gymnasium.spec(self.params.id)
        modes = (spec.kwargs.get("render_modes") if spec.kwargs else None) or []
        if mode is not None and "render_mode" not in kwargs:
            try:
                return gymnasium.make(self.params.id, render_mode=mode, **kwargs)
            except (TypeError, gymnasium.error.Error) as exc:  # an env that cannot draw: frames from its pictures
                self.log.info("the env does not render rgb_array; frames come from picture observations",
                              error=str(exc)[:200], modes=modes)
        return gymnasium.make(self.params.id, **kwargs)

    # -- env calls, on the loop while they are quick ------------------------------------------------------
    async def _call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        out = await asyncio.to_thread(fn, *args, **kw) if self._offload else fn(*args, **kw)
        took = time.perf_counter() - start
        times = self._times
        if len(times) == times.maxlen and times[0] > OFFLOAD_S:
            self._slow -= 1  # that one leaves the window with this append
        times.append(took)
        self._slow += took > OFFLOAD_S
        # The median can only change the mode when the window disagrees with it (a slow call while on
        # the loop, a quick one while offloaded): sorting the window on every call cost ~2 us a step (more on a cold cache).
        settled = self._slow == (len(times) if self._offload else 0)
        if len(times) >= 8 and not settled:
            slow = statistics.median(self._times) > OFFLOAD_S
            if slow != self._offload:
                self._offload = slow
                self.log.info("env calls now run " + ("in a worker thread" if slow else "on the loop"),
                              id=self.params.id, median_ms=round(statistics.median(self._times) * 1e3, 2))
        return out

    def _reset(self, seed: int) -> tuple[Any, dict]:
        obs, info = self._gym.reset(seed=seed)
        self._frame = self._gym.render() if self._renders else None
        return obs, info

    def _step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        out = self._gym.step(action)
        self._frame = self._gym.render() if self._renders else None
        return out

    # -- the EnvNode contract ---------------------------------------------------------------------------
    async def reset(self, episode: Episode) -> None:
        seed = episode.seed if self.params.seed is None else self.params.seed + episode.index
        self._obs, _ = await self._call(self._reset, int(seed) % 2**32)
        self.ret, self.length = 0.0, 0
        self.terminated = self.truncated = False
        self.progression = 0.0

    def observe(self) -> Observation:
        fields = sp.fields(self.obs_space, self._obs)
        pictures = {k: v for k, v in fields.items() if isinstance(v, np.ndarray) and v.ndim == 3 and v.dtype == np.uint8}
        obs: Observation = {"actions": list(self.names or []), "idle": self.idle,
                            "text": sp.text({k: v for k, v in fields.items() if k != "mission"})}
        if isinstance(fields.get("mission"), str):
            obs["goal"] = fields["mission"]
        if self._world == "babyai":
            mission = str(fields.get("mission", ""))
            obs["text"] = balrog.babyai_text(mission, self._obs["image"], balrog.carried(self._gym))
        elif self._world == "crafter":
            state = self._gym.unwrapped.language_state()  # type: ignore[attr-defined]
            obs["text"] = balrog.crafter_text(state["semantic"], state["names"], state["pos"], state["facing"],
                                              state["inventory"], sleeping=state["sleeping"], dead=state["dead"],
                                              view=state["view"])
        for key, value in fields.items():
            if key in pictures:
                if not self.params.images:
                    continue
                if self._resize is not None:
                    value = self._resize.resize(value)
            obs[key] = value  # type: ignore[literal-required]
        if self.names is None:
            obs["action_space"] = sp.describe(self.space)  # type: ignore[typeddict-unknown-key]
        return obs

    def render(self) -> Any:
        if self._frame is not None:
            return self._frame
        for value in sp.fields(self.obs_space, self._obs).values():  # no renderer: the picture observation
            if isinstance(value, np.ndarray) and value.ndim == 3 and value.dtype == np.uint8:
                return value if value.shape[2] == 3 else np.repeat(value, 3, axis=2)
        return None

    def spaces(self) -> dict[str, decl.ObsSpaces]:
        """The env's own spaces as ``obs`` carries them (``sp.published``: a Dict's fields, or
        ``observation``; the text view where nothing typed is published), and its action space:
        Discrete by name, or the space itself (a list of numbers on the bus)."""
        p = self.params
        published = sp.published(self.obs_space, p.images, p.image_size)
        observation: decl.ObservationSpace = decl.text() if published is None else {
            "key": None if isinstance(self.obs_space, gs.Dict) else "observation",
            "space": published}
        action: decl.ActionSpace = {"space": sp.describe(self.space)}
        if self.names is not None:
            action["names"] = list(self.names)
        return {"obs": {"observation": observation, "action": action}}

    def check_action(self, body: Any, obs: Observation) -> bool:
        if self.names is not None:
            return super().check_action(body, obs)
        try:
            sp.parse_action(self.space, body)
        except (ValueError, TypeError):
            return False
        return True

    async def step(self, action: Any) -> StepResult:
        if action is None:
            action = self.idle
        if action is None:  # no action and no idle action: the world does not move, the step counts
            return StepResult(0.0, False, {"terminated": False, "truncated": False, "skipped": True})
        if self.names is not None:
            value: Any = self.names.index(action) + int(self.space.start)  # type: ignore[attr-defined]
        else:
            value = sp.parse_action(self.space, action)
        self._obs, reward, term, trunc, info = await self._call(self._step, value)
        self.ret += float(reward)
        self.length += 1
        if self._world == "babyai" and float(reward) > 0:
            self.progression = balrog.babyai_progression(True)
        elif self._world == "crafter" and isinstance(info.get("achievements"), dict):
            self.progression = balrog.crafter_progression(info["achievements"])
        self.terminated, self.truncated = bool(term), bool(trunc)
        return StepResult(float(reward), self.terminated or self.truncated,
                          {**plain(info), "terminated": self.terminated, "truncated": self.truncated,
                           "return": self.ret, "length": self.length}, truncated=self.truncated)

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        info = last["info"]
        out = {"return": self.ret, "length": self.length, "terminated": float(self.terminated),
               "truncated": float(last["truncated"])}
        for key in ("success", "is_success"):
            if key in info:
                out["success"] = float(bool(info[key]))
        if self._world is not None:
            out["progression"] = self.progression  # BALROG's, in percent; summary.json's metrics hold its mean
            self._balrog_summary(self.progression)
        return out

    def _balrog_summary(self, progression: float) -> None:
        """summary.json's ``balrog`` section: this node's BALROG progression beside the leaderboard's rows."""
        self._progressions.append(progression)
        n = len(self._progressions)
        section: dict[str, Any] = {"world": self._world, "task": self.env, "episodes": n,
                                   "progression_percent": sum(self._progressions) / n}
        if self._world == "babyai":
            section["successes"] = sum(1 for v in self._progressions if v >= 100.0)
        section["balrog_published"] = balrog_published.BABYAI if self._world == "babyai" else balrog_published.CRAFTER
        section["balrog_published_source"] = balrog_published.SOURCE
        self.summarize("balrog", section)

    async def teardown(self) -> None:
        gym = getattr(self, "_gym", None)
        if gym is not None:
            await asyncio.to_thread(gym.close)

    # -- services -------------------------------------------------------------------------------------
    @service("describe")
    def describe(self, body: Any) -> dict[str, Any]:
        return {"env": self.env, "actions": list(self.names or []), "idle": self.idle,
                "action_space": sp.describe(self.space), "observation_space": sp.describe(self.obs_space),
                "render_fps": plain(self.fps), "frames": self.params.frames}

    @service("oracle")
    async def oracle(self, body: Any) -> Any:
        if self._oracle is None or self._obs is None:
            return None
        return await self._call(self._oracle, self._gym, self._obs)
