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

from kernel.sdk.node import Message, Node, on_input

STOP = {"stop": True}


class _Baseline(Node):
    inputs = ("obs",)
    outputs = ("action",)

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        await self.publish("action", await self.choose(msg.body), step=msg.step)

    async def choose(self, obs: dict[str, Any]) -> Any:
        raise NotImplementedError


class RandomAgent(_Baseline):
    """Uniform over ``obs["actions"]``, seeded from the run seed and the node id, so a re-run with
    the same seed plays the same moves. Param ``exclude``: action names never to pick."""

    async def setup(self) -> None:
        self.rng = random.Random(zlib.crc32(f"{self.seed}/{self.id}".encode()))
        self.exclude = set(self.params.get("exclude") or ())

    async def choose(self, obs: dict[str, Any]) -> Any:
        actions = [a for a in obs.get("actions") or () if a not in self.exclude]
        return self.rng.choice(actions) if actions else None


class IdleAgent(_Baseline):
    """Does nothing each step: the environment's idle action (``obs["idle"]``), param ``action``
    to name another, or no action at all where the environment has none."""

    async def choose(self, obs: dict[str, Any]) -> Any:
        return self.params.get("action", obs.get("idle"))


class ScriptedAgent(_Baseline):
    """Plays what the environment's ``oracle`` service says is the best next action (a solver, or
    a hand-written policy); param ``env`` names the environment node (default: the obs source)."""

    async def choose(self, obs: dict[str, Any]) -> Any:
        env = self.params.get("env") or self.sources("obs")[0]
        action = await self.request(env, "oracle", {"episode": obs.get("episode")},
                                    timeout=float(self.params.get("timeout_s", 30.0)))
        if action is None:
            raise RuntimeError(f"environment node {env!r} has no oracle for this state; the scripted agent "
                               f"needs one (docs/environments.md)")
        return action


class ReplayAgent(_Baseline):
    """Plays a recorded list of actions, then stops the episode.

    Params: ``actions`` (one list for every episode), or ``episodes`` (``{episode_id: [...]}``),
    or ``records``: a step-records file (``RUN/steps/<agent>.jsonl``) whose per-episode actions
    are played again, e.g. to re-render what a model did.
    """

    async def setup(self) -> None:
        p = self.params
        self.plans: dict[str, list[Any]] = {str(k): list(v) for k, v in (p.get("episodes") or {}).items()}
        if p.get("records"):
            path = Path(p["records"])
            if not path.exists():
                raise FileNotFoundError(f"param records: {path} does not exist")
            for line in path.read_text().splitlines():
                if line.strip():
                    r = json.loads(line)
                    sent = r.get("sent", r.get("action"))
                    self.plans.setdefault(str(r["episode"]), []).append(sent)
        self.default: list[Any] | None = list(p["actions"]) if "actions" in p else None
        if self.default is None and not self.plans:
            raise ValueError("the replay agent needs one of the params actions, episodes or records")
        self.cursor: dict[str, int] = {}

    async def choose(self, obs: dict[str, Any]) -> Any:
        episode = str(obs.get("episode"))
        plan = self.plans.get(episode, self.default)
        if plan is None:
            return {**STOP, "reason": f"no recorded actions for episode {episode}"}
        i = 0 if obs.get("t") == 0 else self.cursor.get(episode, 0)  # t 0 again: a replayed episode
        self.cursor[episode] = i + 1
        return plan[i] if i < len(plan) else {**STOP, "reason": "recording finished"}
