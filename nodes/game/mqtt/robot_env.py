"""The rover as an environment (docs/environments.md): this node plays the episodes and speaks the
rover's protocol (``nodes.game.mqtt.rover``) on plain bus outputs; an MQTT bridge carries them to
the device. It never touches MQTT itself, so the same node drives a simulated rover, a real one,
or one behind any other transport that delivers ``reset``/``cmd`` and returns ``state``.

Wiring: outputs ``reset`` and ``cmd`` go to the bridge's inputs that publish ``<prefix>/reset`` and
``<prefix>/cmd``; input ``state`` comes from the bridge output subscribed to ``<prefix>/state``.

Messages over a network can be lost or delayed, so every request is resent (after 0.25 s, then
at doubling intervals up to ``reply_timeout``) until the matching state arrives; the device treats a repeat as a no-op (see ``robot``), which makes
this safe. Parameters: ``launch describe mqtt.rover``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pydantic import Field

from kernel.sdk.env import EnvNode, EnvParams, Observation, StepResult
from kernel.sdk.node import Episode, service
from nodes.game.mqtt.rover import ACTIONS, IDLE, render, shortest_plan

STATE_KEYS = frozenset({"episode", "t", "size", "x", "y", "heading", "goal", "rocks", "battery", "bumps", "reached",
                        "done"})


class RobotTimeout(RuntimeError):
    """The device did not answer; the message says which request and for how long."""


class MqttRobotEnv(EnvNode):
    """Publishes ``obs`` per decision and ``step`` per applied action; serves ``oracle`` (the next
    action of a shortest path to the goal) and ``describe``."""

    class Params(EnvParams):
        max_steps: int | None = Field(40, gt=0, description="decisions per episode at most")
        reply_timeout: float = Field(2.0, gt=0, description="seconds before a command is sent again")
        retries: int = Field(5, ge=0, description="resends of a command before giving up")
        connect_timeout: float = Field(30.0, gt=0, description="how long the first reset of an episode may take, "
                                                               "while the device comes online")

    env = "rover"
    inputs = ("action", "state")
    outputs = ("obs", "step", "cmd", "reset")
    params: Params

    async def setup(self) -> None:
        if not self.sources("state"):
            raise ValueError(f"node {self.id!r}: input 'state' is not wired; wire it to the bridge output that "
                             f"subscribes to <prefix>/state (see launch/robot_mqtt.yaml)")
        self.state: dict[str, Any] | None = None
        self.resends = 0

    async def reset(self, episode: Episode) -> None:
        self.state, self.resends, self.t = None, 0, 0
        self.state = await self._exchange("reset", {"episode": episode.id, "seed": episode.seed},
                                          episode.id, 0, self.params.connect_timeout)

    def observe(self) -> Observation:
        return self._observation(self._state())

    async def step(self, action: str | None) -> StepResult:
        before = self._state()
        cmd = {"episode": before["episode"], "t": self.t, "action": action if action is not None else IDLE}
        self.t += 1
        state = await self._exchange("cmd", cmd, before["episode"], self.t,
                                     self.params.reply_timeout * (self.params.retries + 1))
        self.state = state
        return StepResult(float(state["reached"] and not before["reached"]), bool(state["done"]),
                          {**state, "success": bool(state["reached"])})

    async def stop(self, reason: str) -> StepResult:
        return StepResult(0.0, True, {**self._state(), "success": False})

    def metrics(self, last: Any) -> dict[str, Any]:
        state = self._state()
        return {"success": float(state["reached"]), "battery": state["battery"], "bumps": state["bumps"],
                "resends": self.resends}

    def _state(self) -> dict[str, Any]:
        assert self.state is not None, "no episode in play"
        return self.state

    async def _exchange(self, output: str, body: dict[str, Any], episode: str, t: int, timeout: float) -> dict[str, Any]:
        """Send ``body`` on ``output`` until the device reports the state of (``episode``, ``t``)."""
        deadline = time.monotonic() + timeout
        sent = 0
        while True:
            await self.publish(output, body)
            sent += 1
            # resend soon at first (a device may be coming online), then every reply_timeout
            resend_at = min(deadline, time.monotonic() + min(self.params.reply_timeout, 0.25 * 2 ** (sent - 1)))
            while (left := resend_at - time.monotonic()) > 0:
                try:
                    msg = await asyncio.wait_for(self.recv("state"), left)
                except asyncio.TimeoutError:
                    break
                state = msg.body
                if not isinstance(state, dict) or not STATE_KEYS <= state.keys():
                    self.log.warning("ignored a malformed rover state", state=repr(state)[:120],
                                     expected=sorted(STATE_KEYS))
                elif state.get("episode") == episode and state.get("t") == t:
                    self.resends += sent - 1
                    return state
                # anything else is a late answer to an earlier request: skip it
            if time.monotonic() >= deadline:
                raise RobotTimeout(f"the rover sent no state for episode {episode} step {t} within {timeout:.0f} s "
                                   f"({sent} {output} messages sent): is the device online, and the bridge "
                                   f"connected to its broker? (the bridge's log and `stats` service say)")
            self.log.info(f"no answer to {output} yet; sending it again", episode=episode, t=t, sent=sent)

    def _observation(self, state: dict[str, Any]) -> Observation:
        gx, gy = state["goal"]
        text = (f"{render(state)}\nThe rover ({'^>v<'['NESW'.index(state['heading'])]}) is at ({state['x']}, "
                f"{state['y']}) facing {state['heading']}; the goal G is at ({gx}, {gy}); # are rocks. "
                f"Battery: {state['battery']} actions left.")
        return {"actions": list(ACTIONS), "idle": IDLE,
                "goal": f"drive the rover to ({gx}, {gy}) before its battery runs out", "text": text,
                "x": state["x"], "y": state["y"], "heading": state["heading"], "target": [gx, gy],
                "battery": state["battery"], "bumps": state["bumps"]}

    @service("oracle")
    def oracle(self, body: dict[str, Any]) -> Any:
        """The first action of a shortest path to the goal; a stop body when no path fits the battery."""
        state = self.state
        if state is None or (body or {}).get("episode") not in (None, state["episode"]):
            return None
        plan = shortest_plan(state)
        if plan is None or len(plan) > state["battery"]:
            return {"stop": True, "reason": "the goal cannot be reached with the battery left"}
        return plan[0] if plan else IDLE

    def action_names(self) -> list[str]:
        return list(ACTIONS)

    @service("describe")
    def describe(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"env": self.env, "actions": list(ACTIONS), "idle": IDLE, "max_steps": self.params.max_steps}
