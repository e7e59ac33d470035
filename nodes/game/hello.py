"""The proof-of-life environment: walk along a line to a goal. Tiny, but it uses the whole loop."""

from __future__ import annotations

import random

from kernel.node import Node

ACTIONS = ("left", "right", "stay")


class CountdownEnv(Node):
    """Publishes an observation per step, waits for the agent through its clock, and streams steps
    to the judge. Params: ``length`` (line length), ``max_steps``."""

    inputs = ("action",)
    outputs = ("obs", "step")

    async def run(self) -> None:
        length = int(self.params.get("length", 8))
        max_steps = int(self.params.get("max_steps", 20))
        while (episode := await self.next_episode()) is not None:
            rng = random.Random(episode.seed)
            goal = rng.randrange(1, length)
            position = 0
            for t in range(max_steps):
                text = f"You are at {position} on a line from 0 to {length - 1}; the goal is at {goal}."
                await self.publish("obs", {"episode": episode.id, "position": position, "goal": goal,
                                           "text": text, "actions": list(ACTIONS)}, step=t)
                actions = await self.clock.actions(t)
                action = next(iter(actions.values()), "stay")
                if action not in ACTIONS:
                    action = "stay"  # an invalid action idles, as the benchmarks do
                position = min(length - 1, max(0, position + {"left": -1, "right": 1, "stay": 0}[action]))
                done = position == goal
                self.log.info("step", episode=episode.id, t=t, action=action, position=position, goal=goal)
                await self.publish("step", {"episode": episode.id, "t": t, "action": action,
                                            "position": position, "goal": goal, "done": done or t == max_steps - 1,
                                            "reached": done}, step=t)
                if done:
                    break
