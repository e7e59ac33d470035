"""Cross-checks a schema cannot express: every source, ``wait_for`` and ``uses`` names something that exists."""

from __future__ import annotations

from kernel.launchfile.entries import parse_source
from kernel.launchfile.errors import closest
from kernel.launchfile.registry import CLASS_REF_RE, module_exists
from kernel.launchfile.schema import LaunchFile
from kernel.launchfile.tree import Y, err
from kernel.sdk.registry import ENTRY_POINT_GROUP, registered_nodes


def check_references(lf: LaunchFile, nodes_y: list[Y]) -> None:
    ids = [n.id for n in lf.nodes]
    registry: dict[str, str] | None = None
    for spec, y in zip(lf.nodes, nodes_y, strict=True):
        if spec.uses is None and spec.cmd is None:
            raise err(y, f"node '{spec.id}' needs either 'uses' (a node type) or 'cmd' "
                          "(a program to run)", path=y.path)
        if spec.uses is not None and spec.cmd is not None:
            raise err(y.value["cmd"], f"node '{spec.id}' has both 'uses' and 'cmd'; "
                                       "keep exactly one", key=True)
        if spec.cmd is not None and not spec.cmd:
            raise err(y.value["cmd"], "'cmd' is empty")
        if spec.uses is not None:
            uses_y = y.value["uses"]
            if ":" in spec.uses:
                if not CLASS_REF_RE.match(spec.uses):
                    raise err(uses_y, f"{spec.uses!r} is not of the form 'package.module:Class'")
                module = spec.uses.partition(":")[0]
                if not module_exists(module):
                    raise err(uses_y, f"module '{module}' cannot be found "
                                       "(is it installed, and on the Python path?)")
            else:
                if registry is None:
                    registry = registered_nodes()
                if spec.uses not in registry:
                    names = sorted(registry)
                    raise err(uses_y, f"unknown node type '{spec.uses}' (not registered under "
                                       f"the '{ENTRY_POINT_GROUP}' entry points)",
                               allowed=names, suggestion=closest(spec.uses, names))
        for port, inp in spec.inputs.items():
            sources_y = y.value["inputs"].value[port].value["sources"].value
            for src, src_y in zip(inp.sources, sources_y, strict=True):
                node, _ = parse_source(src_y)
                if node not in ids:
                    raise err(src_y, f"source {src!r} names unknown node '{node}'",
                               allowed=ids, suggestion=closest(node, ids))
        if spec.placement is not None and spec.placement.spread and spec.group is None:
            spread_y = y.value["placement"].value["spread"]
            raise err(spread_y, f"node '{spec.id}' is in no replica group, so 'spread' has no copies to spread "
                                "(put it in a group with 'replicas:', or use 'host'/'labels' to place this one node)")
        if spec.clock is not None and spec.clock.wait_for is not None:
            wait_y = y.value["clock"].value["wait_for"].value
            for name, name_y in zip(spec.clock.wait_for, wait_y, strict=True):
                if name not in ids:
                    raise err(name_y, f"wait_for names unknown node '{name}'", allowed=ids,
                               suggestion=closest(name, ids))

