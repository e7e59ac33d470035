"""Where each node of a launch file lands on a Ray cluster: its ``placement:`` (a host, node labels,
spread copies) and ``resources:`` matched against the cluster's machines, before anything starts.

``plan`` is a pure function of the launch file and the machines (``machines`` reads them from
``ray.nodes()``), so ``launch validate --backend ray --address ...`` can say where every node would
run, and ``launch run`` refuses what cannot be placed, with the line it was written at. Each landing
carries the Ray scheduling options that make it so (``actor_options``):

* ``host: NAME`` pins the node to the one machine known by NAME: a custom resource it offers, its
  address, its hostname or its node id (the name must fit exactly one machine) -> Ray's
  ``NodeAffinitySchedulingStrategy(node_id, soft=...)``;
* ``labels: {k: v}`` asks for machines with those Ray node labels -> ``label_selector``, and when
  soft a ``fallback_strategy`` that accepts any machine; Ray picks among the matching machines;
* ``spread: true`` deals the copies of a replica group over the machines that match and fit, copy
  ``i`` to the ``i``-th (so a copy's spread nodes share a machine) -> node affinity per copy.

Hard (the default) means there or nowhere; ``soft`` prefers the place and lets Ray use another
machine when the place cannot take the node (gone, too small, or full now).

A node without ``placement:`` whose class writes into the run folder itself (``Node.launching_host``:
the recorder of ``--record``) is pinned to the launching machine, where the run folder is; every
other node ships what it leaves in the run folder when it lands elsewhere (kernel.bus.outbox).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kernel.launchfile import LaunchError, LaunchFile, NodeSpec
from kernel.launchfile.errors import closest

# Resource names Ray itself gives a machine; any other name is one a person gave it (``--resources``).
_BUILTIN = {"CPU", "GPU", "TPU", "HPU", "NPU", "neuron_cores", "memory", "object_store_memory"}
_BUILTIN_PREFIXES = ("node:", "accelerator_type:", "TPU-")


@dataclass(frozen=True)
class Machine:
    """One live machine (a Ray node) of the cluster."""

    node_id: str
    ip: str
    hostname: str
    resources: dict[str, float]  # totals
    labels: dict[str, str] = field(default_factory=dict)
    free: dict[str, float] | None = None  # free now, where known

    @property
    def names(self) -> list[str]:
        """The custom resources it offers: the names a person gave it."""
        return sorted(k for k in self.resources if k not in _BUILTIN and not k.startswith(_BUILTIN_PREFIXES))

    def known_as(self) -> list[str]:
        """Every name ``placement.host`` may use for it."""
        return [*self.names, self.ip, self.hostname, self.node_id]

    def __str__(self) -> str:
        return f"{self.ip} [{', '.join(self.names)}]" if self.names else f"{self.ip} ({self.hostname})"


def machines(nodes: Iterable[dict[str, Any]], free: dict[str, dict[str, float]] | None = None) -> list[Machine]:
    """The live machines of ``ray.nodes()`` (with ``free`` from Ray's per-node availability), in the
    order of their addresses, so a plan reads the same every time."""
    out = [Machine(node_id=n["NodeID"], ip=n.get("NodeManagerAddress", "?"), hostname=n.get("NodeManagerHostname", "?"),
                   resources=dict(n.get("Resources") or {}),
                   labels={k: v for k, v in (n.get("Labels") or {}).items() if not k.startswith("ray.io/")},
                   free=(free or {}).get(n["NodeID"]))
           for n in nodes if n.get("Alive", n.get("alive"))]
    return sorted(out, key=lambda m: (_ip_key(m.ip), m.node_id))


def _ip_key(ip: str) -> tuple[int, int, str]:
    try:
        addr = ipaddress.ip_address(ip)
        return (addr.version, int(addr), "")
    except ValueError:
        return (9, 0, ip)


@dataclass
class Landing:
    """Where one node would run: ``machines`` it can land on (one when pinned; Ray picks among
    several), the scheduling ``strategy`` that says so, or the ``problem`` why it cannot."""

    node: str
    asked: str  # the placement as the file said it ("host hostA", "labels zone=a, soft"), "" for none
    machines: list[Machine]
    strategy: tuple[Any, ...] | None = None  # ("node", node_id, soft) | ("labels", {k: v}, soft) | None
    problem: LaunchError | None = None
    note: str = ""

    def record(self) -> dict[str, Any]:
        """For summary.json: what the file asked and where the plan put it."""
        return {"asked": self.asked or "any", "planned": [m.ip for m in self.machines],
                **({"soft": self.strategy[2]} if self.strategy else {})}

    def line(self) -> str:
        if self.problem is not None:
            return f"cannot be placed: {self.problem}"
        if not self.machines:
            return "nowhere"
        where = str(self.machines[0]) if len(self.machines) == 1 else \
            "any of " + ", ".join(str(m) for m in self.machines) + " (Ray decides)"
        return where + (f"  ({self.asked})" if self.asked else "") + (f"; {self.note}" if self.note else "")


Demand = Callable[[NodeSpec], dict[str, float]]


def _fits(m: Machine, demand: dict[str, float], taken: dict[str, float] | None = None,
          of: dict[str, float] | None = None) -> bool:
    have = m.resources if of is None else of
    return all(have.get(k, 0.0) >= v + (taken or {}).get(k, 0.0) for k, v in demand.items())


def _add(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: a.get(k, 0.0) + b.get(k, 0.0) for k in {*a, *b}}


HOME = "the launching machine"  # what a pinned recorder's landing says it asked for


def plan(lf: LaunchFile, cluster: Sequence[Machine], demand_of: Demand, *, home: str | None = None,
         at_home: Callable[[NodeSpec], bool] | None = None) -> list[Landing]:
    """Every node's landing, in the file's order. Nodes pinned to one machine (a host, a spread copy)
    count against it: several that together ask for more than it has cannot all be placed there.

    ``home``: the Ray node id of the launching machine; a node without ``placement:`` for which
    ``at_home`` says yes (it writes into the run folder itself) is pinned there."""
    copies: dict[str, int] = {}  # group -> number of copies
    for spec in lf.nodes:
        if spec.group is not None and spec.replica is not None:
            copies[spec.group] = max(copies.get(spec.group, 0), spec.replica + 1)
    pinned: dict[str, dict[str, float]] = {}  # node id of a machine -> what this file's pinned nodes take there
    pinned_by: dict[str, list[str]] = {}
    out: list[Landing] = []
    for spec in lf.nodes:
        demand = demand_of(spec)
        if spec.placement is None and home is not None and at_home is not None and at_home(spec):
            landing = _home(lf, spec, cluster, demand, home)
        else:
            landing = _land(lf, spec, cluster, demand, copies, pinned, pinned_by)
        if landing.problem is None and landing.strategy and landing.strategy[0] == "node" and len(landing.machines) == 1:
            m = landing.machines[0]
            if not landing.strategy[2]:  # hard: only this machine; soft ones may go elsewhere when it is full
                pinned[m.node_id] = _add(pinned.get(m.node_id, {}), demand)
                pinned_by.setdefault(m.node_id, []).append(spec.id)
        out.append(landing)
    return out


def _home(lf: LaunchFile, spec: NodeSpec, cluster: Sequence[Machine], demand: dict[str, float],
          home: str) -> Landing:
    """A node that writes into the run folder itself, on the launching machine (hard: elsewhere it
    would write into a folder nobody reads)."""
    here = [m for m in cluster if m.node_id == home]
    if not here:
        return Landing(spec.id, HOME, [], problem=lf.error_at(
            spec.id, ["uses"], f"node {spec.id!r} writes into the run folder itself, so it runs on the launching "
            f"machine, which is not among the cluster's machines now ({', '.join(map(str, cluster)) or 'none'})"))
    m = here[0]
    if not _fits(m, demand):
        return Landing(spec.id, HOME, [], problem=lf.error_at(
            spec.id, ["resources"], f"node {spec.id!r} writes into the run folder itself, so it runs on the "
            f"launching machine, {m}, which has {describe(m.resources, demand)} of the {describe(demand)} it asks for"))
    return Landing(spec.id, HOME, [m], ("node", m.node_id, False), note="it writes into the run folder")


def _land(lf: LaunchFile, spec: NodeSpec, cluster: Sequence[Machine], demand: dict[str, float],
          copies: dict[str, int], pinned: dict[str, dict[str, float]], pinned_by: dict[str, list[str]]) -> Landing:
    p = spec.placement
    fit = [m for m in cluster if _fits(m, demand)]
    everywhere = "; ".join(f"{m}: {describe(m.resources, demand)}" for m in cluster[:8]) or "no machine"
    if p is None:
        if fit:
            return Landing(spec.id, "", fit)
        return Landing(spec.id, "", [], problem=lf.error_at(
            spec.id, ["resources"], f"node {spec.id!r} asks Ray for {describe(demand)}, but no machine of the cluster "
            f"has that much ({everywhere}); change its resources or add a machine that has them"))
    soft = p.soft
    if p.host is not None:
        asked = f"host: {p.host}"
        named = [m for m in cluster if p.host in m.known_as()]
        if not named:
            names = sorted({n for m in cluster for n in (*m.names, m.ip, m.hostname)})
            return Landing(spec.id, asked, [], problem=lf.error_at(
                spec.id, ["placement", "host"],
                f"node {spec.id!r}: no machine of the cluster is known as {p.host!r} (a custom resource it offers, its "
                f"address, hostname or Ray node id); the cluster has {', '.join(str(m) for m in cluster) or 'no machine'}",
                suggestion=closest(p.host, names)))
        if len(named) > 1:
            return Landing(spec.id, asked, [], problem=lf.error_at(
                spec.id, ["placement", "host"],
                f"node {spec.id!r}: {p.host!r} fits {len(named)} machines ({', '.join(str(m) for m in named)}); "
                "a host names one: use its address, or a custom resource only it offers"))
        target = named
    elif p.labels:
        asked = "labels: " + ", ".join(f"{k}={v}" for k, v in p.labels.items())
        target = [m for m in cluster if all(m.labels.get(k) == v for k, v in p.labels.items())]
        if not target and not soft:
            have = "; ".join(f"{m}: {_labels(m)}" for m in cluster) or "no machine"
            return Landing(spec.id, asked, [], problem=lf.error_at(
                spec.id, ["placement", "labels"],
                f"node {spec.id!r}: no machine of the cluster has the labels {_labels_of(p.labels)} ({have})"))
    else:
        asked = ""
        target = list(cluster)
    if p.spread:
        asked = ", ".join(filter(None, [asked, f"spread: copy {spec.replica} of {copies.get(spec.group or '', 1)}"]))
    if soft:
        asked += ", soft"
    room = [m for m in target if _fits(m, demand)]
    if not room:
        lacking = "; ".join(f"{m}: {describe(m.resources, demand)}" for m in target) or "no machine matches"
        if soft and fit:
            strategy = ("labels", dict(p.labels), True) if p.labels else \
                ("node", target[0].node_id, True) if p.host is not None else None
            return Landing(spec.id, asked, fit, strategy,
                           note=f"soft: the place asked for cannot hold {describe(demand)} ({lacking}); Ray uses another")
        where = "on the machines asked for" if soft else "where its placement allows"
        return Landing(spec.id, asked, [], problem=lf.error_at(
            spec.id, ["resources"] if spec.resources else ["placement"],
            f"node {spec.id!r} asks Ray for {describe(demand)} {where}, but {lacking}"
            + ("" if soft else f" (the cluster: {everywhere})")))
    if p.labels and not p.spread:
        return Landing(spec.id, asked, room, ("labels", dict(p.labels), soft))
    m = room[(spec.replica or 0) % len(room)] if p.spread else room[0]
    note = ""
    if p.spread and copies.get(spec.group or "", 1) > len(room):
        note = f"{copies[spec.group or '']} copies over {len(room)} machines: some share one"
    taken = pinned.get(m.node_id, {})
    if taken and not _fits(m, demand, taken):
        others = pinned_by.get(m.node_id, [])
        message = (f"node {spec.id!r} asks Ray for {describe(demand)} on {m}, where {', '.join(map(repr, others))} "
                   f"already take{'s' if len(others) == 1 else ''} {describe(taken, demand)} of "
                   f"{describe(m.resources, demand)}")
        if not soft:
            return Landing(spec.id, asked, [], problem=lf.error_at(spec.id, ["resources"], message))
        note = _join(note, f"soft: {message}; Ray uses another machine")
    elif m.free is not None and not _fits(m, demand, taken, of=m.free):
        note = _join(note, f"no room there now (free {describe(m.free, demand)}): it would wait"
                           + (" or go elsewhere (soft)" if soft else ""))
    return Landing(spec.id, asked, [m], ("node", m.node_id, soft), note=note)


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def _labels_of(labels: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in labels.items()) + "}"


def _labels(m: Machine) -> str:
    return _labels_of(m.labels) if m.labels else "no labels"


def actor_options(landing: Landing | None) -> dict[str, Any]:
    """The Ray actor options that carry out a landing."""
    if landing is None or landing.strategy is None:
        return {}
    kind, target, soft = landing.strategy
    if kind == "node":
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # soft: also spill over when the machine is merely full (Ray's plain soft affinity would wait)
        return {"scheduling_strategy": NodeAffinitySchedulingStrategy(target, soft=soft, _spill_on_unavailable=soft)}
    options: dict[str, Any] = {"label_selector": dict(target)}
    if soft:
        options["fallback_strategy"] = [{"label_selector": {}}]  # then anywhere
    return options


def render(landings: Sequence[Landing]) -> list[str]:
    """One line per node: where it would land, or why it cannot."""
    width = max((len(x.node) for x in landings), default=0)
    return [f"  {x.node:<{width}}  {x.line()}" for x in landings]


def describe(resources: dict[str, float], only: dict[str, float] | None = None) -> str:
    """Resources the way a person reads them: CPU 2, GPU 1, memory 4.0 GiB."""
    keys = list(only) if only else [k for k in resources if not k.startswith("node:") and k != "object_store_memory"]
    parts = []
    for key in keys:
        value = resources.get(key, 0.0)
        if key == "memory":
            parts.append(f"memory {value / 2**30:.1f} GiB")
        elif key.startswith("accelerator_type:"):
            parts.append(key if value else f"no {key}")
        else:
            parts.append(f"{key} {value:g}")
    return "{" + ", ".join(parts) + "}"
