"""The environment base: one episode loop for every environment pack (docs/environments.md).

Packs used to write their own loop and drifted apart (who ends an episode, whether ``step`` is
published, what an invalid action does). Here the loop is written once; a pack says only what its
game does, Gymnasium-style::

    class Walk(EnvNode):
        env = "walk"

        async def reset(self, episode: Episode) -> None: ...       # start an episode
        def observe(self) -> Observation: ...                       # what the agent sees now
        async def step(self, action: str | None) -> StepResult: ...  # apply a checked action

The base publishes ``obs`` (with ``env``, ``episode``, ``t`` and, when ``frames`` is on, the
frame from ``render()``), waits for the actions through the clock, checks them against the
observation's ``actions``, handles stop requests and invalid steps, publishes ``step`` always,
and ends the episode itself when no judge will (``judge`` param, by default: ``step`` read by no
node but observers, the recorder and console the kernel adds for ``--record`` and ``--ui``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Required, TypedDict

from pydantic import Field

import kernel.sdk.spaces as decl
from kernel.sdk.env_wrappers import FrameResize, TextOnly, TimeLimit, Wrapper
from kernel.sdk.node import Episode, Node, NodeParams, service
from kernel.sdk.steps import StepRecord, episode_labels, stop_reason

__all__ = ["EnvNode", "EnvParams", "Observation", "StepRecord", "StepResult", "judge_ends_episodes"]


def judge_ends_episodes(param: bool | None, step_readers: list[str]) -> bool:
    """Whether a judge ends the episodes: as the ``judge`` param says, else when a node other than an
    observer reads ``step``. A recorder or console must not count: taken for a judge, it left every
    episode of a judge-less graph unended (``launch run --record`` failed it, 0/N after 30 s)."""
    return param if param is not None else bool(step_readers)


class Observation(TypedDict, total=False):
    """The ``obs`` body (docs/environments.md); packs add their own keys beside these."""

    env: str  # these three are filled in by the base
    episode: str
    t: int
    attempt: int  # and this one, on an episode dealt again (above 1)
    actions: Required[list[str]]
    idle: Required[str | None]
    goal: str
    text: str
    frame: Any
    frames: list[Any]


@dataclass(slots=True)
class StepResult:
    """What a pack's ``step`` (or ``stop``) did; ``info`` is what its judge needs. ``done``: the
    episode ends here; ``truncated``: it ends because it was cut off (a step budget), not by the
    game's own rules, as Gymnasium's ``truncated`` (it ends the episode by itself, too)."""

    reward: float = 0.0
    done: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    truncated: bool = False


class EnvParams(NodeParams):
    """The parameters every environment shares; a pack's ``Params`` extends this."""

    frames: bool = Field(False, description="put the rendered RGB frame in each obs; off: nothing is rendered")
    frame_size: tuple[int, int] | None = Field(None, description="resize frames to [width, height] (nearest pixel)")
    max_steps: int | None = Field(None, gt=0, description="decisions per episode at most; the last is done "
                                                          "and truncated (none: the game's own end)")
    judge: bool | None = Field(None, description="whether a judge ends the episodes (default: when a node other "
                                                    "than an observer, the recorder or console, reads step)")


