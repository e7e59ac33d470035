"""``launch describe NODE``: what a node type reads, writes, serves and accepts as params, taken from
its class and its ``Params`` model, so that the launch file can be written without opening the code."""

from __future__ import annotations

import inspect
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from kernel.launchfile import LaunchError
from kernel.launchfile.translate import bounds
from kernel.sdk.node import Node
from kernel.sdk.registry import UnknownNodeType, load_node_class, resolve_uses


def describe(name: str) -> str:
    """The text ``launch describe`` prints for a registered node type or a ``module:Class`` path."""
    uses = _resolve(name)
    try:
        cls = load_node_class(uses)
    except (ImportError, AttributeError, TypeError) as exc:
        raise LaunchError(f"cannot load {uses}: {type(exc).__name__}: {exc}", key=name) from None
    lines = [f"{name}  ({uses})" if uses != name else name]
    doc = inspect.getdoc(cls)
    if doc and doc != inspect.getdoc(Node):
        lines += ["", *doc.split("\n\n")[0].splitlines()]
    lines += ["", "inputs:   " + _names(cls.inputs), "outputs:  " + _names(cls.outputs)]
    if cls.ports is not Node.ports:
        lines.append("          (the ports also depend on the params; see below)")
    lines.append("services: " + _names(_services(cls)))
    lines += ["", *_params(cls.Params)]
    return "\n".join(lines)


def _resolve(name: str) -> str:
    try:
        return resolve_uses(name)
    except UnknownNodeType as exc:  # the CLI's error shape: allowed names and a did-you-mean on their own lines
        raise LaunchError(f"unknown node type '{name}' (not registered under the 'framebus.nodes' entry points; "
                          "a class is given as module:Class)", allowed=exc.allowed, suggestion=exc.suggestion) from None


def _names(items: Any) -> str:
    return ", ".join(items) if items else "-"


def _services(cls: type[Node]) -> list[str]:
    found = []
    for klass in cls.__mro__:
        for attr in vars(klass).values():
            svc = getattr(attr, "__framebus_service__", None)
            if svc is not None and svc not in found:
                found.append(svc)
    return found


def _params(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return ["params: not declared (the node reads its params: mapping unchecked)"]
    fields = {k: f for k, f in model.model_fields.items() if k != "replica"}
    if not fields:
        return ["params: none"]
    rows = []
    for key, info in fields.items():
        default = "required" if info.is_required() else f"default {_default(info)}"
        range_ = bounds(info)
        rows.append((key, _type(info.annotation) + (f" ({range_})" if range_ else ""), default,
                     info.description or ""))
    width_key = max(len(r[0]) for r in rows)
    width_type = max(len(r[1]) for r in rows)
    out = ["params:"]
    for key, tp, default, description in rows:
        out.append(f"  {key:<{width_key}}  {tp:<{width_type}}  {default}")
        if description:
            out.append(f"  {'':<{width_key}}  {description}")
    return out


def _default(info: Any) -> str:
    value = info.default
    if value is PydanticUndefined and info.default_factory is not None:
        value = info.default_factory()
    return repr(value)


def _type(tp: Any) -> str:
    origin = get_origin(tp)
    if origin is Annotated:  # constraints: shown beside the field, or checked on load
        return _type(get_args(tp)[0])
    if origin is Literal:
        return "one of " + " | ".join(repr(a) for a in get_args(tp))
    if origin in (Union, types.UnionType):
        return " | ".join(_type(a) for a in get_args(tp))
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type(a) for a in get_args(tp))}]"
    if tp is type(None):
        return "null"
    return getattr(tp, "__name__", str(tp))
