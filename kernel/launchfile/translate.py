"""pydantic's validation errors, translated back to the YAML positions and the words of the file."""

from __future__ import annotations

import enum
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from kernel.launchfile.errors import LaunchError, closest
from kernel.launchfile.tree import ID_PATTERN, Y, child_path, describe_value, err

_TYPE_WORDS = {
    "int": "an integer", "float": "a number", "string": "a string", "str": "a string",
    "bool": "true or false", "dict": "a mapping", "model": "a mapping",
    "model_attributes": "a mapping", "list": "a list",
}



def _unwrap(tp: Any) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return tp


def _field_at(root: type[BaseModel], loc: Sequence[Any]) -> tuple[Any, FieldInfo | None]:
    """The annotation (and the pydantic field, when ``loc`` ends on one) that ``loc`` points at."""
    tp: Any = root
    info: FieldInfo | None = None
    for part in loc:
        tp = _unwrap(tp)
        info = None
        if get_origin(tp) in (Union, types.UnionType):  # e.g. Tier | list[Tier]: the member ``part`` indexes
            wanted = list if isinstance(part, int) else dict
            tp = next((m for m in get_args(tp) if get_origin(m) is wanted), tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if not isinstance(part, str) or part not in tp.model_fields:
                return None, None
            info = tp.model_fields[part]
            tp = info.annotation
        elif get_origin(tp) is list and isinstance(part, int):
            tp = get_args(tp)[0]
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        else:
            return None, None
    return _unwrap(tp), info


def _without_union_tags(root: type[BaseModel], loc: Sequence[Any]) -> tuple[Any, ...]:
    """``loc`` without the member tags pydantic puts in it for a union field (``tier.literal['v0',...]``
    for ``tier: Tier | list[Tier]``): they are pydantic's names for the member tried, not keys."""
    out: list[Any] = []
    tp: Any = root
    for part in loc:
        members = [a for a in get_args(tp) if a is not type(None)] if get_origin(tp) in (Union, types.UnionType) else []
        if len(members) > 1 and isinstance(part, str):
            tag = part.split("[", 1)[0].lower()
            picked = [m for m in members if (get_origin(m) or m).__name__.lower() == tag] if tag != "literal" \
                else [m for m in members if get_origin(m) is Literal]
            tp = picked[0] if picked else tp
            continue
        out.append(part)
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str) and part in tp.model_fields:
            tp = tp.model_fields[part].annotation
        elif get_origin(tp) is list and isinstance(part, int):
            tp = get_args(tp)[0]
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        else:
            tp = None
    return tuple(out)


def _locate(tree: Y, loc: Sequence[Any]) -> tuple[Y, list[Any]]:
    y = tree
    for n, part in enumerate(loc):
        if y.is_map and not isinstance(part, bool) and part in y.value:
            y = y.value[part]
        elif y.is_list and isinstance(part, int) and 0 <= part < len(y.value):
            y = y.value[part]
        else:
            return y, list(loc[n:])
    return y, []


def _set_origin(tree: Y, loc: Sequence[Any]) -> str | None:
    """The ``--set KEY`` that put the value at ``loc`` there, if one did (its tree has no file position)."""
    y = tree
    for part in (None, *loc):
        if part is not None:
            if y.is_map and not isinstance(part, bool) and part in y.value:
                y = y.value[part]
            elif y.is_list and isinstance(part, int) and 0 <= part < len(y.value):
                y = y.value[part]
            else:
                return None
        if y.path.startswith("--set "):
            return y.path
    return None


def _choices(tp: Any) -> list[str] | None:
    """The values a Literal or Enum field accepts, as they would be written in YAML (for a union,
    those of its Literal members)."""
    if get_origin(tp) in (Union, types.UnionType):
        found = [c for member in get_args(tp) for c in _choices(member) or []]
        return found or None
    if get_origin(tp) is Literal:
        return [str(a) for a in get_args(tp)]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return [str(m.value) for m in tp]
    return None


