"""A rule-based agent for the hello graph: it needs no model, so the demo runs anywhere."""

from __future__ import annotations

import asyncio

from pydantic import Field

from kernel.sdk.node import Message, Node, NodeParams, on_input


class HelloAgentParams(NodeParams):
    think_s: float = Field(0.0, ge=0, description="seconds to think before each action (to watch lockstep "
                           "hold the world)")


class HelloAgent(Node):
    """Steps toward the target. ``think_s`` makes it slow on purpose, to watch lockstep hold the world."""

    inputs = ("obs",)
    outputs = ("action",)
    Params = HelloAgentParams
    params: HelloAgentParams

    @on_input("obs")
    async def decide(self, msg: Message) -> None:
        think = self.params.think_s
        if think:
            await asyncio.sleep(think)
        obs = msg.body
        action = "right" if obs["target"] > obs["position"] else "left" if obs["target"] < obs["position"] else "stay"
        await self.publish("action", action, step=msg.step)
