"""Replica groups: each group becomes ``replicas`` copies of its nodes, wired across the group border."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from kernel.launchfile.entries import is_group, parse_source
from kernel.launchfile.limits import MAX_NODES
from kernel.launchfile.tree import Budget, Y, child_path, count, err


def expand_replicas(root: Y, budget: Budget | None = None) -> None:
    """Replace each replica group by its copies and rewire across the group border."""
    nodes = root.get("nodes")
    if nodes is not None and nodes.is_list:
        _check_size(nodes.value, Budget() if budget is None else budget)
        nodes.value = _expand(nodes.value)


def _check_size(entries: list[Y], budget: Budget) -> None:
    """The copies fit, in nodes (``MAX_NODES``) and in values (``budget``), before any is made."""
    total = 0
    for entry in entries:
        if not is_group(entry):
            total += 1
            continue
        replicas_y = entry.get("replicas")
        copies = replicas_y.value if replicas_y is not None else 1
        members = entry.value["nodes"].value
        total += copies * len(members)
        at = replicas_y or entry.value["group"]
        if total > MAX_NODES:
            raise err(at, f"the graph would have {total:,} nodes or more with these copies; a graph may have at most "
                          f"{MAX_NODES:,} nodes, replica copies included (each is a process)")
        budget.spend((copies - 1) * sum(count(m) + 2 for m in members), at, f"{copies} copies of group "
                     f"'{entry.value['group'].value}'")  # each copy also gets 'group' and 'replica'


def _expand(entries: list[Y]) -> list[Y]:
    out: list[Y] = []
    grouped: dict[str, tuple[str, int]] = {}  # member id -> (group, replicas)
    for entry in entries:
        if not is_group(entry):
            out.append(entry)
            continue
        name_y = entry.value["group"]
        replicas_y = entry.get("replicas")
        count = replicas_y.value if replicas_y is not None else 1
        members = entry.value["nodes"].value
        for member in members:
            grouped[member.value["id"].value] = (name_y.value, count)
        for i in range(count):
            for member in members:
                copy_y = copy.deepcopy(member)
                copy_y.value["id"].value += f"-{i}"  # a deep copy: the member itself keeps its id
                copy_y.value["group"] = replace(name_y)
                copy_y.value["replica"] = Y(i, copy_y.mark, child_path(copy_y.path, "replica"), copy_y.mark)
                params = copy_y.value.setdefault("params", Y({}, copy_y.mark, child_path(copy_y.path, "params"),
                                                              copy_y.mark))
                if params.is_map and "replica" not in params.value:
                    params.value["replica"] = Y(i, params.mark, child_path(params.path, "replica"), params.mark)
                out.append(copy_y)

    for node in out:
        group, replica = node.get("group"), node.get("replica")
        own = (group.value, replica.value) if group is not None and replica is not None else None
        inputs = node.get("inputs")
        for spec in inputs.value.values() if inputs is not None and inputs.is_map else []:
            _rewire(spec.get("sources"), grouped, own, lambda y: parse_source(y)[0])
        clock = node.get("clock")
        _rewire(clock.get("wait_for") if clock is not None else None, grouped, own, lambda y: y.value)
    return out


def _rewire(refs: Y | None, grouped: dict[str, tuple[str, int]], own: tuple[Any, Any] | None,
            node_of: Callable[[Y], str]) -> None:
    """Each name of a replicated node in ``refs`` becomes its copy in the referring node's own replica
    (``own``: its group and replica) or, from outside that group, every copy."""
    if refs is None or not refs.is_list:
        return
    renamed: list[Y] = []
    for y in refs.value:
        name = node_of(y) if isinstance(y.value, str) else None
        if name not in grouped:
            renamed.append(y)
            continue
        group, count = grouped[name]
        replicas = [own[1]] if own is not None and own[0] == group else range(count)
        renamed.extend(replace(y, value=f"{name}-{i}{y.value[len(name):]}") for i in replicas)
    refs.value = renamed
