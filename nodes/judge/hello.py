"""The hello graph's judge: scores each episode from the environment's step stream."""

from __future__ import annotations

from kernel.sdk.node import Message, Node, NodeParams, on_input


class HelloJudge(Node):
    """Success is reaching the target; the score rewards reaching it in few steps."""

    inputs = ("step",)
    Params = NodeParams  # none: a misspelt key is an error, not ignored

    @on_input("step")
    async def score(self, msg: Message) -> None:
        step = msg.body
        if not step["done"]:
            return
        info = step["info"]
        steps = step["t"] + 1
        optimal = info["target"]
        score = 100.0 * optimal / steps if info["reached"] else 0.0
        self.log.info("scored", episode=step["episode"], reached=info["reached"], steps=steps, score=round(score, 1))
        await self.end_episode(step["episode"], success=float(info["reached"]), steps=steps, score=score)
