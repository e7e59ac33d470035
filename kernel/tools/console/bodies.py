"""A bus body made fit for a console page: small, and safe for msgpack.

Both what the hub relays live and what a replay reads back from the run folder go to a page through
this one function, so a page sees an array, a byte string or a long prompt the same way in both.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["plain"]


def plain(value: Any, depth: int = 0, max_str: int = 4000) -> Any:
    """A body made small and msgpack-safe for a page: arrays become a note of their shape."""
    if isinstance(value, np.ndarray):
        return f"<array {'x'.join(map(str, value.shape))} {value.dtype}>"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>"
    if isinstance(value, str):
        return value if len(value) <= max_str else value[:max_str] + f"… ({len(value)} chars)"
    if depth > 6:
        return "…"
    if isinstance(value, dict):
        return {str(k): plain(v, depth + 1, max_str) for k, v in list(value.items())[:200]}
    if isinstance(value, (list, tuple)):
        return [plain(v, depth + 1, max_str) for v in list(value)[:200]]
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return str(value)
