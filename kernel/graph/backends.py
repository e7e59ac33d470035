"""What a run decides before its kernel starts: where the nodes run, and how the bus is secured.

``launch run`` places node processes on this machine (``--backend local``, the default) or on a
cluster (``--backend ray [--address ADDR]``). A cluster backend lives above the graph (Ray's is with
the tools: Ray is an optional dependency, and the graph never imports upward), so it registers in
the ``framebus.backends`` entry-point group, read without importing anything; its class is loaded
only when a run asks for it. A cluster moves the bus to TCP, and a
bus over TCP (loopback too, unless the launch file opts out) uses CURVE keys (kernel.graph.keys). This module
puts those decisions in one place, so the runner only asks for a supervisor and a cleanup.
"""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

from rich.console import Console

from kernel.graph.keys import OPEN_LOOPBACK_WARNING, RunKeys, open_loopback
from kernel.graph.supervisor import Supervisor
from kernel.launchfile import LaunchError, LaunchFile, NodeSpec

BACKEND_GROUP = "framebus.backends"


def clusters() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed cluster backends by name ("local" needs none); metadata only, nothing imported."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=BACKEND_GROUP) if ep.name != "local"}


class Cluster(Protocol):
    """What a cluster backend gives a run: a place for node processes and a supervisor for them."""

    owned: bool  # started for this run (and stopped with it), not joined

    def __init__(self, address: str | None, console: Console) -> None: ...
    def start(self) -> None: ...
    def bus_host(self, lf: LaunchFile) -> str: ...
    def check_feasible(self, lf: LaunchFile) -> None: ...
    def supervisor(self, specs: list[NodeSpec], env: dict[str, str], log_dir: Path, console: Console,
                   on_exit: Callable[..., None],
                   node_env: dict[str, dict[str, str]] | None) -> Supervisor: ...
    def shutdown(self) -> None: ...


@dataclass
class Placement:
    """The launch file as it will run (bus possibly moved to TCP), its keys, and where nodes go."""

    lf: LaunchFile
    keys: RunKeys | None
    backend: str = "local"
    cluster: Cluster | None = None  # for a cluster backend (clusters())
    _supervisor: Supervisor | None = None

    def supervisor(self, env: dict[str, str], log_dir: Path, console: Console,
                   on_exit: Callable[..., None]) -> Supervisor:
        node_env = {n.id: self.keys.node_env(n.id) for n in self.lf.nodes} if self.keys else None
        make = Supervisor if self.cluster is None else self.cluster.supervisor  # the same arguments
        self._supervisor = make(self.lf.nodes, env, log_dir, console, on_exit, node_env)
        return self._supervisor

    def announcement(self) -> dict[str, Any]:
        """Extra fields for the run's announcement file, which `launch ctl` reads."""
        return {"backend": self.backend, **({"curve": self.keys.control_keys()} if self.keys else {})}

    def close(self) -> None:
        """After the supervisor stopped every node: kill leftover actors, leave (or stop) the cluster."""
        if self.cluster is None:
            return
        close = getattr(self._supervisor, "close", None)
        if close is not None:
            close()
        self.cluster.shutdown()


def _warn_if_open(lf: LaunchFile, console: Console) -> None:
    """One line when the launch file opted out of CURVE on loopback TCP (docs/scale.md)."""
    if open_loopback(lf.bus):
        console.print("[yellow]warning:[/] " + OPEN_LOOPBACK_WARNING.format(host=lf.bus.host), highlight=False,
                      soft_wrap=True)


def prepare(lf: LaunchFile, backend: str, address: str | None, console: Console) -> Placement:
    """Connect the backend and make the run's keys; raises LaunchError with what to change."""
    found = clusters()
    if backend != "local" and backend not in found:
        raise LaunchError(f"unknown backend {backend!r}", allowed=["local", *found])
    if address and backend == "local":
        raise LaunchError(f"--address names a cluster to join; add --backend {' or '.join(found) or '(none installed)'}")
    if backend == "local":
        placement = Placement(lf, RunKeys.create(lf.bus, [n.id for n in lf.nodes]))
        _warn_if_open(lf, console)
        return placement
    cluster: Cluster = found[backend].load()(address, console)  # imported now: it may need optional packages
    cluster.start()
    try:
        bus = lf.bus.model_copy(update={"transport": "tcp", "host": cluster.bus_host(lf)})
        lf = lf.model_copy(update={"bus": bus})
        cluster.check_feasible(lf)
        keys = RunKeys.create(lf.bus, [n.id for n in lf.nodes])
    except BaseException:
        cluster.shutdown()
        raise
    console.print(f"{backend}: bus on tcp://{bus.host}" + (" with CURVE" if keys else " (loopback, no CURVE)"),
                  highlight=False)
    _warn_if_open(lf, console)
    if keys and not cluster.owned and os.environ.get("RAY_USE_TLS", "0").lower() not in ("1", "true"):
        console.print("[yellow]warning:[/] node keys reach the actors through Ray's own channel, which is not "
                      "encrypted without Ray TLS (RAY_USE_TLS=1); see docs/scale.md", highlight=False)
    return Placement(lf, keys, backend, cluster)
