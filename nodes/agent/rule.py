"""A rule-based agent for the hello graph: it needs no model, so the demo runs anywhere."""

from __future__ import annotations

import asyncio

from kernel.sdk.node import Message, Node, on_input


class HelloAgent(Node):
    """Steps toward the target. ``think_s`` makes it slow on purpose, to watch lockstep hold the world."""

    inputs = ("obs",)
    outputs = ("action",)

    @on_input("obs")
    async def decide(self, msg: Message) -> None:
        think = float(self.params.get("think_s", 0.0))
        if think:
            await asyncio.sleep(think)
        obs = msg.body
        action = "right" if obs["target"] > obs["position"] else "left" if obs["target"] < obs["position"] else "stay"
        await self.publish("action", action, step=msg.step)
