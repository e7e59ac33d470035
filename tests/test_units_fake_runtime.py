"""kernel.testing.FakeRuntime, as docs/nodes.md shows it: a node tested alone, in memory."""

from __future__ import annotations

import pytest

from kernel.sdk.node import Message, Node, on_input, service
from kernel.testing import FakeRuntime


class Shout(Node):
    inputs = ("text", "later")
    outputs = ("shout",)

    @on_input("text")
    async def handle(self, msg: Message) -> None:
        await self.publish("shout", msg.body.upper(), step=msg.step)
        await self.report("ep00000", shouted=len(msg.body))

    @service("ping")
    def ping(self, body: object) -> str:
        return f"pong {body}"

    @service("wait")
    async def wait(self, body: object) -> str:
        return (await self.recv("later")).body


async def test_inputs_are_delivered_services_called_and_what_the_node_did_is_kept():
    rt = FakeRuntime(Shout(), "shout")
    await rt.deliver("text", "hi", step=3)
    assert rt.published == [("shout", "HI", 3)] and rt.bodies("shout") == ["HI"]
    assert rt.requests == [("kernel", "episode.report", {"episode": "ep00000", "metrics": {"shouted": 2}})]
    assert await rt.call("ping", 1) == "pong 1"
    rt.feed("later", "fed")
    assert await rt.call("wait") == "fed"


async def test_what_the_node_lacks_is_named():
    rt = FakeRuntime(Shout(), "shout")
    with pytest.raises(KeyError, match="no handler of input 'later'"):
        await rt.deliver("later", 1)
    with pytest.raises(KeyError, match="serves no 'pong'"):
        await rt.call("pong")
    with pytest.raises(ValueError, match="no output 'loud'"):
        await rt.node.publish("loud", 1)


class Countdown(Node):
    """docs/nodes.md's first node, as written there."""

    inputs = ("action",)
    outputs = ("obs", "step")

    async def setup(self) -> None:
        self.start = self.params["start"]

    async def run(self) -> None:
        while (episode := await self.next_episode()) is not None:
            for t in range(self.start):
                await self.publish("obs", {"left": self.start - t}, step=t)
                await self.clock.actions(t)
            await self.end_episode(episode, steps=self.start)


async def test_the_docs_example_plays_a_driver_to_the_end():
    rt = FakeRuntime(Countdown(), "env", params={"start": 3}, actions=["go"] * 3, episodes=1)
    await rt.play()
    assert [obs["left"] for obs in rt.bodies("obs")] == [3, 2, 1]
    assert rt.ended() == [{"episode": "ep00000", "status": "completed", "metrics": {"steps": 3}, "attempt": 1}]
    assert rt.clock.asked == [0, 1, 2]
