"""Gymnasium spaces to and from the plain descriptions of ``kernel.sdk.spaces``, and bus values to
and from values of those spaces.

An env node that wraps a Gymnasium env describes its spaces with ``describe``; the bridge that plays
a graph as a Gymnasium env (``kernel.gym``) rebuilds them with ``build``, turns what arrives in an
``obs`` body into a value of the space with ``conform`` (lists back to typed arrays), and an action
of the space into what msgpack carries with ``to_bus``. Kept apart from ``kernel.sdk.spaces`` so
that declaring needs no gymnasium.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

from kernel.sdk.spaces import check_space

__all__ = ["CHARSET", "SMALL_BOUNDS", "build", "conform", "describe", "to_bus"]

CHARSET = "".join(sorted(frozenset(string.printable) | frozenset(chr(c) for c in range(0xA0, 0x3000))))
"""The characters a Text space without its own charset holds (printable ASCII and most scripts);
others in a text are replaced by ``?``."""

SMALL_BOUNDS = 16
"""A Box with at most this many elements is described with its bounds element by element; a larger
one with their minimum and maximum (a picture's 0 and 255), so its rebuilt bounds may be wider."""

MAX_CHARSET = 4096
"""A Text space's charset is described when it has at most this many characters; otherwise (and
when absent) a rebuilt Text takes ``CHARSET``."""


def describe(space: spaces.Space) -> dict[str, Any]:
    """A space in words and numbers (``describe`` services, declarations, agents that want shapes).
    A space of strings that is no Text (MiniGrid's mission space) is described as a Text."""
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.Box):
        low, high = space.low, space.high
        small = low.size <= SMALL_BOUNDS
        return {"type": "Box", "shape": list(space.shape), "dtype": str(space.dtype),
                "low": low.tolist() if small else float(low.min()),
                "high": high.tolist() if small else float(high.max())}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.tolist(), "start": space.start.tolist()}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, spaces.Text):
        out: dict[str, Any] = {"type": "Text", "max_length": int(space.max_length), "min_length": int(space.min_length)}
        if len(space.character_set) <= MAX_CHARSET:
            out["charset"] = "".join(sorted(space.character_set))
        return out
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {str(k): describe(s) for k, s in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [describe(s) for s in space.spaces]}
    dtype = getattr(space, "dtype", None)
    if dtype is not None and np.dtype(dtype).kind == "U":
        return {"type": "Text", "max_length": 4096, "min_length": 0}
    return {"type": type(space).__name__}


def build(desc: Any, where: str = "space") -> spaces.Space:
    """The gymnasium space a description names; a ValueError naming ``where`` and what is wrong."""
    check_space(desc, where)
    kind = desc["type"]
    try:
        if kind == "Discrete":
            return spaces.Discrete(int(desc["n"]), start=int(desc.get("start", 0)))
        if kind == "Box":
            dtype = np.dtype(desc["dtype"])
            shape = tuple(int(n) for n in desc["shape"])
            low, high = (np.asarray(desc[k], dtype=np.float64) for k in ("low", "high"))
            if np.issubdtype(dtype, np.integer):  # an integer Box's bounds are integers (inf does not fit)
                info = np.iinfo(dtype)
                low, high = (np.clip(np.nan_to_num(b, posinf=info.max, neginf=info.min), info.min, info.max)
                             for b in (low, high))
            low, high = (np.broadcast_to(b, shape).astype(dtype) for b in (low, high))
            return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
        if kind == "MultiDiscrete":
            return spaces.MultiDiscrete(desc["nvec"], start=desc.get("start"))
        if kind == "MultiBinary":
            return spaces.MultiBinary(desc["n"])
        if kind == "Text":
            return spaces.Text(max_length=int(desc["max_length"]), min_length=int(desc.get("min_length", 0)),
                               charset=desc.get("charset") or CHARSET)
        if kind == "Dict":
            return spaces.Dict({k: build(s, f"{where}.spaces[{k!r}]") for k, s in desc["spaces"].items()})
        return spaces.Tuple([build(s, f"{where}.spaces[{i}]") for i, s in enumerate(desc["spaces"])])
    except (TypeError, ValueError, AssertionError) as exc:
        if str(exc).startswith(where):
            raise
        raise ValueError(f"{where}: {desc!r:.200} is not a valid {kind} space: {exc}") from None


def conform(space: spaces.Space, value: Any, where: str = "observation") -> Any:
    """A bus value (lists, numbers, arrays, strings) as a value of ``space``: typed arrays of its
    dtype and shape, a tuple for a Tuple, a text cut to the space and its characters kept to the
    charset. A ValueError naming ``where`` when the value cannot be one."""
    try:
        if isinstance(space, spaces.Box):
            return np.asarray(value, dtype=space.dtype).reshape(space.shape)
        if isinstance(space, spaces.Discrete):
            return np.int64(value)
        if isinstance(space, (spaces.MultiDiscrete, spaces.MultiBinary)):
            return np.asarray(value, dtype=space.dtype).reshape(space.shape)
        if isinstance(space, spaces.Text):
            text = "".join(c if c in space.character_set else "?" for c in str(value if value is not None else ""))
            return text[:space.max_length].ljust(space.min_length, " " if " " in space.character_set else "?")
        if isinstance(space, spaces.Dict):
            if not isinstance(value, dict) or not set(space.spaces) <= set(value):
                raise ValueError(f"expected a mapping with the keys {sorted(space.spaces)}")
            return {k: conform(s, value[k], f"{where}[{k!r}]") for k, s in space.spaces.items()}
        if isinstance(space, spaces.Tuple):
            if not isinstance(value, (list, tuple)) or len(value) != len(space.spaces):
                raise ValueError(f"expected {len(space.spaces)} parts")
            return tuple(conform(s, v, f"{where}[{i}]") for i, (s, v) in enumerate(zip(space.spaces, value)))
    except (TypeError, ValueError) as exc:
        if str(exc).startswith(where):
            raise
        raise ValueError(f"{where}: {value!r:.120} does not fit {space}: {exc}") from None
    raise ValueError(f"{where}: {type(space).__name__} spaces are not supported")


def to_bus(value: Any) -> Any:
    """An action of a space as msgpack carries it: arrays as (nested) lists, numpy scalars as numbers."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): to_bus(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_bus(v) for v in value]
    return value
