"""Test nodes for tests/test_recovery.py; they run as real processes under the supervisor."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from kernel.sdk.env import StepResult
from kernel.sdk.node import Message, on_input
from nodes.game.hello import CountdownEnv
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


class DyingParams(HelloAgentParams):
    marker: str
    die_episode: str = "ep00002"
    die_t: int = 3


class RecordingDyingAgent(HelloAgent):
    """The hello agent keeping a step record per decision with the tokens it "spent", as agent.llm
    does. Its first process dies at step ``die_t`` of ``die_episode``, once those records are on
    disk (creating ``marker``); the restarted process plays on."""

    Params = DyingParams
    params: DyingParams

    @on_input("obs")
    async def decide(self, msg: Message) -> None:
        obs = msg.body
        self.record_step({"episode": obs.get("episode"), "t": obs.get("t"),
                          "usage": {"prompt_tokens": 10, "completion_tokens": 1}})
        marker = Path(self.params.marker)
        if obs.get("episode") == self.params.die_episode and obs.get("t") == self.params.die_t \
                and not marker.exists():
            from kernel.bus import outlet

            self._rt._local_results.close()  # the database's rows are committed
            outlet.drain(files_s=10)  # and the lines of steps/<id>.jsonl written
            marker.write_text(str(obs))
            os._exit(1)
        await super().decide(msg)


class FailingOnceEnv(CountdownEnv):
    """The hello environment, except that its first process raises in ``step`` at step 1 of episode
    ep00001 (creating ``marker``): a world that stops answering. A restarted process plays normally."""

    class Params(CountdownEnv.Params):
        marker: str

    params: Params

    async def step(self, action: str | None) -> StepResult:
        marker = Path(self.params.marker)
        if self.state["episode"] == "ep00001" and self.state["t"] == 1 and not marker.exists():
            marker.write_text("failed once")
            raise RuntimeError("the world stopped answering, on purpose")
        return await super().step(action)
