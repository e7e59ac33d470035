"""Payload codecs between bus bodies and MQTT payloads (bytes).

MQTT carries opaque bytes, so each bridge mapping names how a body becomes bytes and back:

* ``json``: UTF-8 JSON, what most devices and dashboards speak. Numpy arrays are written as nested
  lists (their dtype is lost); bytes cannot be JSON and are refused; NaN and infinity are refused
  because strict JSON parsers (browsers, microcontrollers) reject them.
* ``msgpack``: compact and binary-safe. A numpy array travels as the map
  ``{"__ndarray__": 1, "dtype": <numpy type string, e.g. "<f4", "|u1">, "shape": [..], "data": <bytes>}``
  (C order), which a device in any language can build or read; the bridge turns such a map back
  into an array, so arrays survive a round trip exactly.
* ``raw``: the payload bytes as they are. Sending: bytes, a string (UTF-8) or an array (its C-order
  bytes). Receiving: bytes, or an array when the mapping gives ``dtype`` (and optionally ``shape``),
  for devices that stream fixed-layout frames.
* ``text``: a UTF-8 string (numbers and booleans are written with ``str``), for devices that
  publish plain readings such as ``23.5``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
import numpy as np

CodecName = Literal["json", "msgpack", "raw", "text"]
NDARRAY_KEY = "__ndarray__"
_NDARRAY_KEYS = {NDARRAY_KEY, "dtype", "shape", "data"}
_PLAIN_KINDS = "biufc"  # bool, int, uint, float, complex: what can be rebuilt from bytes alone


class CodecError(ValueError):
    """A body cannot be encoded, or a payload cannot be decoded, with the mapping's codec."""


@dataclass(frozen=True)
class Codec:
    """One mapping's codec; ``dtype``/``shape`` only matter to ``raw`` payloads received as arrays."""

    name: str = "json"
    dtype: np.dtype | None = None
    shape: tuple[int, ...] | None = None

    def encode(self, body: Any) -> bytes:
        if self.name == "json":
            return _json_encode(body)
        if self.name == "msgpack":
            try:
                return msgpack.packb(body, default=_msgpack_default, use_bin_type=True)
            except (TypeError, ValueError, OverflowError) as exc:
                raise CodecError(f"codec msgpack cannot encode the body: {exc}") from None
        if self.name == "raw":
            return self._raw_encode(body)
        if isinstance(body, str):
            return body.encode()
        if isinstance(body, (bool, int, float, np.generic)):
            return str(body.item() if isinstance(body, np.generic) else body).encode()
        raise CodecError(f"codec text sends strings and numbers, not {type(body).__name__}; use json or msgpack")

    def decode(self, payload: bytes) -> Any:
        if self.name == "json":
            try:
                return json.loads(payload)
            except (ValueError, UnicodeDecodeError) as exc:
                raise CodecError(f"payload is not JSON ({exc}): {bytes(payload[:40])!r}") from None
        if self.name == "msgpack":
            try:
                return msgpack.unpackb(payload, raw=False, object_hook=_ndarray_hook, strict_map_key=False)
            except CodecError:
                raise
            except Exception as exc:  # msgpack raises several unrelated types for malformed input
                raise CodecError(f"payload is not msgpack ({type(exc).__name__}: {exc})") from None
        if self.name == "raw":
            return self._raw_decode(payload)
        try:
            return bytes(payload).decode()
        except UnicodeDecodeError as exc:
            raise CodecError(f"payload is not UTF-8 text ({exc})") from None

    def _raw_encode(self, body: Any) -> bytes:
        if isinstance(body, (bytes, bytearray, memoryview)):
            return bytes(body)
        if isinstance(body, str):
            return body.encode()
        if isinstance(body, np.ndarray):
            if self.dtype is not None and body.dtype != self.dtype:
                raise CodecError(f"codec raw expects {self.dtype.str} arrays here, got {body.dtype.str}")
            return np.ascontiguousarray(body).tobytes()
        raise CodecError(f"codec raw sends bytes, strings or arrays, not {type(body).__name__}")

    def _raw_decode(self, payload: bytes) -> Any:
        if self.dtype is None:
            return bytes(payload)
        if len(payload) % self.dtype.itemsize:
            raise CodecError(f"a payload of {len(payload)} bytes is not a whole number of {self.dtype.str} items")
        array = np.frombuffer(bytes(payload), dtype=self.dtype)
        if self.shape is None:
            return array
        try:
            return array.reshape(self.shape)
        except ValueError:
            raise CodecError(f"{array.size} {self.dtype.str} items do not fit shape {list(self.shape)}") from None


def array_to_map(array: np.ndarray) -> dict[str, Any]:
    """The documented msgpack form of an array (see the module docstring)."""
    if array.dtype.kind not in _PLAIN_KINDS:
        raise CodecError(f"arrays of dtype {array.dtype} cannot travel; use a plain numeric dtype")
    return {NDARRAY_KEY: 1, "dtype": array.dtype.str, "shape": list(array.shape),
            "data": np.ascontiguousarray(array).tobytes()}


def map_to_array(m: dict[str, Any]) -> np.ndarray:
    try:
        dtype = np.dtype(m["dtype"])
        if dtype.kind not in _PLAIN_KINDS:
            raise TypeError(f"dtype {dtype} is not plain numeric")
        return np.frombuffer(m["data"], dtype=dtype).reshape([int(n) for n in m["shape"]])
    except (TypeError, ValueError) as exc:
        raise CodecError(f"malformed {NDARRAY_KEY} map: {exc}") from None


def _msgpack_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return array_to_map(obj)
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    raise TypeError(f"{type(obj).__name__} is not msgpack-serialisable")


def _ndarray_hook(m: dict[Any, Any]) -> Any:
    return map_to_array(m) if m.keys() == _NDARRAY_KEYS and m.get(NDARRAY_KEY) == 1 else m


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        raise CodecError("bytes cannot be JSON; use codec msgpack or raw for binary bodies")
    raise CodecError(f"{type(obj).__name__} cannot be JSON")


def _json_encode(body: Any) -> bytes:
    try:
        return json.dumps(body, default=_json_default, separators=(",", ":"), allow_nan=False).encode()
    except CodecError:
        raise
    except (TypeError, ValueError) as exc:
        reason = "NaN and infinity are not JSON" if "not JSON compliant" in str(exc) else str(exc)
        raise CodecError(f"codec json cannot encode the body: {reason}") from None

