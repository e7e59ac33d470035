"""A person plays from the browser console (``launch run FILE --ui``, or ``--human AGENT`` to swap
an agent for this node without editing the launch file).

The node publishes ``prompt`` (what it waits for: the observation's text, goal, actions and the key
bindings of the pygame player, worked out by :func:`nodes.agent.human.key_bindings`), which the
console shows beside the environment's frame; the page answers through this node's ``web.act``
service with an action name, a number (1-based), an option letter, ``idle``, a typed action string
(for browser tasks, whose actions are free text), or ``{"stop": true}`` to give up. Each decision
is a step record (``RUN/steps/<node>.jsonl`` and the results store) with ``decided_by: human``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import Field

from kernel.sdk.node import Message, Node, NodeParams, on_input, service
from nodes.agent.human import STOP, key_bindings, typed_action
from nodes.agent.records import StepRecords


class WebParams(NodeParams):
    keys: dict[str, str] = Field(default_factory=dict, description="extra key bindings {KEY: action}, with the "
                                 "pygame player's key names (left, space, w, f1); they come first")
    timeout: float | None = Field(default=None, gt=0, description="seconds to wait for the person before "
                                  "sending the observation's idle action; none: wait as long as it takes")


class WebAgent(Node):
    """Shows each observation in the console page and sends what the person chose there."""

    inputs = ("obs",)
    outputs = ("action", "prompt")
    Params = WebParams
    params: WebParams

    async def setup(self) -> None:
        self.records = StepRecords(self.run_dir, self.id)
        self._pending: tuple[asyncio.Future[Any], list[str], Any, bool] | None = None

    async def teardown(self) -> None:
        self.records.close()

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        obs = msg.body if isinstance(msg.body, dict) else {"text": str(msg.body)}
        actions = [str(a) for a in obs.get("actions") or []]
        idle = obs.get("idle")
        keys = key_bindings(actions, idle, self.params.keys, bool(obs.get("options_lettered")))
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending = (fut, actions, idle, bool(obs.get("options_lettered")))
        shown = {"episode": obs.get("episode"), "t": obs.get("t"), "goal": obs.get("goal"), "text": obs.get("text"),
                 "actions": actions, "idle": idle, "keys": keys}
        await self.publish("prompt", {**shown, "waiting": True}, step=msg.step)
        try:
            action = await (asyncio.wait_for(fut, self.params.timeout) if self.params.timeout else fut)
            decided_by = "human"
        except asyncio.TimeoutError:
            action, decided_by = idle, "timeout"
        finally:
            self._pending = None
        self.records.write({"episode": obs.get("episode"), "t": obs.get("t"), "decided_by": decided_by,
                            "valid": True, "sent": action})
        self.log.info("web action", episode=obs.get("episode"), t=obs.get("t"), action=action, by=decided_by)
        await self.publish("prompt", {**shown, "waiting": False, "last": action}, step=msg.step)
        await self.publish("action", action, step=msg.step)

    @service("web.act")
    def web_act(self, body: Any) -> dict[str, Any]:
        """The person's choice; an error names what is wrong (nothing asked yet, an unknown action)."""
        if not isinstance(body, dict) or "action" not in body:
            raise ValueError("web.act takes {action: name, number, letter, typed text or {stop: true}}")
        if self._pending is None or self._pending[0].done():
            raise ValueError(f"{self.id} is not waiting for an action now (no observation is open); "
                             "wait for the next one")
        fut, actions, idle, _lettered = self._pending
        given = body["action"]
        if isinstance(given, dict):
            if not given.get("stop"):
                raise ValueError(f"an action map must be {{stop: true}} (give up); got {given!r}")
            action: Any = {**STOP, **given}
        elif isinstance(given, (str, int)) and not isinstance(given, bool):
            text = str(given)
            action = typed_action(text, actions, idle) if actions else text.strip()
            if action in (None, ""):
                offered = ", ".join(actions[:40]) + (" …" if len(actions) > 40 else "")
                raise ValueError(f"{text!r} is not an action offered now; the environment offers: {offered}"
                                 f"{' (or idle: ' + str(idle) + ')' if idle is not None else ''}")
        else:
            raise ValueError(f"an action is a string, a number or {{stop: true}}, not {type(given).__name__}")
        fut.set_result(action)
        return {"accepted": action}
