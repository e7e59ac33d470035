"""What a run decides before its kernel starts: where the nodes run, and how the bus is secured.

``launch run`` places node processes on this machine (``--backend local``, the default) or on a Ray
cluster (``--backend ray [--address ADDR]``, kernel.tools.ray_backend). Ray moves the bus to TCP, and a
bus over TCP beyond loopback (or one that asks for it) uses CURVE keys (kernel.graph.keys). This module
puts those decisions in one place, so the runner only asks for a supervisor and a cleanup.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from rich.console import Console

from kernel.graph.keys import RunKeys
from kernel.graph.supervisor import Supervisor
from kernel.launchfile import LaunchError, LaunchFile

BACKENDS = ("local", "ray")


@dataclass
class Placement:
    """The launch file as it will run (bus possibly moved to TCP), its keys, and where nodes go."""

    lf: LaunchFile
    keys: RunKeys | None
    backend: str = "local"
    cluster: Any = None  # kernel.tools.ray_backend.RayCluster for --backend ray
    _supervisor: Supervisor | None = None

    def supervisor(self, env: dict[str, str], log_dir: Path, console: Console,
                   on_exit: Callable[[str, int | None, bool], None]) -> Supervisor:
        node_env = {n.id: self.keys.node_env(n.id) for n in self.lf.nodes} if self.keys else None
        if self.cluster is not None:
            from kernel.tools.ray_backend import RaySupervisor

            self._supervisor = RaySupervisor(self.lf.nodes, env, log_dir, console, on_exit, node_env,
                                             cluster=self.cluster)
        else:
            self._supervisor = Supervisor(self.lf.nodes, env, log_dir, console, on_exit, node_env)
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


def prepare(lf: LaunchFile, backend: str = "local", address: str | None = None,
            console: Console | None = None) -> Placement:
    """Connect the backend and make the run's keys; raises LaunchError with what to change."""
    console = console or Console(stderr=True)
    if backend not in BACKENDS:
        raise LaunchError(f"unknown backend {backend!r}", allowed=list(BACKENDS))
    if address and backend != "ray":
        raise LaunchError("--address names a Ray cluster to join; add --backend ray")
    if backend == "local":
        return Placement(lf, RunKeys.create(lf.bus, [n.id for n in lf.nodes]))
    from kernel.tools.ray_backend import RayCluster

    cluster = RayCluster(address, console)
    cluster.start()
    try:
        bus = lf.bus.model_copy(update={"transport": "tcp", "host": cluster.bus_host(lf)})
        lf = lf.model_copy(update={"bus": bus})
        cluster.check_feasible(lf.nodes)
        keys = RunKeys.create(lf.bus, [n.id for n in lf.nodes])
    except BaseException:
        cluster.shutdown()
        raise
    console.print(f"ray: bus on tcp://{bus.host}" + (" with CURVE" if keys else " (loopback, no CURVE)"),
                  highlight=False)
    if keys and not cluster.owned and os.environ.get("RAY_USE_TLS", "0").lower() not in ("1", "true"):
        console.print("[yellow]warning:[/] node keys reach the actors through Ray's own channel, which is not "
                      "encrypted without Ray TLS (RAY_USE_TLS=1); see docs/scale.md", highlight=False)
    return Placement(lf, keys, "ray", cluster)