def bounds(info: FieldInfo | None) -> str | None:
    """A numeric field's range in one phrase (e.g. ``>= 1 and <= 5``); None when it has none."""
    words = []
    for item in info.metadata if info is not None else []:
        for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
            if getattr(item, attr, None) is not None:
                words.append(f"{sign} {getattr(item, attr)}")
    return " and ".join(words) or None


def translate(exc: ValidationError, tree: Y, root: type[BaseModel], *, key_prefix: str | None = None,
              file: Path | None = None) -> LaunchError:
    """The first of pydantic's errors as a LaunchError at the YAML position of the value.

    ``tree`` is the YAML the model validated; ``key_prefix`` (e.g. ``nodes.env.params``) names keys
    by it instead of by their position in the file, and ``file`` is where a value that was not
    written in a file (``--set``) was applied."""
    errors = exc.errors(include_url=False)
    # An unknown key is usually the cause of the other errors (a typo'd
    # 'usse' also makes 'uses' missing), so report it first.
    # Of a union's members, the one that got furthest into the value says best what is wrong
    # (``tier: [v0, v7]``: item 1 is no tier, rather than "a list is no tier").
    errors.sort(key=lambda e: (e["type"] != "extra_forbidden", -len(_without_union_tags(root, e["loc"]))))
    e = errors[0]
    loc = _without_union_tags(root, e["loc"])
    kind: str = e["type"]
    y, rest = _locate(tree, loc)
    if key_prefix is not None:
        path = key_prefix
        for part in loc:
            path = child_path(path, part)
    else:
        path = y.path
        for part in rest:
            part = "from" if part == "sources" else part  # the file spells it 'from'
            if isinstance(part, int) and not isinstance(part, bool):
                path += f"[{part}]"
            elif isinstance(part, str) and part.isidentifier():
                path = child_path(path, part)
    value = e.get("input")

    def error(message: str, *, key: bool = False, at: str = path, allowed: list[str] | None = None,
              suggestion: str | None = None) -> LaunchError:
        origin = _set_origin(tree, loc)
        if origin is not None:
            message += f" (from {origin})"
        out = err(y, message, key=key, path=at, allowed=allowed, suggestion=suggestion)
        if out.file is None and file is not None:
            out.file = file
        return out

    if kind == "extra_forbidden":
        model, _ = _field_at(root, loc[:-1])
        # 'source' and 'replica' are filled in by the loader, never written
        allowed = [f for f in model.model_fields if f not in ("source", "replica")] \
            if isinstance(model, type) and issubclass(model, BaseModel) else None
        return error(f"unknown key '{loc[-1]}'", key=True, allowed=allowed,
                     suggestion=closest(loc[-1], allowed or []))
    if kind in ("literal_error", "enum"):
        allowed = _choices(_field_at(root, loc)[0])
        return error(f"unknown value {describe_value(value)}", allowed=allowed,
                     suggestion=closest(value, allowed or []))
    if kind == "missing":
        missing = "from" if loc[-1] == "sources" else loc[-1]
        # Point at the mapping that lacks the key; the key itself has no position.
        return error(f"missing required key '{missing}'", at=path if key_prefix else y.path)
    if kind == "too_short":
        least = (e.get("ctx") or {}).get("min_length", 1)
        what = "node" if loc == ("nodes",) else "item"
        return error(f"needs at least {least} {what}{'s' if least != 1 else ''}")
    if kind == "string_pattern_mismatch" and key_prefix is None:
        return error(f"invalid id {describe_value(value)}; ids match {ID_PATTERN}")
    for prefix, words in _TYPE_WORDS.items():
        if kind.startswith(prefix + "_") and kind.endswith(("_type", "_parsing", "_from_float",
                                                            "_attributes_type")):
            return error(f"expected {words}, got {describe_value(value)}")
    message = e["msg"].removeprefix("Value error, ")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        message = message.replace("Input should be", "must be") + f", got {describe_value(value)}"
        range_ = bounds(_field_at(root, loc)[1])
        return error(message, allowed=[range_] if range_ else None)
    return error(message)
