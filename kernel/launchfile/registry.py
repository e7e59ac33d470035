"""Checking a ``uses`` value without importing it (names resolve in :mod:`kernel.sdk.registry`)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import re
import sys

CLASS_REF_RE = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


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

