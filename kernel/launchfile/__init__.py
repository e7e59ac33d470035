"""Launch files: the YAML that says which processes exist and how they are wired.

A launch file is where a user describes a whole agent system, so it is also where most mistakes
are made: every problem is a :class:`LaunchError` that points at the file, line and column, names
the key, lists what would have been accepted and suggests the closest spelling. The stages are
composed in :mod:`kernel.launchfile.pipeline`; the format is specified in ``docs/launch.md``.
"""

from kernel.launchfile.errors import LaunchError
from kernel.launchfile.finding import bundled_dir, resolve_path
from kernel.launchfile.params import NodeClassLoader
from kernel.launchfile.pipeline import load
from kernel.launchfile.schema import (
    BusSpec,
    ClockSpec,
    CurveSpec,
    InputSpec,
    LaunchFile,
    NodeSpec,
    PlacementSpec,
    RestartSpec,
    RunSpec,
    is_loopback,
)

__all__ = [
    "BusSpec",
    "ClockSpec",
    "CurveSpec",
    "InputSpec",
    "LaunchError",
    "LaunchFile",
    "NodeClassLoader",
    "NodeSpec",
    "PlacementSpec",
    "RestartSpec",
    "RunSpec",
    "bundled_dir",
    "is_loopback",
    "load",
    "resolve_path",
]
