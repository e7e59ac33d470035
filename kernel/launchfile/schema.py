"""The launch file's schema: pydantic models of the resolved file (after includes, replicas,
variables and overrides). The YAML stages before it only reshape; these models decide what is valid."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kernel.bus.inputs import Policy
from kernel.launchfile.errors import LaunchError, closest
from kernel.launchfile.tree import ID_PATTERN


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class InputSpec(_Strict):
    """One input port: where its messages come from and how they queue."""

    sources: list[str] = Field(min_length=1)
    policy: Policy = "fifo"
    size: int = Field(default=16, ge=1)

    @model_validator(mode="after")
    def _latest_keeps_one(self) -> InputSpec:
        # "latest" means only the newest message matters; a deeper queue
        # would only hold stale ones.
        if self.policy == "latest":
            self.size = 1
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


_MEMORY_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
                 "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_MEMORY_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$")


class ResourcesSpec(_Strict):
    """What a node's process asks of a Ray cluster (``launch run --backend ray``); the local backend ignores it.

    The names follow Ray's actor options, so a request reads the same here and in Ray's docs.
    """

    num_cpus: float | None = Field(default=None, ge=0)
    num_gpus: float | None = Field(default=None, ge=0)
    memory: int | None = Field(default=None, ge=0)  # bytes; "4GiB" and "500MB" are accepted
    accelerator_type: str | None = Field(default=None, min_length=1)
    custom: dict[str, float] = Field(default_factory=dict)  # named Ray resources, e.g. {TPU: 4}

    @field_validator("memory", mode="before")
    @classmethod
    def _memory_units(cls, value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if not isinstance(value, str):
            return value
        match = _MEMORY_RE.match(value)
        unit = match.group(2).lower() if match else ""
        if match is None or unit not in _MEMORY_UNITS:
            raise ValueError(f"memory {value!r} is not a size; write bytes (4000000000) or a number with a unit "
                             "(4GiB, 512MiB, 2GB)")
        return int(float(match.group(1)) * _MEMORY_UNITS[unit])

    @model_validator(mode="after")
    def _ray_quantities(self) -> ResourcesSpec:
        # Ray refuses fractions above 1 (a process gets half a GPU or whole GPUs, never 1.5).
        amounts = {"num_cpus": self.num_cpus, "num_gpus": self.num_gpus, **self.custom}
        for name, amount in amounts.items():
            if amount is not None and amount > 1 and not float(amount).is_integer():
                raise ValueError(f"{name}: {amount} is not allowed; above 1 a resource must be a whole number "
                                 "(fractions only below 1, e.g. 0.5)")
            if amount is not None and amount < 0:
                raise ValueError(f"{name}: must be >= 0, got {amount}")
        return self

    def ray_demand(self) -> dict[str, float]:
        """The request as Ray's resource names, the way ``ray.nodes()`` lists a machine's capacity."""
        demand: dict[str, float] = {}
        if self.num_cpus:
            demand["CPU"] = self.num_cpus
        if self.num_gpus:
            demand["GPU"] = self.num_gpus
        if self.memory:
            demand["memory"] = float(self.memory)
        if self.accelerator_type:
            demand[f"accelerator_type:{self.accelerator_type}"] = 0.001
        demand.update({k: v for k, v in self.custom.items() if v})
        return demand


def is_loopback(host: str) -> bool:
    """True when ``host`` can only be reached from this machine; names other than localhost count as open."""
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class NodeSpec(_Strict):
    id: str = Field(pattern=ID_PATTERN)
    uses: str | None = None
    cmd: list[str] | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, InputSpec] = Field(default_factory=dict)
    restart: RestartSpec = Field(default_factory=RestartSpec)
    env: dict[str, str] = Field(default_factory=dict)
    clock: ClockSpec | None = None
    resources: ResourcesSpec | None = None
    group: str | None = None
    replica: int | None = None


class CurveSpec(_Strict):
    """CurveZMQ with fixed keys instead of a fresh set per run (see docs/scale.md)."""

    keys: str = Field(min_length=1)  # a directory: server.key_secret, plus *.key client certificates to accept


class BusSpec(_Strict):
    transport: Literal["ipc", "tcp"] = "ipc"
    host: str = "127.0.0.1"
    max_message_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    heartbeat: float = Field(default=0.5, gt=0)
    curve: bool | CurveSpec | None = None  # None: on exactly when tcp leaves the machine
    insecure: bool = False

    @model_validator(mode="after")
    def _open_tcp_needs_consent(self) -> BusSpec:
        # A bus reachable from other machines without CURVE lets anyone who can reach the port
        # join the graph, read its data and stop it; that must be a written decision, not a default.
        if self.transport == "tcp" and self.curve is False and not is_loopback(self.host) and not self.insecure:
            raise ValueError(f"curve: false on host {self.host!r} (not loopback) leaves the bus open to anyone who "
                             "can reach it; remove 'curve: false' (CURVE is on by default off loopback) or add "
                             "'insecure: true' to accept that")
        return self


class RunSpec(_Strict):
    episodes: int | None = Field(default=None, ge=1)
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

    def node(self, node_id: str) -> NodeSpec:
        for spec in self.nodes:
            if spec.id == node_id:
                return spec
        ids = [n.id for n in self.nodes]
        raise LaunchError(
            f"unknown node '{node_id}'", file=self.source, allowed=ids,
            suggestion=closest(node_id, ids),
        )

    def edges(self) -> list[tuple[str, str, str, str]]:
        out: list[tuple[str, str, str, str]] = []
        for spec in self.nodes:
            for port, inp in spec.inputs.items():
                for src in inp.sources:
                    src_node, _, src_output = src.partition("/")
                    out.append((src_node, src_output, spec.id, port))
        return out

    def to_yaml(self) -> str:
        """Write the resolved file so a run can be reproduced without its includes."""
        doc: dict[str, Any] = {"name": self.name}
        if self.description:
            doc["description"] = self.description
        doc["bus"] = self.bus.model_dump()
        doc["nodes"] = [node_doc(n) for n in self.nodes]
        doc["run"] = self.run.model_dump()
        return yaml.safe_dump(escape_vars(doc), sort_keys=False, allow_unicode=True,
                              default_flow_style=False)


def node_doc(spec: NodeSpec) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": spec.id}
    if spec.group is not None:
        doc["group"] = spec.group
        doc["replica"] = spec.replica
    if spec.uses is not None:
        doc["uses"] = spec.uses
    if spec.cmd is not None:
        doc["cmd"] = list(spec.cmd)
    if spec.params:
        doc["params"] = spec.params
    if spec.inputs:
        doc["inputs"] = {
            port: {
                "from": inp.sources[0] if len(inp.sources) == 1 else list(inp.sources),
                "policy": inp.policy,
                "size": inp.size,
            }
            for port, inp in spec.inputs.items()
        }
    if spec.restart != RestartSpec():
        doc["restart"] = spec.restart.model_dump()
    if spec.env:
        doc["env"] = dict(spec.env)
    if spec.clock is not None:
        doc["clock"] = spec.clock.model_dump(exclude_none=True)
    if spec.resources is not None:
        doc["resources"] = spec.resources.model_dump(exclude_none=True, exclude_defaults=True)
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

