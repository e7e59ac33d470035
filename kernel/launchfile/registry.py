"""Node types by name: the ``framebus.nodes`` entry points, read without importing any node."""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import importlib.util
import re
import sys

from kernel.launchfile.errors import LaunchError, closest

ENTRY_POINT_GROUP = "framebus.nodes"
CLASS_REF_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def registered_nodes() -> dict[str, str]:
    """Registered node names -> "module:Class", read without importing anything."""
    eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep.value for ep in eps}


def resolve_uses(uses: str) -> str:
    """Turn a ``uses`` value into "module:Class", whichever way it was written."""
    if ":" in uses:
        return uses
    registry = registered_nodes()
    if uses in registry:
        return registry[uses]
    names = sorted(registry)
    raise LaunchError(f"unknown node type '{uses}'", key="uses", allowed=names,
                      suggestion=closest(uses, names))


def module_exists(name: str) -> bool:
    """Like importlib.util.find_spec, but never runs a package's __init__.

    find_spec on a dotted name imports the parent packages; a launch file check
    must not have side effects, so submodules are searched on disk instead.
    """
    if name in sys.modules:
        return True
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    for part in rest:
        if spec is None or spec.submodule_search_locations is None:
            return False
        spec = importlib.machinery.PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec is not None

