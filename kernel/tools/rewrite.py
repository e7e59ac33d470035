"""Launch graphs rewritten by the tools, on the typed model.

``launch run --record`` adds a recorder wired from every output (kernel/tools/record.py), and
``launch replay --agent`` swaps the environment for a ReplayEnv, drops what reads its other outputs
and gives the agents another ``uses`` (kernel/tools/replay.py). Both edit the resolved
:class:`~kernel.launchfile.LaunchFile` here, by copies (``model_copy``), never YAML: the loader has
already resolved short forms, includes and replicas, so an edit cannot miss one of them, and the
wiring is read one way, through :meth:`LaunchFile.edges`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from kernel.launchfile import LaunchFile, NodeSpec, load

# The tools' own nodes, named here so that a rewrite can find them without importing them (the
# recorder pulls in numpy, mcap and the node SDK).
RECORDER_USES = "kernel.tools.record:Recorder"
REPLAY_ENV_USES = "kernel.tools.replay_env:ReplayEnv"

__all__ = ["RECORDER_USES", "REPLAY_ENV_USES", "add_node", "free_id", "loads", "readers", "replace_node", "sources_of", "without"]


def loads(text: str, name: str = "recorded.yaml") -> LaunchFile:
    """A resolved launch file read back from its text (``LaunchFile.to_yaml``, e.g. a recording's);
    through the loader, so it is checked like any file. Raises LaunchError."""
    with tempfile.TemporaryDirectory(prefix="framebus-") as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        return load(path)


def free_id(lf: LaunchFile, wanted: str) -> str:
    """``wanted``, or ``wanted-N`` with the first N no node of ``lf`` has."""
    ids = {n.id for n in lf.nodes}
    unique, n = wanted, 0
    while unique in ids:
        n += 1
        unique = f"{wanted}-{n}"
    return unique


def add_node(lf: LaunchFile, spec: NodeSpec) -> LaunchFile:
    if any(n.id == spec.id for n in lf.nodes):
        raise ValueError(f"the graph has a node {spec.id!r} already; take free_id()")
    return lf.model_copy(update={"nodes": [*lf.nodes, spec]})


def replace_node(lf: LaunchFile, node_id: str, spec: NodeSpec | None = None, **fields: Any) -> LaunchFile:
    """``node_id`` replaced by ``spec``, or by a copy of itself with ``fields`` changed; same place."""
    lf.node(node_id)  # an unknown id raises LaunchError
    new = spec if spec is not None else lf.node(node_id).model_copy(update=fields)
    return lf.model_copy(update={"nodes": [new if n.id == node_id else n for n in lf.nodes]})


def without(lf: LaunchFile, node_ids: Iterable[str]) -> LaunchFile:
    gone = set(node_ids)
    return lf.model_copy(update={"nodes": [n for n in lf.nodes if n.id not in gone]})


def sources_of(lf: LaunchFile, node_id: str, port: str) -> list[str]:
    """The ``node/output`` wired into ``node_id``'s input ``port``, in wiring order."""
    return [f"{src}/{output}" for src, output, dst, inp in lf.edges() if dst == node_id and inp == port]


def readers(lf: LaunchFile, gone: Iterable[str], cut: Callable[[str, str], bool] = lambda src, output: False) -> set[str]:
    """``gone`` plus every node that reads, directly or through others, a node of ``gone`` or an
    output ``cut(src, output)`` selects: what must go with them, since an input wired to nothing is refused."""
    dropped = set(gone)
    edges = lf.edges()
    while True:
        more = {dst for src, output, dst, _ in edges
                if dst not in dropped and (src in dropped or cut(src, output))}
        if not more:
            return dropped
        dropped |= more
