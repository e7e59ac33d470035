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
from kernel.launchfile.tree import Y, child_path, describe_value, err

# pydantic's error types for a value of the wrong type (``int_parsing``, ``model_attributes_type``)
_TYPE_WORDS = {"int": "an integer", "float": "a number", "string": "a string", "str": "a string",
               "bool": "true or false", "dict": "a mapping", "model": "a mapping", "list": "a list"}
_WRONG_TYPE = ("type", "parsing", "from_float", "attributes_type")


def _unwrap(tp: Any) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return tp


def _fields_along(root: type[BaseModel], loc: Sequence[Any]) -> tuple[tuple[Any, ...], list[Any]]:
    """``loc`` without the member tags pydantic puts in it for a union field (``tier.literal['v0',...]``
    for ``tier: Tier | list[Tier]``: pydantic's names for the member tried, not keys), and what each
    prefix of it points at: the annotation, with the pydantic field when it ends on one."""
    out: list[Any] = []
    tp: Any = root
    at: list[Any] = [(root, None)]
    for part in loc:
        members = [a for a in get_args(tp) if a is not type(None)] if get_origin(tp) in (Union, types.UnionType) else []
        if len(members) > 1 and isinstance(part, str):
            tag = part.split("[", 1)[0].lower()
            picked = [m for m in members if (get_origin(m) or m).__name__.lower() == tag]  # Literal's is 'Literal'
            tp = picked[0] if picked else tp
            continue
        out.append(part)
        tp = _unwrap(tp)
        info: FieldInfo | None = None
        if isinstance(tp, type) and issubclass(tp, BaseModel) and isinstance(part, str) and part in tp.model_fields:
            info = tp.model_fields[part]
            tp = info.annotation
        elif get_origin(tp) is list and isinstance(part, int):
            tp = get_args(tp)[0]
        elif get_origin(tp) is dict:
            tp = get_args(tp)[1]
        else:
            tp = None
        at.append((_unwrap(tp), info))
    return tuple(out), at


def _values_along(tree: Y, loc: Sequence[Any]) -> list[Y]:
    """The values ``loc`` passes through in the tree, as far as the tree has them."""
    chain = [tree]
    for part in loc:
        y = chain[-1]
        if y.is_map and not isinstance(part, bool) and part in y.value:
            chain.append(y.value[part])
        elif y.is_list and isinstance(part, int) and 0 <= part < len(y.value):
            chain.append(y.value[part])
        else:
            break
    return chain


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
    errors.sort(key=lambda e: (e["type"] != "extra_forbidden", -len(_fields_along(root, e["loc"])[0])))
    e = errors[0]
    loc, fields = _fields_along(root, e["loc"])
    kind: str = e["type"]
    values = _values_along(tree, loc)
    y = values[-1]
    if key_prefix is not None:
        path = key_prefix
        for part in loc:
            path = child_path(path, part)
    else:
        path = y.path
        for part in loc[len(values) - 1:]:  # the keys the tree does not have
            if isinstance(part, int) or part.isidentifier():
                path = child_path(path, "from" if part == "sources" else part)  # the file spells it 'from'
    value = e.get("input")
    # A value put there by ``--set KEY`` has no file position: the message names the --set instead.
    origin = next((v.path for v in values if v.path.startswith("--set ")), None)

    def error(message: str, *, key: bool = False, at: str = path, allowed: list[str] | None = None,
              suggestion: str | None = None) -> LaunchError:
        if origin is not None:
            message += f" (from {origin})"
        out = err(y, message, key=key, path=at, allowed=allowed, suggestion=suggestion)
        if out.file is None and file is not None:
            out.file = file
        return out

    if kind == "extra_forbidden":
        model = fields[-2][0]
        # 'source' and 'replica' are filled in by the loader, never written
        allowed = [f for f in model.model_fields if f not in ("source", "replica")] \
            if isinstance(model, type) and issubclass(model, BaseModel) else None
        return error(f"unknown key '{loc[-1]}'", key=True, allowed=allowed,
                     suggestion=closest(loc[-1], allowed or []))
    if kind in ("literal_error", "enum"):
        allowed = _choices(fields[-1][0])
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
    what, _, how = kind.partition("_")
    if what in _TYPE_WORDS and how in _WRONG_TYPE:
        return error(f"expected {_TYPE_WORDS[what]}, got {describe_value(value)}")
    message = e["msg"].removeprefix("Value error, ")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        message = message.replace("Input should be", "must be") + f", got {describe_value(value)}"
        range_ = bounds(fields[-1][1])
        return error(message, allowed=[range_] if range_ else None)
    return error(message)
