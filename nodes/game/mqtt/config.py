"""The MQTT bridge's params, checked up front so that a typo stops the run in the launcher (through
``Node.preflight``) with the key's path, what is allowed and the closest spelling, instead of a
bridge that silently never forwards anything.

Params (docs/robots.md has the full table)::

    host: 127.0.0.1          port: 1883          client_id: framebus-<node id>-<pid>
    qos: 1                   keepalive: 30       codec: json        # defaults for every mapping
    backoff_min: 0.2         backoff_max: 5.0    outbox: 1000
    publish:   {<input>: <topic>  |  <input>: {topic, codec, qos, retain}}
    subscribe: {<filter>: <output>  |  <filter>: {output, codec, qos, envelope, dtype, shape}}
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from nodes.game.mqtt.codec import CODECS, Codec

TOP_KEYS = ("host", "port", "client_id", "qos", "keepalive", "codec", "publish", "subscribe",
            "backoff_min", "backoff_max", "outbox", "replica")
PUBLISH_KEYS = ("topic", "codec", "qos", "retain")
SUBSCRIBE_KEYS = ("output", "codec", "qos", "envelope", "dtype", "shape")
QOS_LEVELS = (0, 1, 2)
PORT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


class ParamError(ValueError):
    """A bridge param is missing, misspelt or out of range; the message names the key."""


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


def parse(params: Mapping[str, Any], node_id: str = "bridge") -> BridgeConfig:
    """Check every param and build the bridge's config; raises ParamError naming the first problem."""
    _known(params, TOP_KEYS, "")
    host = params.get("host", "127.0.0.1")
    if not isinstance(host, str) or not host:
        raise ParamError(f"param host: expected a host name or address, got {host!r}")
    port = _int(params.get("port", 1883), "port", 1, 65535)
    qos = _choice(params.get("qos", 1), "qos", QOS_LEVELS)
    codec = _choice(params.get("codec", "json"), "codec", CODECS)
    backoff_min = _positive(params.get("backoff_min", 0.2), "backoff_min")
    backoff_max = _positive(params.get("backoff_max", 5.0), "backoff_max")
    if backoff_max < backoff_min:
        raise ParamError(f"param backoff_max ({backoff_max}) must be >= backoff_min ({backoff_min})")
    publish = tuple(_publish_route(name, spec, codec, qos) for name, spec in _mapping(params, "publish").items())
    subscribe = tuple(_subscribe_route(flt, spec, codec, qos) for flt, spec in _mapping(params, "subscribe").items())
    if not publish and not subscribe:
        raise ParamError("params publish and subscribe are both empty: the bridge would forward nothing; "
                         "give at least one mapping, e.g. publish: {cmd: robot1/cmd}")
    client_id = params.get("client_id") or f"framebus-{node_id}-{os.getpid()}"
    if not isinstance(client_id, str):
        raise ParamError(f"param client_id: expected a string, got {client_id!r}")
    return BridgeConfig(host=host, port=port, client_id=client_id,
                        keepalive=_int(params.get("keepalive", 30), "keepalive", 5, 65535),
                        publish=publish, subscribe=subscribe, backoff_min=backoff_min, backoff_max=backoff_max,
                        outbox=_int(params.get("outbox", 1000), "outbox", 1, 10_000_000))


