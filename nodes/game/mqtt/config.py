"""The MQTT bridge's params as a pydantic model, so that a typo stops the run in the launcher with
the key's path, what is allowed and the closest spelling, instead of a bridge that silently never
forwards anything; plus the routes the bridge runs, built from the parsed params.

Params (docs/robots.md has the full table)::

    host: 127.0.0.1          port: 1883          client_id: framebus-<node id>-<pid>
    qos: 1                   keepalive: 30       codec: json        # defaults for every mapping
    backoff_min: 0.2         backoff_max: 5.0    outbox: 1000
    publish:   {<input>: <topic>  |  <input>: {topic, codec, qos, retain}}
    subscribe: {<filter>: <output>  |  <filter>: {output, codec, qos, envelope, dtype, shape}}
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from kernel.sdk.node import NodeParams
from nodes.game.mqtt.codec import Codec, CodecName

QoS = Literal[0, 1, 2]
PortName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$")]


class _Mapping(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PublishSpec(_Mapping):
    topic: str = Field(min_length=1, description="the MQTT topic, e.g. robot1/cmd (no wildcards)")
    codec: CodecName | None = Field(None, description="default: the bridge's codec")
    qos: QoS | None = Field(None, description="default: the bridge's qos")
    retain: bool = Field(False, description="ask the broker to keep the last message for new subscribers")

    @field_validator("topic")
    @classmethod
    def _no_wildcards(cls, topic: str) -> str:
        if "+" in topic or "#" in topic or "\0" in topic:
            raise ValueError(f"{topic!r} has a wildcard (+ or #); one can subscribe to wildcards but not "
                             "publish to them")
        return topic


class SubscribeSpec(_Mapping):
    output: PortName = Field(description="the bus output the messages go out on")
    codec: CodecName | None = Field(None, description="default: the bridge's codec")
    qos: QoS | None = Field(None, description="default: the bridge's qos")
    envelope: bool = Field(False, description="body {topic, payload, retain} instead of the bare payload "
                           "(for wildcards)")
    dtype: str | None = Field(None, description="raw payloads: the numpy dtype of the array (e.g. uint8)")
    shape: list[int] | None = Field(None, description="raw payloads: the array's shape (one size may be -1)")

    @field_validator("dtype")
    @classmethod
    def _numeric_dtype(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                kind = np.dtype(value).kind
            except TypeError:
                raise ValueError(f"{value!r} is not a numpy dtype (e.g. uint8, float32, <i2)") from None
            if kind not in "biufc":
                raise ValueError(f"{value} is not a plain numeric dtype")
        return value

    @field_validator("shape")
    @classmethod
    def _sizes(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and (not value or not all(n > 0 or n == -1 for n in value) or value.count(-1) > 1):
            raise ValueError(f"expected a list of positive sizes (one may be -1), got {value!r}")
        return value

    @model_validator(mode="after")
    def _shape_needs_dtype(self) -> SubscribeSpec:
        if self.shape is not None and self.dtype is None:
            raise ValueError("shape needs dtype too (e.g. dtype: uint8)")
        return self


class BridgeParams(NodeParams):
    host: str = Field("127.0.0.1", min_length=1, description="the broker's host name or address")
    port: int = Field(1883, ge=1, le=65535, description="the broker's port")
    client_id: str | None = Field(None, description="the MQTT client id (default framebus-<node id>-<pid>)")
    qos: QoS = Field(1, description="default QoS of every mapping")
    keepalive: int = Field(30, ge=5, le=65535, description="seconds between MQTT pings")
    codec: CodecName = Field("json", description="default payload codec of every mapping")
    backoff_min: float = Field(0.2, gt=0, description="first wait (seconds) before reconnecting")
    backoff_max: float = Field(5.0, gt=0, description="longest wait (seconds) between reconnects")
    outbox: int = Field(1000, ge=1, le=10_000_000, description="bus messages kept while the broker is away "
                        "(the oldest are dropped past this)")
    publish: dict[PortName, PublishSpec] = Field(default_factory=dict, description="bus input -> topic, or "
                                                 "-> {topic, codec, qos, retain}")
    subscribe: dict[str, SubscribeSpec] = Field(default_factory=dict, description="topic filter -> bus output, "
                                                "or -> {output, codec, qos, envelope, dtype, shape}")

    @field_validator("publish", mode="before")
    @classmethod
    def _short_publish(cls, value: Any) -> Any:
        return {k: {"topic": v} if isinstance(v, str) else v for k, v in value.items()} \
            if isinstance(value, dict) else value

    @field_validator("subscribe", mode="before")
    @classmethod
    def _short_subscribe(cls, value: Any) -> Any:
        return {k: {"output": v} if isinstance(v, str) else v for k, v in value.items()} \
            if isinstance(value, dict) else value

    @field_validator("subscribe")
    @classmethod
    def _filters(cls, value: dict[str, SubscribeSpec]) -> dict[str, SubscribeSpec]:
        for flt in value:
            levels = flt.split("/")
            for i, level in enumerate(levels):
                if not flt or ("#" in level and (level != "#" or i != len(levels) - 1)):
                    raise ValueError(f"filter {flt!r}: '#' must be a whole level and the last one (e.g. robot1/#)")
                if "+" in level and level != "+":
                    raise ValueError(f"filter {flt!r}: '+' must be a whole level (e.g. robot1/+/state)")
        return value

    @model_validator(mode="after")
    def _coherent(self) -> BridgeParams:
        if self.backoff_max < self.backoff_min:
            raise ValueError(f"backoff_max ({self.backoff_max}) must be >= backoff_min ({self.backoff_min})")
        if not self.publish and not self.subscribe:
            raise ValueError("publish and subscribe are both empty: the bridge would forward nothing; give at "
                             "least one mapping, e.g. publish: {cmd: robot1/cmd}")
        for flt, spec in self.subscribe.items():
            if (spec.dtype is not None or spec.shape is not None) and (spec.codec or self.codec) != "raw":
                raise ValueError(f"subscribe {flt!r}: dtype and shape describe raw payloads; set codec: raw "
                                 "there (msgpack arrays carry their own dtype and shape)")
        return self


@dataclass(frozen=True)
class PublishRoute:
    """Bus messages on ``input`` are published to ``topic``."""

    input: str
    topic: str
    codec: Codec
    qos: int
    retain: bool


@dataclass(frozen=True)
class SubscribeRoute:
    """MQTT messages matching ``filter`` become bus messages on ``output``."""

    filter: str
    output: str
    codec: Codec
    qos: int
    envelope: bool  # body {"topic", "payload", "retain"} instead of the bare payload (for wildcards)


@dataclass(frozen=True)
class BridgeConfig:
    host: str
    port: int
    client_id: str
    keepalive: int
    publish: tuple[PublishRoute, ...]
    subscribe: tuple[SubscribeRoute, ...]
    backoff_min: float
    backoff_max: float
    outbox: int

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def routes(p: BridgeParams, node_id: str = "bridge") -> BridgeConfig:
    """The bridge's config: each mapping with the bridge-wide defaults filled in."""
    publish = tuple(PublishRoute(input=name, topic=spec.topic, codec=Codec(spec.codec or p.codec),
                                 qos=p.qos if spec.qos is None else spec.qos, retain=spec.retain)
                    for name, spec in p.publish.items())
    subscribe = tuple(SubscribeRoute(
        filter=flt, output=spec.output, envelope=spec.envelope, qos=p.qos if spec.qos is None else spec.qos,
        codec=Codec(spec.codec or p.codec, None if spec.dtype is None else np.dtype(spec.dtype),
                    None if spec.shape is None else tuple(spec.shape)))
        for flt, spec in p.subscribe.items())
    return BridgeConfig(host=p.host, port=p.port, client_id=p.client_id or f"framebus-{node_id}-{os.getpid()}",
                        keepalive=p.keepalive, publish=publish, subscribe=subscribe, backoff_min=p.backoff_min,
                        backoff_max=p.backoff_max, outbox=p.outbox)


def declared_ports(p: BridgeParams) -> tuple[list[str], list[str]]:
    """The bridge's inputs (the publish keys) and outputs (the subscribe outputs, each once)."""
    return list(p.publish), list(dict.fromkeys(spec.output for spec in p.subscribe.values()))
