"""A person plays from the browser console (``launch run FILE --ui``, or ``--human AGENT`` to swap
an agent for this node without editing the launch file).

The node publishes ``prompt`` (what it waits for: the observation's text, goal, actions and the key
bindings of the pygame player, worked out by :func:`nodes.agent.human.key_bindings`), which the
console shows beside the environment's frame; the page answers through this node's ``web.act``
service with an action name, a number (1-based), an option letter, ``idle``, a typed action string
(for browser tasks, whose actions are free text), or ``{"stop": true}`` to give up. Each decision
is a step record (``RUN/steps/<node>.jsonl`` and the results store) with ``decided_by: human``.

Take-over (``launch run --takeover AGENT``): the agent keeps running as ``AGENT-auto`` and its
actions come in on this node's ``auto`` input; in ``auto`` mode they are passed on (``decided_by``
names that node) unless the person acts first, and ``web.mode`` switches to ``human`` (take over:
the person decides every step) and back to ``auto`` (hand back), mid-episode.
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
    auto: bool = Field(default=False, description="an automatic agent's actions come in on input 'auto' and are "
                       "passed on until the person takes over (launch run --takeover sets this)")
    timeout: float | None = Field(default=None, gt=0, description="seconds to wait for the person before "
                                  "sending the observation's idle action; none: wait as long as it takes")


class WebAgent(Node):
    """Shows each observation in the console page and sends what the person chose there."""

    inputs = ("obs",)
    outputs = ("action", "prompt")
    Params = WebParams
    params: WebParams

    def ports(self, params: Any) -> tuple[list[str], list[str]]:
        return (["obs", "auto"] if params.auto else ["obs"]), list(self.outputs)

    async def setup(self) -> None:
        self.records = StepRecords(self)
        self._pending: tuple[asyncio.Future[Any], list[str], Any, bool] | None = None
        self.mode = "auto" if self.params.auto else "human"
        self._mode_changed = asyncio.Event()

    async def _auto_action(self, step: int | None) -> tuple[Any, str]:
        """The automatic agent's action for ``step`` (older ones, late answers, are skipped)."""
        while True:
            msg = await self.recv("auto")
            if step is None or msg.step is None or msg.step >= step:
                return msg.body, msg.src

    async def _decide(self, fut: asyncio.Future[Any], step: int | None) -> tuple[Any, str]:
        """The person's action; in auto mode the automatic agent's, unless the person acts first or
        takes over while it thinks."""
        while True:
            if self.mode == "human":
                self._mode_changed.clear()
                changed = asyncio.ensure_future(self._mode_changed.wait())
                done, _ = await asyncio.wait({fut, changed}, return_when=asyncio.FIRST_COMPLETED)
                changed.cancel()
                if fut in done:
                    return fut.result(), "human"
                continue
            self._mode_changed.clear()
            auto = asyncio.ensure_future(self._auto_action(step))
            changed = asyncio.ensure_future(self._mode_changed.wait())
            done, _ = await asyncio.wait({fut, auto, changed}, return_when=asyncio.FIRST_COMPLETED)
            changed.cancel()
            if fut in done:
                auto.cancel()
                return fut.result(), "human"
            if auto in done:
                return auto.result()
            auto.cancel()  # taken over: the person decides this step

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
                 "actions": actions, "idle": idle, "keys": keys, "auto": self.params.auto}
        self._shown = shown
        await self.publish("prompt", {**shown, "waiting": True, "mode": self.mode}, step=msg.step)
        try:
            decide = self._decide(fut, msg.step)
            action, decided_by = await (asyncio.wait_for(decide, self.params.timeout) if self.params.timeout
                                        and not self.params.auto else decide)
        except asyncio.TimeoutError:
            action, decided_by = idle, "timeout"
        finally:
            self._pending = None
        self.records.write({"episode": obs.get("episode"), "t": obs.get("t"), "decided_by": decided_by,
                            "valid": True, "sent": action})
        self.log.info("web action", episode=obs.get("episode"), t=obs.get("t"), action=action, by=decided_by)
        await self.publish("prompt", {**shown, "waiting": False, "last": action, "decided_by": decided_by,
                                      "mode": self.mode}, step=msg.step)
        await self.publish("action", action, step=msg.step)

    @service("web.mode")
    async def web_mode(self, body: Any) -> dict[str, Any]:
        """``{mode: human}`` takes over from the automatic agent, ``{mode: auto}`` hands back."""
        mode = body.get("mode") if isinstance(body, dict) else None
        if mode not in ("human", "auto"):
            raise ValueError(f"web.mode takes {{mode: human}} (take over) or {{mode: auto}} (hand back), not {body!r}")
        if mode == "auto" and not self.params.auto:
            raise ValueError(f"{self.id} has no automatic agent to hand back to (start the run with --takeover "
                             f"{self.id} for one)")
        self.mode = mode
        self._mode_changed.set()
        self.log.info("web mode", mode=mode)
        if getattr(self, "_shown", None) is not None:
            await self.publish("prompt", {**self._shown, "waiting": self._pending is not None, "mode": mode})
        return {"mode": mode}

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