def declared_ports(params: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The bridge's inputs and outputs as the params name them, read leniently so that a node with a
    bad param still registers and then reports the param problem itself (see ``parse``)."""
    publish = params.get("publish")
    inputs = [str(k) for k in publish] if isinstance(publish, Mapping) else []
    outputs: list[str] = []
    subscribe = params.get("subscribe")
    if isinstance(subscribe, Mapping):
        for spec in subscribe.values():
            name = spec.get("output") if isinstance(spec, Mapping) else spec
            if isinstance(name, str) and name not in outputs:
                outputs.append(name)
    return inputs, outputs


def _publish_route(name: Any, spec: Any, codec: str, qos: int) -> PublishRoute:
    where = f"publish.{name}"
    _port_name(name, where, "input")
    if isinstance(spec, str):
        spec = {"topic": spec}
    if not isinstance(spec, Mapping):
        raise ParamError(f"param {where}: expected a topic or a mapping with keys {', '.join(PUBLISH_KEYS)}; "
                         f"got {spec!r}")
    _known(spec, PUBLISH_KEYS, where + ".")
    topic = spec.get("topic")
    if not isinstance(topic, str) or not topic:
        raise ParamError(f"param {where}.topic: expected a topic such as robot1/cmd, got {topic!r}")
    if "+" in topic or "#" in topic or "\0" in topic:
        raise ParamError(f"param {where}.topic: {topic!r} has a wildcard (+ or #); one can subscribe to "
                         f"wildcards but not publish to them")
    retain = spec.get("retain", False)
    if not isinstance(retain, bool):
        raise ParamError(f"param {where}.retain: expected true or false, got {retain!r}")
    return PublishRoute(input=name, topic=topic, retain=retain,
                        codec=Codec(_choice(spec.get("codec", codec), f"{where}.codec", CODECS)),
                        qos=_choice(spec.get("qos", qos), f"{where}.qos", QOS_LEVELS))


def _subscribe_route(flt: Any, spec: Any, codec: str, qos: int) -> SubscribeRoute:
    where = f"subscribe.{flt}"
    if not isinstance(flt, str) or not flt:
        raise ParamError(f"param subscribe: the keys are topic filters such as robot1/state, got {flt!r}")
    _check_filter(flt, where)
    if isinstance(spec, str):
        spec = {"output": spec}
    if not isinstance(spec, Mapping):
        raise ParamError(f"param {where}: expected an output name or a mapping with keys "
                         f"{', '.join(SUBSCRIBE_KEYS)}; got {spec!r}")
    _known(spec, SUBSCRIBE_KEYS, where + ".")
    output = spec.get("output")
    _port_name(output, f"{where}.output", "output")
    name = _choice(spec.get("codec", codec), f"{where}.codec", CODECS)
    dtype, shape = spec.get("dtype"), spec.get("shape")
    if (dtype is not None or shape is not None) and name != "raw":
        raise ParamError(f"param {where}: dtype and shape describe raw payloads; set codec: raw here "
                         f"(msgpack arrays carry their own dtype and shape)")
    if shape is not None and dtype is None:
        raise ParamError(f"param {where}.shape: give dtype too (e.g. dtype: uint8)")
    envelope = spec.get("envelope", False)
    if not isinstance(envelope, bool):
        raise ParamError(f"param {where}.envelope: expected true or false, got {envelope!r}")
    return SubscribeRoute(filter=flt, output=output, envelope=envelope,
                          codec=Codec(name, _dtype(dtype, f"{where}.dtype"), _shape(shape, f"{where}.shape")),
                          qos=_choice(spec.get("qos", qos), f"{where}.qos", QOS_LEVELS))


def _check_filter(flt: str, where: str) -> None:
    levels = flt.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            raise ParamError(f"param {where}: '#' must be a whole level and the last one (e.g. robot1/#)")
        if "+" in level and level != "+":
            raise ParamError(f"param {where}: '+' must be a whole level (e.g. robot1/+/state)")


def _mapping(params: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = params.get(key) or {}
    if not isinstance(value, Mapping):
        example = "{cmd: robot1/cmd}" if key == "publish" else "{robot1/state: state}"
        raise ParamError(f"param {key}: expected a mapping such as {example}, got {value!r}")
    return value


def _known(spec: Mapping[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
    for key in spec:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            shown = ", ".join(k for k in allowed if k != "replica")
            raise ParamError(f"param {prefix}{key}: unknown key; allowed: {shown}{hint}")


def _choice(value: Any, where: str, allowed: tuple[Any, ...]) -> Any:
    if isinstance(value, bool) or value not in allowed:
        close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1)
        hint = f" (did you mean {close[0]!r}?)" if close and close[0] != str(value) else ""
        raise ParamError(f"param {where}: unknown value {value!r}; allowed: {', '.join(map(str, allowed))}{hint}")
    return value


def _int(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ParamError(f"param {where}: expected an integer from {low} to {high}, got {value!r}")
    return value


def _positive(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ParamError(f"param {where}: expected a number of seconds > 0, got {value!r}")
    return float(value)


def _port_name(name: Any, where: str, kind: str) -> None:
    if not isinstance(name, str) or not PORT_NAME.match(name):
        raise ParamError(f"param {where}: {name!r} is not a valid {kind} name (letters, digits, _ . -; "
                         f"not starting with a digit)")


def _dtype(value: Any, where: str) -> np.dtype | None:
    if value is None:
        return None
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise ParamError(f"param {where}: {value!r} is not a numpy dtype (e.g. uint8, float32, <i2)") from None
    if dtype.kind not in "biufc":
        raise ParamError(f"param {where}: {dtype} is not a plain numeric dtype")
    return dtype


def _shape(value: Any, where: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if (not isinstance(value, (list, tuple)) or not value
            or not all(isinstance(n, int) and not isinstance(n, bool) and (n > 0 or n == -1) for n in value)
            or list(value).count(-1) > 1):
        raise ParamError(f"param {where}: expected a list of positive sizes (one may be -1), got {value!r}")
    return tuple(value)
