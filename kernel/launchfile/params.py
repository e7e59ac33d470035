"""The checks whose models the caller supplies: each node's ``params:`` against its class's ``Params``
model, and each ``resources:`` against the chosen backend's model.

The node classes come from a loader the caller passes (``kernel.sdk.registry.load_node_class``), and a
backend's resource model from the backend (``kernel.tools.ray_backend``): the launch-file package itself
stays free of node imports and of what any one backend accepts.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ValidationError

from kernel.launchfile.schema import LaunchFile
from kernel.launchfile.translate import translate
from kernel.launchfile.tree import Y, child_path, err

NodeClassLoader = Callable[[str], Any]
"""``uses`` value -> the node class (anything with ``Params`` and ``parse_params``)."""


def check_params(lf: LaunchFile, nodes_y: list[Y], load_class: NodeClassLoader) -> dict[str, Any]:
    """Every node's parsed params by node id; the first problem is a LaunchError at its position."""
    parsed: dict[str, Any] = {}
    for spec, y in zip(lf.nodes, nodes_y, strict=True):
        if spec.uses is None:
            continue
        try:
            cls = load_class(spec.uses)
        except Exception as exc:  # any import-time failure of user code, shown as its last line
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            raise err(y.value["uses"], f"node '{spec.id}': cannot load {spec.uses}: {last}") from None
        try:
            parsed[spec.id] = cls.parse_params(spec.params)
        except ValidationError as exc:
            params_y = y.get("params") or Y({}, y.mark, child_path(y.path, "params"), y.mark)
            raise translate(exc, params_y, cls.Params, key_prefix=f"nodes.{spec.id}.params",
                            file=lf.source) from None
    return parsed


def check_resources(lf: LaunchFile, nodes_y: list[Y], model: type[BaseModel]) -> None:
    """Every node's ``resources:`` checked against ``model``, and replaced by the values it parsed
    (so the resolved file shows ``4GiB`` as the bytes the backend asks for)."""
    for spec, y in zip(lf.nodes, nodes_y, strict=True):
        if spec.resources is None:
            continue
        try:
            parsed = model.model_validate(spec.resources)
        except ValidationError as exc:
            raise translate(exc, y.value["resources"], model) from None
        spec.resources = parsed.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
