"""The environment's solver as a model: the ``chat`` service of a model node, answered by the
environment's ``oracle`` service in the reply format the agent's prompt asks for.

Behaviour cloning needs the solver's moves in the prompts an LLM agent writes (VisualAgentBench's
program-based solvers, spec visualagentbench.md §4). Putting the solver behind the model's service
keeps the agent unchanged: the prompts, the history and the pictures in its step records are the
ones any model would be shown, and swapping the teacher for GPT-4o or a local model is an edit of
the launch file. The pictures are encoded as a model node with the same image settings would
encode them, and their hashes returned, so an exported image can be checked against them.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Literal

from pydantic import Field, field_validator

from kernel.sdk.node import Node, NodeParams, service
from nodes.model.images import openai_messages

ACTION = "{action}"


class OracleParams(NodeParams):
    env: str = Field(description="the environment node whose oracle service answers (its next best action)")
    reply: str = Field(ACTION, description="the reply text, with {action} where the oracle's action goes: the "
                       "format the agent's template asks for (e.g. '# analyze\\n\\n# action\\n{action}')")
    image_format: Literal["png", "jpeg"] = Field("png", description="how the pictures a model would be sent are "
                                                 "encoded (their hashes come back in image_sha256)")
    image_long_edge: int | None = Field(None, ge=1, description="downscale them to this long edge, as the model "
                                        "node of the real run would")
    timeout_s: float = Field(30.0, gt=0, description="seconds to wait for the oracle")

    @field_validator("reply")
    @classmethod
    def _has_action(cls, reply: str) -> str:
        if ACTION not in reply:
            raise ValueError(f"the reply format must contain {ACTION} (where the oracle's action goes), got {reply!r}")
        return reply


def reply_text(fmt: str, action: Any) -> str:
    """The reply carrying ``action``: a string as it is, anything else (a stop request) as JSON."""
    return fmt.replace(ACTION, action if isinstance(action, str) else json.dumps(action))


class OracleModel(Node):
    """A model node whose replies are the environment oracle's actions."""

    Params = OracleParams
    params: OracleParams

    @service("chat")
    async def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        p = self.params
        start = time.monotonic()
        digests: list[str] = []
        await asyncio.to_thread(openai_messages, body.get("messages") or [], p.image_format, p.image_long_edge,
                                True, digests)
        action = await self.request(p.env, "oracle", {"episode": body.get("episode")}, timeout=p.timeout_s)
        if action is None:
            raise RuntimeError(f"environment node {p.env!r} has no oracle for this state; model.oracle needs one "
                               f"(docs/environments.md)")
        return {"text": reply_text(p.reply, action), "model": f"oracle:{p.env}", "finish_reason": "stop",
                "usage": {"prompt_tokens": 0, "completion_tokens": 0}, "latency_s": time.monotonic() - start,
                "cost_usd": 0.0, "cached": False, "retries": 0, "image_sha256": digests}
