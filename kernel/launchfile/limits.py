"""The sizes a launch file may ask for, each refused at validate where it is written.

A launch file is run as written, so a number in it is a promise of memory, processes or a string
handed to the kernel: a few characters (``replicas: 100000000``, ``episodes: 2**63-1``) would
otherwise pass the check and fail minutes into the run, or take the machine down with them. The
values bound here are far above any graph the project runs (docs/launch.md, "Limits").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kernel.bus.ipcpath import MAX_NODE_ID, SUN_PATH_MAX
from kernel.launchfile.errors import LaunchError
from kernel.launchfile.tree import MAX_VALUES, Y, err

if TYPE_CHECKING:
    from kernel.launchfile.schema import NodeSpec

MAX_REPLICAS = 1024  # copies in one replica group
MAX_NODES = 4096  # nodes of a graph, replica copies included: each one is a process
MAX_EPISODES = 10_000_000  # run.episodes (the launcher keeps a bit per episode: 1.25 MB at the most)
MAX_ARG_STRLEN = 131072  # Linux: the longest single string (NUL included) of a process's argv or environment
PARAMS_ENV = "FRAMEBUS_PARAMS"  # a node's params reach its process here, as JSON (kernel.graph.supervisor)
MAX_PARAMS_BYTES = MAX_ARG_STRLEN - len(PARAMS_ENV) - 2  # '=' and the NUL

__all__ = ["MAX_ARG_STRLEN", "MAX_EPISODES", "MAX_NODES", "MAX_NODE_ID", "MAX_PARAMS_BYTES", "MAX_REPLICAS",
           "MAX_VALUES", "PARAMS_ENV", "check_process_limits", "params_json"]


def params_json(params: dict[str, Any]) -> str:
    """A node's params as its process receives them (``PARAMS_ENV``)."""
    return json.dumps(params, default=str)


def check_process_limits(specs: Sequence[NodeSpec], nodes_y: Sequence[Y], source: Path) -> None:
    """Each node can be started as written: its id fits in an ipc socket path, and its params, its
    ``env:`` values and its ``cmd`` words each fit in one string of a process's environment or
    arguments. The first that does not is a LaunchError at its place in the file."""
    for spec, y in zip(specs, nodes_y, strict=True):
        if len(spec.id) > MAX_NODE_ID:
            copy = f" (with its replica suffix '-{spec.replica}')" if spec.replica is not None else ""
            raise _at(y.value["id"], source, f"node id '{spec.id}' is {len(spec.id)} characters{copy}; an id may "
                      f"have at most {MAX_NODE_ID}, as it names the node's ipc socket, whose path holds at most "
                      f"{SUN_PATH_MAX} bytes")
        size = len(params_json(spec.params).encode())
        if size > MAX_PARAMS_BYTES:
            raise _at(y.get("params") or y, source, f"node '{spec.id}': its params take {size:,} bytes as JSON; "
                      f"a node's params may take at most {MAX_PARAMS_BYTES:,} bytes, as they reach its process in one "
                      f"environment variable ({PARAMS_ENV}) and Linux takes {MAX_ARG_STRLEN:,} bytes a string; "
                      "put something that large in a file and pass its path")
        env_y = y.get("env")
        for name, value in spec.env.items():
            if len(f"{name}={value}".encode()) + 1 > MAX_ARG_STRLEN:
                raise _at(env_y.value[name] if env_y is not None and name in env_y.value else y, source,
                          f"node '{spec.id}': env {name} is longer than a process's environment takes "
                          f"({MAX_ARG_STRLEN:,} bytes a string, the name included)")
        cmd_y = y.get("cmd")
        for i, word in enumerate(spec.cmd or []):
            if len(word.encode()) + 1 > MAX_ARG_STRLEN:
                at = cmd_y.value[i] if cmd_y is not None and cmd_y.is_list and i < len(cmd_y.value) else y
                raise _at(at, source, f"node '{spec.id}': word {i} of cmd is longer than a process's arguments take "
                          f"({MAX_ARG_STRLEN:,} bytes a string)")


def _at(y: Y, source: Path, message: str) -> LaunchError:
    out = err(y, message)
    if out.file is None:  # a value a --set put there has no place in a file: the file it was applied to
        out.file = source
    return out
