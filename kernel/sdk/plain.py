"""Plain data from what a world hands back: an ``info`` dict, an observation part, a metadata value.

Gymnasium, PettingZoo and BrowserGym envs put numpy scalars and arrays, tuples, and now and then an
object in their infos; msgpack takes none of those. Env nodes turn them into plain data here, one
way for every pack: numpy scalars become Python numbers, small arrays lists, maps get text keys,
and anything else its ``repr`` cut short, so an odd value in an info never stops a step.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

__all__ = ["SMALL_ARRAY", "plain"]

SMALL_ARRAY = 256
"""Arrays with at most this many items become lists; bigger ones are kept or noted (``big``)."""

MAX_DEPTH = 8
REPR_CHARS = 200


def plain(value: Any, *, big: Literal["keep", "note"] = "keep", small: int = SMALL_ARRAY, _depth: int = 0) -> Any:
    """A msgpack-friendly copy of ``value``. A numpy array of more than ``small`` items stays an
    array (``big="keep"``: the bus ships it as raw bytes, a picture for instance) or becomes the note
    ``array(shape)`` (``big="note"``: a step record that should not carry it)."""
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return [plain(v, big=big, small=small, _depth=_depth + 1) for v in value.tolist()]
        if value.size <= small:
            return value.tolist()
        return np.ascontiguousarray(value) if big == "keep" else f"array{value.shape}"
    if _depth > MAX_DEPTH:
        return repr(value)[:REPR_CHARS]
    if isinstance(value, dict):
        return {str(k): plain(v, big=big, small=small, _depth=_depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, big=big, small=small, _depth=_depth + 1) for v in value]
    return repr(value)[:REPR_CHARS]
