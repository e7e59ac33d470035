"""The proof-of-life environment: walk along a line to a target. Tiny, but it uses the whole loop
and speaks the full environment convention (docs/environments.md), so every agent can play it."""

from __future__ import annotations

import random
from typing import Any

from kernel.sdk.node import Node, service

ACTIONS = ("left", "right", "stay")
MOVES = {"left": -1, "right": 1, "stay": 0}


class CountdownEnv(Node):
    """Publishes an observation per step, waits for the agent through its clock, and streams steps
    to the judge. Params: ``length`` (line length), ``max_steps``, ``target`` (fixed; default
    drawn from each episode's seed)."""

    inputs = ("action",)
    outputs = ("obs", "step")

    async def setup(self) -> None:
        self.length = int(self.params.get("length", 8))
        self.max_steps = int(self.params.get("max_steps", 20))
        self.state: dict[str, Any] = {}

    async def run(self) -> None:
        while (episode := await self.next_episode()) is not None:
            rng = random.Random(episode.seed)
            target = int(self.params.get("target") or rng.randrange(1, self.length))
            position = 0
            self.state = {"episode": episode.id, "position": position, "target": target}
            for t in range(self.max_steps):
                text = f"You are at {position} on a line from 0 to {self.length - 1}; the goal is at {target}."
                await self.publish("obs", {
                    "env": "hello", "episode": episode.id, "t": t, "actions": list(ACTIONS), "idle": "stay",
                    "goal": f"reach position {target}", "text": text, "position": position, "target": target,
                }, step=t)
                actions = await self.clock.actions(t)
                action = next(iter(actions.values()), None)
                stop = isinstance(action, dict) and bool(action.get("stop"))
                known = isinstance(action, str) and action in MOVES  # a peer may send anything at all
                valid = known or action is None or stop
                if known:
                    position = min(self.length - 1, max(0, position + MOVES[action]))
                self.state["position"] = position
                reached = position == target
                done = reached or stop or t == self.max_steps - 1
                self.log.info("step", episode=episode.id, t=t, action=action, position=position, target=target)
                await self.publish("step", {
                    "episode": episode.id, "t": t, "action": action if known else None, "valid": valid,
                    "reward": float(reached), "done": done,
                    "info": {"position": position, "target": target, "reached": reached, "stopped": stop},
                }, step=t)
                if done:
                    break

    @service("oracle")
    def oracle(self, body: dict[str, Any]) -> str:
        """The shortest way to the target: one step toward it."""
        gap = self.state["target"] - self.state["position"]
        return "right" if gap > 0 else "left" if gap < 0 else "stay"

    @service("describe")
    def describe(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"env": "hello", "actions": list(ACTIONS), "idle": "stay", "length": self.length}
