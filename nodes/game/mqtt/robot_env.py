"""The rover as an environment (docs/environments.md): this node plays the episodes and speaks the
rover's protocol (``nodes.game.mqtt.rover``) on plain bus outputs; an MQTT bridge carries them to
the device. It never touches MQTT itself, so the same node drives a simulated rover, a real one,
or one behind any other transport that delivers ``reset``/``cmd`` and returns ``state``.

Wiring: outputs ``reset`` and ``cmd`` go to the bridge's inputs that publish ``<prefix>/reset`` and
``<prefix>/cmd``; input ``state`` comes from the bridge output subscribed to ``<prefix>/state``.

Messages over a network can be lost or delayed, so every request is resent (after 0.25 s, then
at doubling intervals up to ``reply_timeout``) until the matching state arrives; the device treats a repeat as a no-op (see ``robot``), which makes
this safe. Params: ``max_steps`` (40), ``reply_timeout`` (2 s), ``retries`` per command (5),
``connect_timeout`` (30 s: how long the first reset of an episode may take, while the device comes
online), ``judge`` (false: this node ends its own episodes).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kernel.sdk.node import Episode, Node, service
from nodes.game.mqtt.rover import ACTIONS, IDLE, render, shortest_plan

ENV = "rover"
STATE_KEYS = frozenset({"episode", "t", "size", "x", "y", "heading", "goal", "rocks", "battery", "bumps", "reached",
                        "done"})


class RobotTimeout(RuntimeError):
    """The device did not answer; the message says which request and for how long."""


class MqttRobotEnv(Node):
    """Publishes ``obs`` per decision and ``step`` per applied action; serves ``oracle`` (the next
    action of a shortest path to the goal) and ``describe``."""

    inputs = ("action", "state")
    outputs = ("obs", "step", "cmd", "reset")

    async def setup(self) -> None:
        p = self.params
        self.max_steps = int(p.get("max_steps", 40))
        self.reply_timeout = float(p.get("reply_timeout", 2.0))
        self.retries = int(p.get("retries", 5))
        self.connect_timeout = float(p.get("connect_timeout", 30.0))
        self.judged = bool(p.get("judge", False))
        if not self.sources("state"):
            raise ValueError(f"node {self.id!r}: input 'state' is not wired; wire it to the bridge output that "
                             f"subscribes to <prefix>/state (see launch/robot_mqtt.yaml)")
        self.state: dict[str, Any] | None = None
        self.resends = 0

    async def run(self) -> None:
        while (episode := await self.next_episode()) is not None:
            self.state, self.resends = None, 0
            state = await self._exchange("reset", {"episode": episode.id, "seed": episode.seed},
                                         episode.id, 0, self.connect_timeout)
            await self._play(episode, state)

    async def _play(self, episode: Episode, state: dict[str, Any]) -> None:
        warned, stopped, t = False, False, 0
        while True:
            self.state = state
            await self.publish("obs", self._observation(state, episode.id, t), step=t)
            actions = await self.clock.actions(t)
            action = next(iter(actions.values()), None)
            stopped = isinstance(action, dict) and bool(action.get("stop"))
            known = isinstance(action, str) and action in ACTIONS  # a peer may send anything at all
            valid = known or action is None or stopped
            if not valid and not warned:
                warned = True
                self.log.warning("invalid action; the rover stands still this step", episode=episode.id, t=t,
                                 action=repr(action)[:80], allowed=list(ACTIONS))
            before = state
            if not stopped:
                cmd = {"episode": episode.id, "t": t, "action": action if known else IDLE}
                state = await self._exchange("cmd", cmd, episode.id, t + 1, self.reply_timeout * (self.retries + 1))
            done = stopped or bool(state["done"]) or t + 1 >= self.max_steps
            reward = float(state["reached"] and not before["reached"])
            await self.publish("step", {"episode": episode.id, "t": t, "action": action if known else None,
                                        "valid": valid, "reward": reward, "done": done,
                                        "info": {**state, "stopped": stopped}}, step=t)
            t += 1
            if done:
                break
        self.state = state
        if not self.judged:
            await self.end_episode(episode, success=float(state["reached"]), steps=t, battery=state["battery"],
                                   bumps=state["bumps"], stopped=stopped, resends=self.resends)

    async def _exchange(self, output: str, body: dict[str, Any], episode: str, t: int, timeout: float) -> dict[str, Any]:
        """Send ``body`` on ``output`` until the device reports the state of (``episode``, ``t``)."""
        deadline = time.monotonic() + timeout
        sent = 0
        while True:
            await self.publish(output, body)
            sent += 1
            # resend soon at first (a device may be coming online), then every reply_timeout
            resend_at = min(deadline, time.monotonic() + min(self.reply_timeout, 0.25 * 2 ** (sent - 1)))
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

    def _observation(self, state: dict[str, Any], episode: str, t: int) -> dict[str, Any]:
        gx, gy = state["goal"]
        text = (f"{render(state)}\nThe rover ({'^>v<'['NESW'.index(state['heading'])]}) is at ({state['x']}, "
                f"{state['y']}) facing {state['heading']}; the goal G is at ({gx}, {gy}); # are rocks. "
                f"Battery: {state['battery']} actions left.")
        return {"env": ENV, "episode": episode, "t": t, "actions": list(ACTIONS), "idle": IDLE,
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

    @service("describe")
    def describe(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"env": ENV, "actions": list(ACTIONS), "idle": IDLE, "max_steps": self.max_steps}
