"""Small nodes used by the tests; they run as real processes under the supervisor."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import numpy as np

from kernel.sdk.node import Message, Node, on_input, service


class Emitter(Node):
    """Publishes on demand, as fast as it can: drives the queue-policy tests."""

    outputs = ("out",)

    @service("emit")
    async def emit(self, body: dict) -> int:
        for i in range(int(body["n"])):
            payload = {"i": i}
            if body.get("array_bytes"):
                payload["a"] = np.full(int(body["array_bytes"]), i % 256, np.uint8)
            await self.publish("out", payload, step=i)
        return int(body["n"])


class Renamed(Node):
    """Takes its port names from params, as a bridge whose topics the launch file sets: only the
    kernel, when the node says hello, can check a wire to it."""

    def ports(self, params: dict) -> tuple[list[str], list[str]]:
        return list(params.get("inputs", [])), list(params.get("outputs", []))


class SlowSink(Node):
    """Consumes ``in`` with a handler that sleeps ``sleep_s`` per message and remembers what it saw."""

    inputs = ("in",)

    async def setup(self) -> None:
        self.seen: list[int] = []

    @on_input("in")
    async def take(self, msg: Message) -> None:
        await asyncio.sleep(float(self.params.get("sleep_s", 0.0)))
        self.seen.append(msg.body["i"])

    @service("seen")
    def report(self, body: object) -> list[int]:
        return self.seen


class Services(Node):
    @service("echo")
    def echo(self, body: object) -> object:
        return body

    @service("slow")
    async def slow(self, seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "late"

    @service("boom")
    def boom(self, body: object) -> None:
        raise ValueError("boom on purpose")

    @service("shape")
    def shape(self, body: dict) -> list[int]:
        return list(body["a"].shape)

    @service("ask")
    async def ask(self, body: dict) -> object:
        """Calls ``body["svc"]`` of ``body["node"]``: once it answers, this node's own connection to that
        node is up (and holds its identity's route there)."""
        return await self.request(body["node"], body["svc"], body.get("body"))


class Chatter(Emitter, Services):
    """Publishes on demand and asks its peers: fills its queue to a stopped peer, then asks that peer."""


class Faulty(Node):
    """A service and an input handler that raise: what a caller and the node's log get from it."""

    inputs = ("in",)

    @service("lookup")
    def lookup(self, body: dict) -> object:
        return {}[body["key"]]

    @on_input("in")
    async def take(self, msg: Message) -> None:
        raise ZeroDivisionError(f"handler fails on purpose at {msg.body['i']}")


class CrashOnStart(Node):
    """Crashes in setup for its first ``crashes`` incarnations (counted in a file), then serves."""

    async def setup(self) -> None:
        counter = Path(os.environ["FRAMEBUS_LOG_DIR"]) / f"{self.id}.starts"
        starts = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(starts + 1))
        if starts < int(self.params.get("crashes", 1)):
            raise RuntimeError(f"crash number {starts + 1} on purpose")

    @service("starts")
    def starts(self, body: object) -> int:
        return int((Path(os.environ["FRAMEBUS_LOG_DIR"]) / f"{self.id}.starts").read_text())


class Hung(Node):
    """Ignores SIGTERM and never finishes its teardown: only SIGKILL ends it."""

    async def setup(self) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

    async def teardown(self) -> None:
        while True:
            time.sleep(1.0)  # blocks the loop on purpose, like a stuck native call


class ClockEnv(Node):
    """Steps ``steps`` times through its clock and reports what each step saw, then ends."""

    inputs = ("action",)
    outputs = ("obs", "log")

    async def run(self) -> None:
        steps = int(self.params.get("steps", 5))
        for t in range(steps):
            await self.publish("obs", {"t": t}, step=t)
            start = time.monotonic()
            actions = await self.clock.actions(t)
            await self.publish("log", {"t": t, "actions": actions, "waited": time.monotonic() - start,
                                       "at": time.time()})
        await self.publish("log", {"stats": self.clock.stats()})


class Hoarder(Node):
    """Keeps every array it receives (like an agent's frame memory) and checks none changed."""

    inputs = ("in",)

    async def setup(self) -> None:
        self.kept: list[tuple[int, np.ndarray]] = []

    @on_input("in")
    async def keep(self, msg: Message) -> None:
        if self.params.get("keep", True):
            self.kept.append((msg.body["i"], msg.body["a"]))
        else:
            assert int(msg.body["a"][0]) == msg.body["i"] % 256

    @service("check")
    def check(self, body: object) -> dict:
        intact = all(bool((a == i % 256).all()) for i, a in self.kept)
        return {"count": len(self.kept), "intact": intact,
                "writeable": any(a.flags.writeable for _, a in self.kept)}

    @service("forget")
    def forget(self, body: object) -> int:
        n = len(self.kept)
        self.kept.clear()
        return n
