"""The framebus wire protocol: how one message becomes ZeroMQ frames and back.

A message is a multipart ZeroMQ message ``[header, body, array_0, array_1, ...]``:

* ``header`` is a msgpack map (keys ``v k src dst topic seq ts tp cid step arr``); it is small and decoded first so a
  receiver can route, count and drop a message without touching its payload;
* ``body`` is msgpack; every numpy array inside it is replaced by an ext value (code 1) holding its
  index, and the array's bytes travel as their own frame, described by ``header["arr"]``.

Nothing here uses pickle: a body can only hold msgpack types and numpy arrays of plain dtypes.
See docs/protocol.md for the language-neutral description.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Final, Sequence

import msgpack
import numpy as np

from kernel.bus.errors import FramebusError

PROTOCOL_VERSION: Final = 1
ARRAY_EXT: Final = 1
DEFAULT_MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024

# Message kinds.
DATA: Final = "data"  # a stream message: output -> every wired input
REQ: Final = "req"  # a request for a named service
REP: Final = "rep"  # the reply to a request (same cid)
ERR: Final = "err"  # a failed request (same cid); body = {"error": str, "type": str}
CREDIT: Final = "credit"  # receiver -> sender on a `block` edge: body = {"input": str, "n": int}
RELEASE: Final = "rel"  # receiver -> sender: shared-memory slots it no longer uses; body = {"slots": [int]}
CTL: Final = "ctl"  # kernel <-> node control (hello, welcome, ready, start, stop, hb, ...)
TAP: Final = "tap"  # node -> kernel: batch of headers of messages it sent
KINDS: Final = frozenset({DATA, REQ, REP, ERR, CREDIT, RELEASE, CTL, TAP})

# Plain numeric and bool dtypes only: object arrays would need pickle.
_ALLOWED_DTYPE_KINDS: Final = frozenset("biufc")


class ProtocolError(FramebusError, ValueError):
    """A frame set that is not a valid framebus message; the receiver drops and counts it."""


class MessageTooLarge(ValueError):
    """A message over the bus's ``max_message_bytes``."""


@dataclass(slots=True)
class Message:
    """A decoded message. ``body`` holds numpy arrays as read-only views on the received frames."""

    kind: str
    src: str
    topic: str
    body: Any = None
    dst: str | None = None
    seq: int = 0
    ts: float = 0.0
    traceparent: str | None = None
    cid: int | None = None
    step: int | None = None
    nbytes: int = 0


def encode(
    kind: str,
    src: str,
    topic: str,
    body: Any = None,
    *,
    dst: str | None = None,
    seq: int = 0,
    traceparent: str | None = None,
    cid: int | None = None,
    step: int | None = None,
    max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    place: Callable[[np.ndarray], dict[str, Any] | None] | None = None,
) -> list[Any]:
    """Turn a message into frames ready for ``send_multipart(copy=False)``.

    Arrays are passed through as buffers, so a large frame is never copied by framebus itself.
    With ``place`` (kernel.bus.shm), arrays may instead go to shared memory: ``place`` returns a
    reference that replaces the array's frame in the header, or None to send the array inline.
    """
    arrays: list[np.ndarray] = []

    def default(obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind not in _ALLOWED_DTYPE_KINDS:
                raise TypeError(f"numpy dtype {obj.dtype} cannot travel on the bus (plain numeric dtypes only)")
            arrays.append(obj if obj.flags.c_contiguous else np.ascontiguousarray(obj))
            return msgpack.ExtType(ARRAY_EXT, msgpack.packb(len(arrays) - 1))
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, (tuple, set, frozenset)):
            return list(obj)
        raise TypeError(f"{type(obj).__name__} cannot travel on the bus (msgpack types and numpy arrays only)")

    packed_body = msgpack.packb(body, default=default, use_bin_type=True)
    header: dict[str, Any] = {"v": PROTOCOL_VERSION, "k": kind, "src": src, "topic": topic, "seq": seq, "ts": time.time()}
    # the optional keys one by one, in this order (no dict and generator built per message)
    if dst is not None:
        header["dst"] = dst
    if traceparent:
        header["tp"] = traceparent
    if cid is not None:
        header["cid"] = cid
    if step is not None:
        header["step"] = step
    total = len(packed_body)
    frames: list[Any] = []
    if arrays:
        specs: list[list[Any]] = []
        for a in arrays:
            ref = place(a) if place is not None else None
            if ref is None:
                specs.append([a.dtype.str, list(a.shape)])
                frames.append(a)
            else:
                specs.append([a.dtype.str, list(a.shape), ref])
        header["arr"] = specs
        total += sum(a.nbytes for a in arrays)
    packed_header = _header_packer().pack(header)
    total += len(packed_header)
    if total > max_bytes:
        raise MessageTooLarge(
            f"message {src}/{topic} is {total} bytes; the bus allows at most {max_bytes} (bus.max_message_bytes)"
        )
    return [packed_header, packed_body, *frames]


_local = threading.local()


