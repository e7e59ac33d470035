"""The MQTT bridge: bus outputs become MQTT messages and MQTT messages become bus outputs, so any
device that speaks MQTT (a robot, a sensor, a dashboard) takes part in a graph like a node.

Its ports come from its params (``publish`` keys are inputs, ``subscribe`` outputs are outputs),
through the SDK's ``Node.ports`` hook.

Delivery: bus messages wait in a bounded outbox while the broker is away and are published in
order once it is back (the oldest are dropped, and counted, past ``outbox``); with QoS 1 (the
default) a message is removed from the outbox only when the broker acknowledged it.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, Sequence

import aiomqtt

from kernel.sdk.node import Node, service
from nodes.game.mqtt.codec import CodecError
from nodes.game.mqtt.config import BridgeConfig, BridgeParams, PublishRoute, SubscribeRoute, declared_ports, routes


@dataclass(frozen=True)
class Outgoing:
    route: PublishRoute
    payload: bytes


class Outbox:
    """Encoded messages waiting for the broker, in arrival order, at most ``limit`` of them."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.items: deque[Outgoing] = deque()
        self.dropped = 0
        self._ready = asyncio.Event()

    def put(self, item: Outgoing) -> None:
        if len(self.items) >= self.limit:
            self.items.popleft()
            self.dropped += 1
        self.items.append(item)
        self._ready.set()

    async def head(self) -> Outgoing:
        """The oldest item, left in place until ``pop`` (so a failed publish is retried)."""
        while not self.items:
            self._ready.clear()
            await self._ready.wait()
        return self.items[0]

    def pop(self) -> None:
        self.items.popleft()

    def __len__(self) -> int:
        return len(self.items)


