"""The checks whose models the caller supplies: each node's ``params:`` against its class's ``Params``
model, and each ``resources:`` against the chosen backend's model.

The node classes come from a loader the caller passes (``kernel.sdk.registry.load_node_class``), and a
backend's resource model from the backend (``kernel.tools.ray_backend``): the launch-file package itself
stays free of node imports and of what any one backend accepts.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from kernel.launchfile.errors import closest
from kernel.launchfile.schema import LaunchFile
from kernel.launchfile.translate import translate
from kernel.launchfile.tree import Y, child_path, err
from kernel.sdk.installed import install_hint

NodeClassLoader = Callable[[str], Any]
"""``uses`` value -> the node class (anything with ``Params`` and ``parse_params``)."""


def check_params(lf: LaunchFile, nodes_y: list[Y], load_class: NodeClassLoader) -> dict[str, Any]:
    """Every node's parsed params by node id; the first problem is a LaunchError at its position.
    The wires are checked too, against the ports the classes declare (``check_ports``)."""
    parsed: dict[str, Any] = {}
    ports: dict[str, tuple[Sequence[str], Sequence[str]]] = {}
    for spec, y in zip(lf.nodes, nodes_y, strict=True):
        if spec.uses is None:
            continue
        try:
            cls = load_class(spec.uses)
        except SystemExit as exc:  # a module that exits when imported would end the check silently
            raise err(y.value["uses"], f"node '{spec.id}': cannot load {spec.uses}: importing it called "
                                       f"sys.exit({exc.code!r})") from None
        except Exception as exc:  # any import-time failure of user code, shown as its last line
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            raise err(y.value["uses"], f"node '{spec.id}': cannot load {spec.uses}: {last}") from None
        try:
            parsed[spec.id] = cls.parse_params(spec.params)
        except ModuleNotFoundError as exc:  # a validator that needs the pack's own dependency
            hint = install_hint(exc.name) if exc.name else None
            raise err(y.value["uses"], f"node '{spec.id}': {spec.uses} cannot check its params: {exc}"
                                       + (f" ({hint})" if hint else "")) from None
        except ValidationError as exc:
            params_y = y.get("params") or Y({}, y.mark, child_path(y.path, "params"), y.mark)
            raise translate(exc, params_y, cls.Params, key_prefix=f"nodes.{spec.id}.params",
                            file=lf.source) from None
        fixed = getattr(cls, "fixed_ports", None)
        if fixed is not None and (declared := fixed()) is not None:
            ports[spec.id] = declared
    check_ports(lf, nodes_y, ports)
    return parsed


def check_ports(lf: LaunchFile, nodes_y: list[Y], ports: Mapping[str, tuple[Sequence[str], Sequence[str]]]) -> None:
    """Every wire names an input its reader declares and an output its source declares, for the nodes
    in ``ports`` (node id -> inputs, outputs): a typo is refused here, at its line, rather than by
    the kernel when the node starts."""
    for spec, y in zip(lf.nodes, nodes_y, strict=True):
        for port, inp in spec.inputs.items():
            port_y = y.value["inputs"].value[port]
            if spec.id in ports and port not in (declared_in := list(ports[spec.id][0])):
                raise err(port_y, f"node '{spec.id}' ({spec.uses}) has no input '{port}'",
                          key=True, allowed=declared_in or ["none"], suggestion=closest(port, declared_in))
            for src, src_y in zip(inp.sources, port_y.value["sources"].value, strict=True):
                node, _, output = src.partition("/")
                if node in ports and output not in (declared_out := list(ports[node][1])):
                    source_spec = next(n for n in lf.nodes if n.id == node)
                    raise err(src_y, f"source {src!r}: node '{node}' ({source_spec.uses}) has no output "
                                     f"'{output}'", allowed=declared_out or ["none"],
                              suggestion=closest(output, declared_out))


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
