"""Test nodes for tests/test_recovery.py; they run as real processes under the supervisor."""

from __future__ import annotations

import asyncio
from pathlib import Path

from kernel.sdk.node import Message, on_input
from nodes.agent.rule import HelloAgent, HelloAgentParams


class StallingParams(HelloAgentParams):
    marker: str
    stall_episode: str = "ep00001"
    stall_t: int = 1


class StallingAgent(HelloAgent):
    """The hello agent, except that its first process hangs at step ``stall_t`` of episode
    ``stall_episode``, after creating ``marker`` (so a test knows when to kill it). A restarted
    process finds the marker and plays normally."""

    Params = StallingParams
    params: StallingParams

    @on_input("obs")
    async def decide(self, msg: Message) -> None:
        obs = msg.body
        marker = Path(self.params.marker)
        if (obs.get("episode") == self.params.stall_episode
                and obs.get("t") == self.params.stall_t and not marker.exists()):
            marker.write_text(str(obs))
            await asyncio.Event().wait()  # hang until killed
        await super().decide(msg)
