"""Gymnasium spaces to bus values: what an observation becomes in ``obs``, what names the actions
get, and how an action body from another process is checked before the env sees it.

Everything here turns numpy values into what msgpack carries, with ``kernel.sdk.plain``: small
arrays become lists, large ones stay numpy arrays (the bus moves arrays of 64 KiB and more through
shared memory), numpy scalars become Python numbers, and anything msgpack cannot carry its ``repr``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from kernel.sdk.gymspaces import describe
from kernel.sdk.plain import SMALL_ARRAY, plain
from kernel.sdk.spaces import TYPES

SMALL = SMALL_ARRAY
"""Arrays with at most this many elements travel as (nested) lists; larger ones as arrays."""

RESERVED = {"env", "episode", "t", "actions", "idle", "goal", "text", "frame", "frames", "template",
            "frame_labels"}
"""Keys of the environment convention (docs/environments.md) that an observation field must not take."""


def is_image(space: spaces.Space) -> bool:
    """A Box that is a picture (or a picture-like grid such as MiniGrid's view): uint8, H x W x 3 (or x 1)."""
    return (isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3
            and space.shape[2] in (1, 3) and min(space.shape[:2]) >= 2)


def fields(space: spaces.Space, value: Any) -> dict[str, Any]:
    """The observation as named fields: a Dict's keys (a reserved key gets ``obs_`` in front), or
    ``observation`` for any other space."""
    if isinstance(space, spaces.Dict):
        out: dict[str, Any] = {}
        for key, sub in space.spaces.items():
            name = f"obs_{key}" if key in RESERVED else str(key)
            out[name] = convert(sub, value[key])
        return out
    return {"observation": convert(space, value)}


def convert(space: spaces.Space, value: Any) -> Any:
    """One observation value, typed by its space."""
    if isinstance(space, spaces.Discrete):
        return int(value)
    if isinstance(space, spaces.Text):
        return str(value)
    if isinstance(space, (spaces.MultiBinary, spaces.MultiDiscrete)):
        return np.asarray(value).astype(np.int64).tolist()
    if isinstance(space, spaces.Box):
        arr = np.asarray(value, dtype=space.dtype)
        return np.ascontiguousarray(arr) if is_image(space) or arr.size > SMALL else arr.tolist()
    if isinstance(space, spaces.Dict):
        return {str(k): convert(sub, value[k]) for k, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return [convert(sub, v) for sub, v in zip(space.spaces, value, strict=True)]
    return plain(value)


def is_picture(space: spaces.Space) -> bool:
    """A Box whose values ``convert`` makes a uint8 H x W x C array: what ``gym.env`` treats as a
    picture (resized by ``image_size``, left out with ``images: false``)."""
    return (isinstance(space, spaces.Box) and space.dtype == np.uint8 and len(space.shape) == 3
            and (is_image(space) or int(np.prod(space.shape)) > SMALL))


def published(space: spaces.Space, images: bool, image_size: tuple[int, int] | None) -> dict[str, Any] | None:
    """The description of the observation ``fields`` publishes for ``space`` (``kernel.sdk.spaces``):
    a Dict's keys as renamed, pictures resized to ``image_size`` ([w, h]) or left out without
    ``images``. None where nothing typed is left, or a part has no description (then the text
    view is the observation)."""
    def one(sub: spaces.Space) -> dict[str, Any] | None:
        desc = describe(sub)
        if not _described(desc):
            raise LookupError(desc["type"])
        if is_picture(sub):
            if not images:
                return None
            if image_size is not None:
                w, h = image_size
                desc = {**desc, "shape": [int(h), int(w), int(sub.shape[2])]}
        return desc

    try:
        if isinstance(space, spaces.Dict):
            parts = {(f"obs_{k}" if k in RESERVED else str(k)): one(sub) for k, sub in space.spaces.items()}
            kept = {k: d for k, d in parts.items() if d is not None}
            return {"type": "Dict", "spaces": kept} if kept else None
        return one(space)
    except LookupError:
        return None


def _described(desc: dict[str, Any]) -> bool:
    """Whether every part of a description is of a known type (a Dict or Tuple may hold others)."""
    parts = desc.get("spaces")
    values = parts.values() if isinstance(parts, dict) else parts if isinstance(parts, list) else []
    return desc["type"] in TYPES and all(_described(p) for p in values)


def text(obs_fields: dict[str, Any], limit: int = 600) -> str:
    """A one-line-per-field rendering for text-only agents; pictures are named by their shape."""
    lines = []
    for key, value in obs_fields.items():
        if isinstance(value, np.ndarray):
            shown = f"array {'x'.join(map(str, value.shape))} {value.dtype}"
        elif isinstance(value, list):
            shown = ", ".join(_num(v) for v in value) if all(isinstance(v, (int, float)) for v in value) else repr(value)
        elif isinstance(value, float):
            shown = _num(value)
        else:
            shown = str(value)
        lines.append(f"{key}: {shown[:limit]}")
    return "\n".join(lines)


def _num(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def action_names(env: Any, space: spaces.Space, labels: list[str] | None) -> list[str] | None:
    """The names of a discrete action space's actions, where the env gives them: ``labels`` first,
    then ALE's ``get_action_meanings()``, MiniGrid's ``actions`` enum, highway-env's meta-action
    table, an env's own ``action_names``; digits otherwise. None for a non-discrete space."""
    if not isinstance(space, spaces.Discrete):
        return None
    n = int(space.n)
    if labels is not None:
        return list(labels)
    base = env.unwrapped
    found: list[str] | None = None
    if callable(getattr(base, "get_action_meanings", None)):
        found = [str(a) for a in base.get_action_meanings()]
    elif isinstance(getattr(base, "actions", None), type):  # an Enum class (MiniGrid)
        members = sorted(base.actions, key=int)
        found = [m.name for m in members]
    elif isinstance(getattr(getattr(base, "action_type", None), "actions_indexes", None), dict):
        table = base.action_type.actions_indexes
        found = [name for name, _ in sorted(table.items(), key=lambda kv: kv[1])]
    elif isinstance(getattr(base, "action_names", None), (list, tuple)):
        found = [str(a) for a in base.action_names]
    if found is None or len(found) != n or len(set(found)) != n:
        found = [str(i + int(space.start)) for i in range(n)]
    return found


def parse_action(space: spaces.Space, body: Any) -> Any:
    """A non-discrete action body (a list of numbers, nested for Tuple) as the space's own value;
    a ValueError when it is not one."""
    if isinstance(space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        if not isinstance(body, (list, int, float)) or isinstance(body, bool):
            raise ValueError("expected a list of numbers")
        arr = np.asarray(body, dtype=space.dtype).reshape(space.shape)
    elif isinstance(space, spaces.Tuple):
        if not isinstance(body, list) or len(body) != len(space.spaces):
            raise ValueError(f"expected a list of {len(space.spaces)} parts")
        arr = tuple(parse_action(s, b) for s, b in zip(space.spaces, body, strict=True))
    elif isinstance(space, spaces.Dict):
        if not isinstance(body, dict) or set(body) != set(space.spaces):
            raise ValueError(f"expected a mapping with keys {sorted(space.spaces)}")
        arr = {k: parse_action(s, body[k]) for k, s in space.spaces.items()}
    elif isinstance(space, spaces.Discrete):
        if not isinstance(body, int) or isinstance(body, bool):
            raise ValueError("expected an integer")
        arr = np.int64(body)
    else:
        raise ValueError(f"{type(space).__name__} action spaces are not supported")
    if not space.contains(arr):
        raise ValueError(f"{body!r} is outside the action space {space}")
    return arr