class MqttBridge(Node):
    """Forwards bus outputs to MQTT topics and MQTT messages to bus outputs. Its inputs and outputs
    are the ``publish`` and ``subscribe`` mappings of its params; service ``stats``: connection state
    and counters."""

    Params = BridgeParams
    params: BridgeParams

    def ports(self, params: BridgeParams) -> tuple[Sequence[str], Sequence[str]]:
        return declared_ports(params)

    async def setup(self) -> None:
        self.cfg: BridgeConfig = routes(self.params, self.id)
        self.outbox = Outbox(self.cfg.outbox)
        self.connected = False
        self.connections = 0
        self.failed_attempts = 0
        self.published: Counter[str] = Counter()
        self.received: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self._warned: set[str] = set()
        self._tasks = [asyncio.ensure_future(self._start())]
        self._report()

    async def teardown(self) -> None:
        tasks = getattr(self, "_tasks", [])  # none when setup failed
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if tasks:
            self._report()

    @property
    def reconnects(self) -> int:
        return max(0, self.connections - 1)

    @service("stats")
    def stats(self, body: Any) -> dict[str, Any]:
        return {"broker": self.cfg.address, "client_id": self.cfg.client_id, "connected": self.connected,
                "reconnects": self.reconnects, "failed_attempts": self.failed_attempts,
                "published": dict(self.published), "received": dict(self.received), "errors": dict(self.errors),
                "outbox": len(self.outbox), "dropped": self.outbox.dropped}

    # ---------------------------------------------------------------------------------------
    async def _start(self) -> None:
        # Nothing is forwarded before the run starts: until then, peers may not be wired yet.
        await self.started()
        for route in self.cfg.publish:
            if self.sources(route.input):
                self._tasks.append(asyncio.ensure_future(self._collect(route)))
        await self._connection_loop()

    async def _collect(self, route: PublishRoute) -> None:
        """Encode each bus message of one input into the outbox (whether or not the broker is up)."""
        while True:
            msg = await self.recv(route.input)
            try:
                payload = route.codec.encode(msg.body)
            except CodecError as exc:
                self._error(f"encode {route.input}", f"cannot publish a message of input {route.input!r} "
                            f"to {route.topic}: {exc}")
                continue
            self.outbox.put(Outgoing(route, payload))

    async def _connection_loop(self) -> None:
        delay = self.cfg.backoff_min
        lost_at: float | None = None
        while True:
            connected_before = self.connections
            try:
                await self._session(lost_at)
                error = "the broker closed the connection"
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # anything at all: the bridge must keep trying, never die quietly
                error = _describe(exc)
            self.connected = False
            if self.connections > connected_before:  # it was up: start again from the shortest wait
                delay = self.cfg.backoff_min
                lost_at = time.monotonic()
                self.log.warning(f"lost the MQTT broker at {self.cfg.address}: {error}; reconnecting in "
                                 f"{delay:.1f} s", broker=self.cfg.address, queued=len(self.outbox))
            else:
                self.failed_attempts += 1
                self.log.warning(f"cannot reach the MQTT broker at {self.cfg.address}: {error}; retrying in "
                                 f"{delay:.1f} s", broker=self.cfg.address, attempts=self.failed_attempts)
            self._report()
            await asyncio.sleep(delay)
            delay = min(self.cfg.backoff_max, delay * 2)

    async def _session(self, lost_at: float | None) -> None:
        """One connection: subscribe, then move messages both ways until the connection fails."""
        async with aiomqtt.Client(self.cfg.host, self.cfg.port, identifier=self.cfg.client_id,
                                  keepalive=self.cfg.keepalive, timeout=10.0) as client:
            for route in self.cfg.subscribe:
                await client.subscribe(route.filter, qos=route.qos)
            self.connections += 1
            self.connected = True
            if self.connections == 1:
                self.log.info(f"connected to the MQTT broker at {self.cfg.address}", client_id=self.cfg.client_id)
            else:
                down = f" after {time.monotonic() - lost_at:.1f} s" if lost_at is not None else ""
                self.log.info(f"reconnected to the MQTT broker at {self.cfg.address}{down} "
                              f"(reconnect #{self.reconnects})", queued=len(self.outbox))
            self._report()
            async with asyncio.TaskGroup() as group:
                group.create_task(self._send(client))
                group.create_task(self._receive(client))

    async def _send(self, client: aiomqtt.Client) -> None:
        while True:
            item = await self.outbox.head()
            route = item.route
            try:
                await client.publish(route.topic, item.payload, qos=route.qos, retain=route.retain)
            except ValueError as exc:  # refused by the client itself (e.g. too large): retrying cannot help
                self.outbox.pop()
                self._error(f"publish {route.input}", f"cannot publish to {route.topic}: {exc}")
                continue
            self.outbox.pop()
            self.published[route.input] += 1
            self._report()

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            for route in self.cfg.subscribe:
                if message.topic.matches(route.filter):
                    await self._forward(route, message)

    async def _forward(self, route: SubscribeRoute, message: aiomqtt.Message) -> None:
        payload = message.payload if isinstance(message.payload, (bytes, bytearray)) else str(message.payload).encode()
        try:
            body = route.codec.decode(payload)
        except CodecError as exc:
            self._error(f"decode {route.filter}", f"dropped a message on {message.topic.value} "
                        f"(subscribed as {route.filter!r}, codec {route.codec.name}): {exc}")
            return
        if route.envelope:
            body = {"topic": message.topic.value, "payload": body, "retain": bool(message.retain)}
        await self.publish(route.output, body)
        self.received[route.filter] += 1
        self._report()

    def _error(self, key: str, text: str) -> None:
        """Count every error; log the first of each kind in full and then every 100th."""
        self.errors[key] += 1
        if key not in self._warned or self.errors[key] % 100 == 0:
            self._warned.add(key)
            self.log.warning(text, count=self.errors[key])
        self._report()

    def _report(self) -> None:
        """Totals for summary.json (sent with every heartbeat, and at exit)."""
        self.summarize("mqtt", {"published": sum(self.published.values()), "received": sum(self.received.values()),
                                "reconnects": self.reconnects, "errors": sum(self.errors.values()),
                                "dropped": self.outbox.dropped})


def _describe(exc: BaseException) -> str:
    """The first real error inside an exception group (the task group wraps what failed)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    cause = exc.__cause__
    return f"{text} ({cause})" if cause is not None and str(cause) else text
