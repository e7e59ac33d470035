"""Baseline agents every benchmark reports beside its models: random, idle, scripted and replay.

They read only the environment convention (``docs/environments.md``), so each plays every pack.
They are kept cheap on purpose: the bus benchmarks drive thousands of steps a second through them.
"""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from kernel.sdk.node import Message, Node, NodeParams, on_input

STOP = {"stop": True}


class _Baseline(Node):
    inputs = ("obs",)
    outputs = ("action",)

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        await self.publish("action", await self.choose(msg.body), step=msg.step)

    async def choose(self, obs: dict[str, Any]) -> Any:
        raise NotImplementedError


class RandomParams(NodeParams):
    exclude: list[str] = Field(default_factory=list, description="action names never to pick")


class RandomAgent(_Baseline):
    """Uniform over ``obs["actions"]``, seeded from the run seed and the node id, so a re-run with
    the same seed plays the same moves."""

    Params = RandomParams
    params: RandomParams

    async def setup(self) -> None:
        self.rng = random.Random(zlib.crc32(f"{self.seed}/{self.id}".encode()))
        self.exclude = set(self.params.exclude)

    async def choose(self, obs: dict[str, Any]) -> Any:
        actions = [a for a in obs.get("actions") or () if a not in self.exclude]
        return self.rng.choice(actions) if actions else None


class IdleParams(NodeParams):
    action: Any = Field(None, description="the action to send each step; default the environment's idle "
                        "action (obs['idle']), or none where it has none")


class IdleAgent(_Baseline):
    """Does nothing each step: the environment's idle action, or the one the params name."""

    Params = IdleParams
    params: IdleParams

    async def choose(self, obs: dict[str, Any]) -> Any:
        return obs.get("idle") if self.params.action is None else self.params.action


class ScriptedParams(NodeParams):
    env: str | None = Field(None, description="the environment node to ask for the oracle's action "
                            "(default: the source of obs)")
    timeout_s: float = Field(30.0, gt=0, description="seconds to wait for the oracle's answer")


class ScriptedAgent(_Baseline):
    """Plays what the environment's ``oracle`` service says is the best next action (a solver, or
    a hand-written policy)."""

    Params = ScriptedParams
    params: ScriptedParams

    async def choose(self, obs: dict[str, Any]) -> Any:
        env = self.params.env or self.sources("obs")[0]
        action = await self.request(env, "oracle", {"episode": obs.get("episode")},
                                    timeout=self.params.timeout_s)
        if action is None:
            raise RuntimeError(f"environment node {env!r} has no oracle for this state; the scripted agent "
                               f"needs one (docs/environments.md)")
        return action


class ReplayParams(NodeParams):
    actions: list[Any] | None = Field(None, description="one list of actions, played in every episode")
    episodes: dict[str, list[Any]] = Field(default_factory=dict, description="actions per episode id")
    records: str | None = Field(None, description="a step-records file (RUN/steps/<agent>.jsonl) whose "
                                "per-episode actions are played again, e.g. to re-render what a model did")

    @model_validator(mode="after")
    def _something_to_play(self) -> ReplayParams:
        if self.actions is None and not self.episodes and not self.records:
            raise ValueError("the replay agent needs one of the params actions, episodes or records")
        return self


class ReplayAgent(_Baseline):
    """Plays a recorded list of actions, then stops the episode."""

    Params = ReplayParams
    params: ReplayParams

    async def setup(self) -> None:
        p = self.params
        self.plans: dict[str, list[Any]] = {str(k): list(v) for k, v in p.episodes.items()}
        if p.records:
            path = Path(p.records)
            if not path.exists():
                raise FileNotFoundError(f"param records: {path} does not exist")
            for line in path.read_text().splitlines():
                if line.strip():
                    r = json.loads(line)
                    sent = r.get("sent", r.get("action"))
                    self.plans.setdefault(str(r["episode"]), []).append(sent)
        self.default: list[Any] | None = list(p.actions) if p.actions is not None else None
        self.cursor: dict[str, int] = {}

    async def choose(self, obs: dict[str, Any]) -> Any:
        episode = str(obs.get("episode"))
        plan = self.plans.get(episode, self.default)
        if plan is None:
            return {**STOP, "reason": f"no recorded actions for episode {episode}"}
        i = 0 if obs.get("t") == 0 else self.cursor.get(episode, 0)  # t 0 again: a replayed episode
        self.cursor[episode] = i + 1
        return plan[i] if i < len(plan) else {**STOP, "reason": "recording finished"}