def _header_packer() -> msgpack.Packer:
    """This thread's packer for headers: ``msgpack.packb`` builds a Packer (and its buffer) per call,
    which took half of a header's 1.7 us. Per thread, since a Packer is not safe to share."""
    try:
        return _local.packer
    except AttributeError:
        _local.packer = msgpack.Packer(use_bin_type=True)
        return _local.packer


Attach = Callable[[str, np.dtype, list[int], dict[str, Any]], np.ndarray]


def decode(frames: Sequence[Any], max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, attach: Attach | None = None) -> Message:
    """Decode frames (``zmq.Frame`` or bytes) into a :class:`Message`; raise ProtocolError if malformed.

    ``attach`` maps shared-memory array references (kernel.bus.shm); without it they are malformed.
    """
    if len(frames) < 2:
        raise ProtocolError(f"expected at least 2 frames (header, body), got {len(frames)}")
    if len(frames) == 2 and type(frames[0]) is bytes and type(frames[1]) is bytes:
        buffers: list[Any] = frames if type(frames) is list else list(frames)  # a small message, as received
        nbytes = len(buffers[0]) + len(buffers[1])
    else:
        buffers = [_buffer(f) for f in frames]
        nbytes = sum(map(len, buffers))
    if nbytes > max_bytes:
        raise ProtocolError(f"message of {nbytes} bytes is over the limit of {max_bytes}")
    # The header is decoded and checked first, so routing and drops never touch the payload.
    try:
        header = msgpack.unpackb(buffers[0])
    except Exception as exc:  # msgpack raises several unrelated types
        raise ProtocolError(f"header is not msgpack: {exc}") from None
    if not isinstance(header, dict):
        raise ProtocolError("header is not a msgpack map")
    if header.get("v") != PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {header.get('v')!r}; this node speaks {PROTOCOL_VERSION}")
    if header.get("k") not in KINDS:
        raise ProtocolError(f"unknown message kind {header.get('k')!r}")
    if type(header.get("src")) is not str or type(header.get("topic")) is not str:
        raise ProtocolError("header needs string 'src' and 'topic'")
    specs = header.get("arr")
    if specs or len(buffers) > 2:
        arrays = _arrays(specs or [], buffers, header["src"], attach)

        def ext_hook(code: int, data: bytes) -> Any:
            return _array_ref(code, data, arrays)
    else:  # no arrays (most messages): no list to build and no hook to define per message
        ext_hook = _no_arrays

    try:
        body = msgpack.unpackb(buffers[1], raw=False, ext_hook=ext_hook, strict_map_key=False)
    except ProtocolError:
        raise
    except Exception as exc:
        raise ProtocolError(f"body is not msgpack: {exc}") from None
    get = header.get
    return Message(header["k"], header["src"], header["topic"], body, get("dst"), get("seq", 0), get("ts", 0.0),
                   get("tp"), get("cid"), get("step"), nbytes)


def _array_ref(code: int, data: bytes, arrays: list[np.ndarray]) -> np.ndarray:
    """The array an ext value of the body stands for."""
    if code != ARRAY_EXT:
        raise ProtocolError(f"unknown msgpack ext code {code}")
    index = msgpack.unpackb(data)
    if not isinstance(index, int) or not 0 <= index < len(arrays):
        raise ProtocolError(f"array reference {index!r} out of range ({len(arrays)} arrays came)")
    return arrays[index]


_NONE: Final[list[np.ndarray]] = []


def _no_arrays(code: int, data: bytes) -> Any:
    """The ext hook of a message that came with no arrays: any ext value in its body is refused."""
    return _array_ref(code, data, _NONE)


def _arrays(specs: Any, buffers: list[Any], src: str, attach: Attach | None) -> list[np.ndarray]:
    if not isinstance(specs, list):
        raise ProtocolError("header 'arr' is not an array")
    inline = sum(1 for spec in specs if not (isinstance(spec, list) and len(spec) == 3))
    if inline != len(buffers) - 2:
        raise ProtocolError(f"header describes {inline} array frames but {len(buffers) - 2} came")
    arrays, next_frame = [], 2
    for spec in specs:
        try:
            dtype_str, shape, *ref = spec
            dtype = np.dtype(dtype_str)
            if dtype.kind not in _ALLOWED_DTYPE_KINDS:
                raise ValueError(f"dtype {dtype} not allowed")
            if ref:
                if attach is None:
                    raise ValueError("a shared-memory array, but this receiver has no shared memory")
                arrays.append(attach(src, dtype, list(shape), ref[0]))
            else:
                array = np.frombuffer(buffers[next_frame], dtype=dtype).reshape(shape)
                array.flags.writeable = False  # a view on a received frame: read-only, like shared ones
                arrays.append(array)
                next_frame += 1
        except Exception as exc:
            raise ProtocolError(f"bad array {spec!r}: {exc}") from None
    return arrays


def _buffer(frame: Any) -> memoryview | bytes:
    return frame.buffer if hasattr(frame, "buffer") else frame
