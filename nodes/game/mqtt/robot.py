"""A simulated rover that lives behind an MQTT broker and speaks nothing else: it stands in for a
real robot, so the bridge and the environment are exercised exactly as they would be with hardware.

    python -m nodes.game.mqtt.robot --host 127.0.0.1 --port 1883 --prefix rover1

It is not a framebus node and imports nothing of framebus but the shared rover geometry. Topics
(JSON payloads, QoS 1):

* ``<prefix>/reset`` ``{"episode": id, "seed": n}``: a new world from the seed (rocks, start, goal);
  a reset for the episode already running only repeats the state, so a resent reset is harmless;
* ``<prefix>/cmd`` ``{"episode": id, "t": n, "action": "forward"|"left"|"right"|"stop"}``: applied
  when ``t`` is the rover's step count; a repeated ``t`` only repeats the state (at-least-once
  delivery is safe); commands for another episode are ignored;
* ``<prefix>/state``: published after every reset and command (fields in ``nodes.game.mqtt.rover``).

The episode is done when the rover reaches the goal or its battery is empty.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import sys
from dataclasses import dataclass
from typing import Any

import aiomqtt

from nodes.game.mqtt.rover import ACTIONS, HEADINGS, ahead, free, shortest_plan, turn

log = logging.getLogger("rover")


@dataclass
class Rover:
    episode: str
    size: int
    x: int
    y: int
    heading: str
    goal: tuple[int, int]
    rocks: set[tuple[int, int]]
    battery: int
    t: int = 0
    bumps: int = 0
    last: str | None = None

    @classmethod
    def generate(cls, episode: str, seed: int, size: int = 7, battery: int = 24, rocks: int = 6) -> Rover:
        """A world whose goal is reachable within the battery, the same for the same seed."""
        rng = random.Random(seed)
        cells = [(x, y) for x in range(size) for y in range(size)]
        while True:
            picked = rng.sample(cells, rocks + 2)
            (sx, sy), goal, stones = picked[0], picked[1], set(picked[2:])
            if abs(sx - goal[0]) + abs(sy - goal[1]) < size // 2:
                continue
            rover = cls(episode, size, sx, sy, rng.choice(HEADINGS), goal, stones, battery)
            plan = shortest_plan(rover.state())
            if plan is not None and len(plan) <= battery:
                return rover

    @property
    def reached(self) -> bool:
        return (self.x, self.y) == self.goal

    @property
    def done(self) -> bool:
        return self.reached or self.battery <= 0

    def apply(self, action: str) -> None:
        """One command; a done rover, or an unknown action, only counts the step."""
        self.t += 1
        self.last = action
        if self.done or action not in ACTIONS or action == "stop":
            return
        self.battery -= 1
        if action == "forward":
            cell = ahead(self.x, self.y, self.heading)
            if free(cell, self.size, self.rocks):
                self.x, self.y = cell
            else:
                self.bumps += 1
        else:
            self.heading = turn(self.heading, action)

    def state(self) -> dict[str, Any]:
        return {"episode": self.episode, "t": self.t, "size": self.size, "x": self.x, "y": self.y,
                "heading": self.heading, "goal": list(self.goal), "rocks": sorted(map(list, self.rocks)),
                "battery": self.battery, "bumps": self.bumps, "last": self.last, "reached": self.reached,
                "done": self.done}


class Device:
    """The rover's message handling, without the network: a topic suffix and payload in, the state
    to publish (or None) out."""

    def __init__(self, size: int = 7, battery: int = 24, rocks: int = 6) -> None:
        self.size, self.battery, self.rocks = size, battery, rocks
        self.rover: Rover | None = None

    def handle(self, kind: str, payload: bytes) -> dict[str, Any] | None:
        try:
            body = json.loads(payload)
            if not isinstance(body, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            log.warning("ignored a %s message that is not a JSON object (%s): %r", kind, exc, payload[:60])
            return None
        episode = str(body.get("episode"))
        if kind == "reset":
            if self.rover is None or self.rover.episode != episode:
                seed = body.get("seed", 0)
                self.rover = Rover.generate(episode, int(seed) if isinstance(seed, int) else 0,
                                            self.size, self.battery, self.rocks)
                log.info("episode %s: start (%d,%d) facing %s, goal %s", episode, self.rover.x, self.rover.y,
                         self.rover.heading, self.rover.goal)
            return self.rover.state()
        if self.rover is None or self.rover.episode != episode:
            log.warning("ignored a command for episode %s (running: %s)", episode,
                        self.rover.episode if self.rover else "none")
            return None
        t = body.get("t")
        if t == self.rover.t:
            self.rover.apply(str(body.get("action")))
        elif not isinstance(t, int) or t > self.rover.t:
            log.warning("command t=%r is ahead of the rover (t=%d): a command was lost", t, self.rover.t)
        return self.rover.state()


async def serve(host: str, port: int, prefix: str, device: Device) -> None:
    """Connect, answer commands, and reconnect with backoff whenever the broker goes away."""
    delay = 0.2
    while True:
        try:
            async with aiomqtt.Client(host, port, identifier=f"rover-{prefix}-{os.getpid()}") as client:
                await client.subscribe(f"{prefix}/reset", qos=1)
                await client.subscribe(f"{prefix}/cmd", qos=1)
                log.info("online at %s:%d as %s", host, port, prefix)
                delay = 0.2
                async for message in client.messages:
                    kind = message.topic.value.rsplit("/", 1)[-1]
                    state = device.handle(kind, bytes(message.payload))  # type: ignore[arg-type]
                    if state is not None:
                        await client.publish(f"{prefix}/state", json.dumps(state), qos=1)
        except aiomqtt.MqttError as exc:
            log.warning("broker %s:%d unreachable (%s); retrying in %.1f s", host, port, exc, delay)
            await asyncio.sleep(delay)
            delay = min(5.0, delay * 2)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="a simulated grid rover behind an MQTT broker")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=1883)
    p.add_argument("--prefix", default="rover1", help="topic prefix: <prefix>/cmd, /reset, /state")
    p.add_argument("--size", type=int, default=7, help="grid side in cells")
    p.add_argument("--battery", type=int, default=24, help="actions the battery lasts per episode")
    p.add_argument("--rocks", type=int, default=6)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format=f"rover {args.prefix}: %(message)s")
    try:
        asyncio.run(serve(args.host, args.port, args.prefix, Device(args.size, args.battery, args.rocks)))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