class EnvNode(Node):
    """Base of every environment node. Override ``reset``, ``observe`` and ``step`` (or ``act``
    for a game where several agents act at once); optionally ``render``, ``stop``, ``metrics``."""

    env: ClassVar[str] = "env"
    inputs: ClassVar[tuple[str, ...]] = ("action",)
    outputs: ClassVar[tuple[str, ...]] = ("obs", "step")
    records: ClassVar[tuple[str, ...]] = ("step",)
    Params: ClassVar[type[EnvParams]] = EnvParams
    params: EnvParams

    # -- what a pack writes -------------------------------------------------------------------------
    async def reset(self, episode: Episode) -> None:
        """Start ``episode`` (its ``index`` picks the level, its ``seed`` the randomness)."""
        raise NotImplementedError

    def observe(self) -> Observation:
        """The observation of the current state, without ``env``, ``episode`` and ``t`` (the base
        fills them in); the base checks the actions it gets against ``actions`` (and ``idle``)."""
        raise NotImplementedError

    async def step(self, action: str | None) -> StepResult:
        """Apply one decision: an allowed action name, or None (no action: the world advances)."""
        raise NotImplementedError

    async def act(self, actions: dict[str, str | None]) -> StepResult:
        """Apply one decision of every agent (id -> checked action). One agent's by default."""
        return await self.step(next(iter(actions.values()), None))

    def render(self) -> Any:
        """The RGB frame (uint8 H x W x 3) of the current state; called only when frames are on."""
        return None

    async def stop(self, reason: str) -> StepResult:
        """An agent gave up: end the episode now, as a failure."""
        return StepResult(done=True)

    def metrics(self, last: StepRecord) -> dict[str, Any]:
        """The episode's metrics when no judge ends it (beside the base's steps/invalid/stopped)."""
        return {"success": float(bool(last["info"].get("success", False)))}

    def wrappers(self) -> list[Wrapper]:
        """The wrappers applied to every observation and step, from the params; extend to compose."""
        out: list[Wrapper] = []
        if not self.params.frames:
            out.append(TextOnly())
        if self.params.frame_size is not None:
            out.append(FrameResize(*self.params.frame_size))
        if self.params.max_steps is not None:
            out.append(TimeLimit(self.params.max_steps))
        return out

    def action_names(self) -> list[str] | None:
        """The action names, in order, where they are fixed; None where they change with the state
        (then each observation's ``actions`` lists them). Only the default ``spaces()`` reads it."""
        return None

    def spaces(self) -> dict[str, decl.ObsSpaces]:
        """What the observations and actions are, per observation output (``kernel.sdk.spaces``),
        so that a bridge (``kernel.gym.GraphEnv``) offers matching gymnasium spaces with no code for
        this game. Default: the ``text`` view, and the ``action_names()`` (or the observation's
        ``actions``). A pack whose observations are typed (``gym.env``) declares them here."""
        names = self.action_names()
        return {"obs": {"observation": decl.text(),
                        "action": decl.discrete(names) if names is not None else decl.listed()}}

    @service("spaces")
    def _spaces(self, body: Any) -> dict[str, decl.ObsSpaces]:
        return decl.check(self.spaces(), f"{type(self).__name__}.spaces()")

    def check_action(self, body: Any, obs: Observation) -> bool:
        """Whether an action body (from another process: may be anything) is allowed now. A game whose
        actions take arguments (the browser's ``click [12]``) overrides it to parse them."""
        return isinstance(body, str) and (body in obs["actions"] or body == obs.get("idle"))

    # -- the loop -----------------------------------------------------------------------------------
    async def run(self) -> None:
        self._wrappers = self.wrappers()
        renders = all(w.renders for w in self._wrappers)
        judged = judge_ends_episodes(self.params.judge, self.readers("step", observers=False))
        while (episode := await self.next_episode()) is not None:
            await self.reset(episode)
            last = await self._play(episode, renders)
            if not judged:
                await self.end_episode(episode, **{**episode_labels(last), **self.metrics(last)})

    async def _play(self, episode: Episode, renders: bool) -> StepRecord:
        t, invalid = 0, 0
        record: StepRecord | None = None
        rewards: list[float] = []  # the episode's step rewards, for its record in the run (RL rollouts)
        while True:
            obs = self.observe()
            obs.update(env=self.env, episode=episode.id, t=t)
            if episode.attempt > 1:  # its readers stamp their step records with it (kernel.sdk.runtime)
                obs["attempt"] = episode.attempt
            if renders and (frame := self.render()) is not None:
                obs["frame"] = frame
            for w in self._wrappers:
                obs = w.observation(obs)
            await self.publish("obs", obs, step=t)
            if record is not None:  # the last step's record goes out once the agents have their next
                # observation: a send is where a process yields its core, so off the agent's path it costs
                # the agent nothing (the record's own step number still says which decision it was)
                await self.publish("step", record, step=t - 1)
            chosen = await self.clock.actions(t)
            checked, bad, stop = self._check(chosen, obs)
            if bad:
                if invalid == 0:
                    self.log.warning("invalid action; the step is spent and nothing is applied", episode=episode.id,
                                     t=t, action=repr(bad)[:120], allowed=obs["actions"])
                invalid += 1
            result = await self.stop(stop) if stop is not None else await self.act(checked)
            for w in self._wrappers:
                result = w.result(t, result)
            applied = next(iter(checked.values()), None) if stop is None else None
            truncated = bool(result.truncated) and stop is None
            record = StepRecord(episode=episode.id, t=t, action=applied, valid=not bad, reward=float(result.reward),
                                done=bool(result.done or truncated or stop is not None), truncated=truncated,
                                info={**result.info, "invalid": invalid, "stopped": stop or False})
            if episode.attempt > 1:
                record["attempt"] = episode.attempt
            rewards.append(record["reward"])
            if record["done"]:
                await self.publish("step", record, step=t)
                # One record per episode, no decision (t none): each step's reward, for rollouts (launch export)
                self.record_step({"episode": episode.id, "t": None, "decision": False, "steps": t + 1,
                                  "rewards": rewards, "invalid": invalid, "truncated": truncated,
                                  "stopped": stop or False,
                                  **({"attempt": episode.attempt} if episode.attempt > 1 else {})})
                return record
            t += 1

    def _check(self, chosen: dict[str, Any], obs: Observation) -> tuple[dict[str, str | None], list[Any], str | None]:
        """Each agent's action (None where it sent none or an invalid one), the invalid bodies,
        and the reason of a stop request. A body comes from another process: it may be anything."""
        checked: dict[str, str | None] = {}
        bad: list[Any] = []
        stop: str | None = None
        for agent, body in chosen.items():
            checked[agent] = None
            if (reason := stop_reason(body)) is not None:
                stop = f"{agent}: {reason}" if len(chosen) > 1 else reason
            elif self.check_action(body, obs):
                checked[agent] = body
            elif body is not None:
                bad.append(body)
        return checked, bad, stop
