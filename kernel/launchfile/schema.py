"""The launch file's schema: pydantic models of the resolved file (after includes, replicas,
variables and overrides). The YAML stages before it only reshape; these models decide what is valid."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from kernel.bus.inputs import Policy
from kernel.launchfile.errors import LaunchError, closest
from kernel.launchfile.limits import MAX_EPISODES
from kernel.launchfile.secrets import declared_secrets, redact
from kernel.launchfile.tree import ID_PATTERN, child_path, err

# A command's word or an environment value: YAML reads 8080 and true as a number and a bool, but a
# process only gets strings, so they are taken as written.
Word = Annotated[str, Field(coerce_numbers_to_str=True)]
EnvValue = Annotated[Word, BeforeValidator(lambda v: str(v).lower() if isinstance(v, bool) else v)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputSpec(_Strict):
    """One input port: where its messages come from and how they queue."""

    sources: list[str] = Field(min_length=1)
    policy: Policy = "fifo"
    size: int = Field(default=16, ge=1)
    rate: float | None = Field(default=None, gt=0, le=1000,
                               description="most messages a second the senders send here (policy latest only)")

    @model_validator(mode="after")
    def _latest_keeps_one(self) -> InputSpec:
        # "latest" means only the newest message matters; a deeper queue
        # would only hold stale ones.
        if self.policy == "latest":
            self.size = 1
        elif self.rate is not None:
            raise ValueError(f"rate {self.rate:g}: only an input with policy 'latest' can be thinned "
                             f"(this one is {self.policy!r}, which wants every message)")
        return self


class RestartSpec(_Strict):
    policy: Literal["never", "on-failure"] = "never"
    max_restarts: int = Field(default=3, ge=0)
    backoff: float = Field(default=0.5, ge=0)


class ClockSpec(_Strict):
    mode: Literal["lockstep", "realtime"]
    fps: float | None = Field(default=None, gt=0)
    deadline: float | None = Field(default=None, gt=0)
    wait_for: list[str] | None = None
    default_action: Any = None

    @model_validator(mode="after")
    def _realtime_needs_rate(self) -> ClockSpec:
        if self.mode == "realtime" and self.fps is None:
            raise ValueError("a realtime clock needs 'fps' (frames per second, > 0)")
        return self


class PlacementSpec(_Strict):
    """Where a node runs on a cluster (``--backend ray``; the local backend runs every node here).

    ``host`` names one machine of the cluster: a custom resource it offers (``ray start --resources
    '{"hostB": 1}'``), its address, its hostname or its Ray node id; ``labels`` asks for machines
    with those Ray node labels (``ray start --labels``); ``spread`` deals the copies of a replica
    group out over the machines, copy ``i`` to the ``i``-th of them. Hard by default (the node runs
    there or not at all); ``soft`` prefers the place and falls back to any machine with room. Which
    machine a name means is decided against the live cluster (kernel.tools.ray_backend.plan)."""

    host: str | None = Field(default=None, min_length=1)
    labels: dict[str, Word] = Field(default_factory=dict)
    soft: bool = False
    spread: bool = False

    @model_validator(mode="after")
    def _one_target(self) -> PlacementSpec:
        if self.host is not None and self.labels:
            raise ValueError("give 'host' (one machine) or 'labels' (machines with those labels), not both")
        if self.host is not None and self.spread:
            raise ValueError("'spread' deals copies out over several machines, and 'host' names one; "
                             "spread over 'labels', or over every machine without 'host'")
        if self.host is None and not self.labels and not self.spread:
            raise ValueError("placement needs 'host' (a machine), 'labels' (Ray node labels) or 'spread: true' "
                             "(copies of a replica group on different machines)")
        return self


def is_loopback(host: str) -> bool:
    """True when ``host`` can only be reached from this machine; names other than localhost count as open."""
    host = host.strip("[]")
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class NodeSpec(_Strict):
    id: str = Field(pattern=ID_PATTERN)
    uses: str | None = None
    cmd: list[Word] | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    restart: RestartSpec = Field(default_factory=RestartSpec)
    env: dict[str, EnvValue] = Field(default_factory=dict)
    clock: ClockSpec | None = None
    # What the node asks of a cluster backend; the local backend ignores it, so its keys are the
    # backend's to check (``--backend ray``: kernel.tools.ray_backend.RayResources).
    resources: dict[str, Any] | None = None
    placement: PlacementSpec | None = None  # where on a cluster; the local backend ignores it
    group: str | None = None
    replica: int | None = None
    # A node that only watches the graph (the recorder of ``--record``, the console of ``--ui``): no
    # judge, so an environment whose ``step`` only observers read ends its episodes itself.
    observer: bool = False


class CurveSpec(_Strict):
    """CurveZMQ with fixed keys instead of a fresh set per run (see docs/scale.md)."""

    keys: str = Field(min_length=1)  # a directory: server.key_secret, plus *.key client certificates to accept


class BusSpec(_Strict):
    transport: Literal["ipc", "tcp"] = "ipc"
    host: str = "127.0.0.1"
    max_message_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    heartbeat: float = Field(default=0.5, gt=0)
    # Seconds a node goes on without a word from the kernel (a network partition, a stalled
    # launcher) before it exits; like Ray's node-death detection, longer than a blip. A dead launcher
    # takes its local nodes along at once regardless (PR_SET_PDEATHSIG, the parent pid).
    grace: float = Field(default=30.0, gt=0)
    # Seconds a record (an environment's step) for a reader of records only may wait to travel with
    # others (kernel.bus.links); 0 sends each at once.
    records_delay: float = Field(default=0.02, ge=0, le=60)
    curve: bool | CurveSpec | None = None  # None: on for any tcp bus; false: off (loopback, or with insecure)
    insecure: bool = False

    @model_validator(mode="after")
    def _open_tcp_needs_consent(self) -> BusSpec:
        # A bus reachable from other machines without CURVE lets anyone who can reach the port
        # join the graph, read its data and stop it; that must be a written decision, not a default.
        if self.transport == "tcp" and self.curve is False and not is_loopback(self.host) and not self.insecure:
            raise ValueError(f"curve: false on host {self.host!r} (not loopback) leaves the bus open to anyone who "
                             "can reach it; remove 'curve: false' (CURVE is on by default on TCP) or add "
                             "'insecure: true' to accept that")
        return self


class RunSpec(_Strict):
    episodes: int | None = Field(default=None, ge=1, le=MAX_EPISODES)
    seed: int = 0
    out: str | None = None
    timeout: float | None = Field(default=None, gt=0)
    metric: str | None = None  # the episode metric the progress display averages (default: score or success)


class LaunchFile(_Strict):
    """A launch file after includes, replicas, variables and overrides."""

    name: str
    description: str = ""
    source: Path
    bus: BusSpec = Field(default_factory=BusSpec)
    nodes: list[NodeSpec] = Field(min_length=1)
    run: RunSpec = Field(default_factory=RunSpec)
    parsed_params: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    """Node id -> its params as its ``Params`` model parsed them; filled only when ``load`` was
    given the node classes (``launch run`` and ``launch validate`` do that)."""
    node_trees: dict[str, Any] = Field(default_factory=dict, exclude=True, repr=False)
    """Node id -> the node as read (a kernel.launchfile.tree.Y, positions included), so a problem found
    later against a live cluster is still reported where it was written (``error_at``)."""

    def node(self, node_id: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.id == node_id:
                return spec
        ids = [n.id for n in self.nodes]
        raise LaunchError(
            f"unknown node '{node_id}'", file=self.source, allowed=ids,
            suggestion=closest(node_id, ids),
        )

    def error_at(self, node_id: str, keys: Sequence[str], message: str, *,
                 allowed: Sequence[str] | None = None, suggestion: str | None = None) -> LaunchError:
        """A LaunchError at the value ``keys`` lead to in node ``node_id`` as written (as deep as the
        file has them), or at the file alone for a node code added."""
        y = self.node_trees.get(node_id)
        if y is None:
            return LaunchError(message, file=self.source, key=".".join(["nodes", node_id, *keys]),
                               allowed=allowed, suggestion=suggestion)
        path = y.path
        for key in keys:
            child = y.get(key)
            if child is None:
                path = child_path(path, key)
                break
            y = child
            path = y.path
        return err(y, message, path=path, allowed=allowed, suggestion=suggestion)

    def edges(self) -> list[tuple[str, str, str, str]]:
        out: list[tuple[str, str, str, str]] = []
        for spec in self.nodes:
            for port, inp in spec.inputs.items():
                for src in inp.sources:
                    src_node, _, src_output = src.partition("/")
                    out.append((src_node, src_output, spec.id, port))
        return out

    def to_yaml(self) -> str:
        """Write the resolved file so a run can be reproduced without its includes; its secrets
        (kernel.launchfile.secrets) written redacted, since the file is kept beside the results."""
        doc = self.model_dump(exclude={"source"})
        if not self.description:
            del doc["description"]
        doc["nodes"] = [self._redacted(node_doc(n)) for n in self.nodes]
        return yaml.safe_dump(escape_vars(doc), sort_keys=False, allow_unicode=True,
                              default_flow_style=False)


    def _redacted(self, doc: dict[str, Any]) -> dict[str, Any]:
        parsed = self.parsed_params.get(doc["id"])
        declared = declared_secrets(type(parsed)) if isinstance(parsed, BaseModel) else set()
        for key in ("params", "env"):
            if key in doc:
                doc[key] = redact(doc[key], declared if key == "params" else set())
        return doc


def node_doc(spec: NodeSpec) -> dict[str, Any]:
    """A node as a file would say it: what differs from the defaults, each input's sources as 'from'."""
    doc = spec.model_dump(exclude_defaults=True)
    for port, inp in spec.inputs.items():
        doc["inputs"][port] = {
            "from": inp.sources[0] if len(inp.sources) == 1 else list(inp.sources),
            "policy": inp.policy,
            "size": inp.size,
            **({"rate": inp.rate} if inp.rate is not None else {}),
        }
    return doc


def escape_vars(value: Any) -> Any:
    """Keep literal '${' literal when the resolved file is loaded again."""
    if isinstance(value, str):
        return value.replace("${", "$${")
    if isinstance(value, dict):
        return {k: escape_vars(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_vars(v) for v in value]
    return value

