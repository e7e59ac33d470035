"""Replica groups: each group becomes ``replicas`` copies of its nodes, wired across the group border."""

from __future__ import annotations

import copy
from typing import Any

from kernel.launchfile.entries import is_group, parse_source
from kernel.launchfile.tree import Y, child_path


def expand_replicas(root: Y) -> None:
    """Replace each replica group by its copies and rewire across the group border."""
    nodes = root.get("nodes")
    if nodes is not None and nodes.is_list:
        nodes.value = _expand(nodes.value)


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
                id_y = copy_y.value["id"]
                copy_y.value["id"] = Y(f"{id_y.value}-{i}", id_y.mark, id_y.path, id_y.key_mark)
                copy_y.value["group"] = Y(name_y.value, name_y.mark, name_y.path, name_y.key_mark)
                copy_y.value["replica"] = Y(i, copy_y.mark, child_path(copy_y.path, "replica"),
                                             copy_y.mark)
                params = copy_y.get("params")
                if params is None:
                    params = Y({}, copy_y.mark, child_path(copy_y.path, "params"), copy_y.mark)
                    copy_y.value["params"] = params
                if params.is_map and "replica" not in params.value:
                    params.value["replica"] = Y(i, params.mark,
                                                 child_path(params.path, "replica"), params.mark)
                out.append(copy_y)

    for node in out:
        group = node.get("group")
        replica = node.get("replica")
        own = (group.value, replica.value) if group is not None and replica is not None else None

        def rename(name: str, y: Y, own: tuple[Any, Any] | None = own) -> list[Y]:
            if name not in grouped:
                return [y]
            g, count = grouped[name]
            if own is not None and own[0] == g:
                return [Y(f"{name}-{own[1]}{y.value[len(name):]}", y.mark, y.path, y.key_mark)]
            return [Y(f"{name}-{i}{y.value[len(name):]}", y.mark, y.path, y.key_mark)
                    for i in range(count)]

        inputs = node.get("inputs")
        if inputs is not None and inputs.is_map:
            for spec in inputs.value.values():
                sources = spec.get("sources")
                if sources is None or not sources.is_list:
                    continue
                rewired: list[Y] = []
                for src in sources.value:
                    if not isinstance(src.value, str):
                        rewired.append(src)
                        continue
                    src_node, _ = parse_source(src)
                    rewired.extend(rename(src_node, src))
                sources.value = rewired
        clock = node.get("clock")
        wait_for = clock.get("wait_for") if clock is not None else None
        if wait_for is not None and wait_for.is_list:
            waited: list[Y] = []
            for item in wait_for.value:
                waited.extend(rename(item.value, item) if isinstance(item.value, str) else [item])
            wait_for.value = waited
    return out

