"""Node entries: short forms normalised, ids indexed (also inside replica groups) and entries of
included files merged field by field."""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import NamedTuple

from kernel.launchfile.limits import MAX_REPLICAS
from kernel.launchfile.tree import ID_PATTERN, ID_RE, Y, check_keys, child_path, describe_value, err

_GROUP_KEYS = ["group", "replicas", "nodes"]
_INPUT_KEYS = ["from", "policy", "size", "rate"]


def is_group(entry: Y) -> bool:
    return entry.is_map and "group" in entry.value and "id" not in entry.value


def normalise_entries(nodes: Y) -> None:
    if not nodes.is_list:
        raise err(nodes, "expected a list of nodes")
    for entry in nodes.value:
        if is_group(entry):
            _normalise_group(entry)
        else:
            _normalise_node(entry)


def _normalise_group(entry: Y) -> None:
    check_keys(entry, _GROUP_KEYS, " in a replica group")
    name = entry.value["group"]
    if not isinstance(name.value, str) or not ID_RE.match(name.value):
        raise err(name, f"invalid group name {name.value!r}; names match {ID_PATTERN}")
    replicas = entry.get("replicas")
    if replicas is not None and (not isinstance(replicas.value, int)
                                 or isinstance(replicas.value, bool) or not 1 <= replicas.value <= MAX_REPLICAS):
        raise err(replicas, f"expected a whole number from 1 to {MAX_REPLICAS}, got {describe_value(replicas.value)}")
    members = entry.get("nodes")
    if members is None or not members.is_list or not members.value:
        raise err(members or entry, "a replica group needs a non-empty 'nodes' list",
                   path=child_path(entry.path, "nodes"))
    for member in members.value:
        if is_group(member):
            raise err(member, "replica groups cannot be nested")
        _normalise_node(member)


def _normalise_node(entry: Y) -> None:
    """Bring short forms into the resolved shape, so merging works field by field."""
    if not entry.is_map:
        raise err(entry, "expected a mapping describing a node (with 'id') "
                          "or a replica group (with 'group')")
    node_id = entry.get("id")
    if node_id is None:
        raise err(entry, "a node needs an 'id'", path=child_path(entry.path, "id"))
    if not isinstance(node_id.value, str) or not ID_RE.match(node_id.value):
        raise err(node_id, f"invalid node id {node_id.value!r}; ids match {ID_PATTERN}")

    cmd = entry.get("cmd")
    if cmd is not None and isinstance(cmd.value, str):
        try:
            words = shlex.split(cmd.value)
        except ValueError as exc:
            raise err(cmd, f"cannot split command: {exc}") from None
        cmd.value = [Y(w, cmd.mark, child_path(cmd.path, i)) for i, w in enumerate(words)]

    restart = entry.get("restart")
    if restart is not None and isinstance(restart.value, str):
        restart.value = {"policy": Y(restart.value, restart.mark, restart.path, restart.mark)}

    inputs = entry.get("inputs")
    if inputs is not None and inputs.is_map:
        for port, spec in inputs.value.items():
            inputs.value[port] = _normalise_input(spec)


def _normalise_input(spec: Y) -> Y:
    if isinstance(spec.value, str) or spec.is_list:  # the short forms: 'node/output', or a list of them
        spec = Y({"from": replace(spec, key_mark=None)}, spec.mark, spec.path, spec.key_mark)
    if not spec.is_map:
        raise err(spec, "expected 'node/output' or a mapping with 'from', 'policy', 'size', 'rate'")
    check_keys(spec, _INPUT_KEYS)
    src = spec.value.pop("from", None)
    if src is None:
        # Allowed here so an including file can change only the policy; the
        # schema reports it if nothing ever supplies the sources.
        return spec
    if not src.is_list:
        src = Y([replace(src, key_mark=None)], src.mark, src.path, src.key_mark)
    spec.value = {"sources": src, **spec.value}
    return spec


class Entry(NamedTuple):
    id: str
    base: str  # the id written in the file; copies of a replica share it
    node: Y


def index_entries(entries: list[Y]) -> list[Entry]:
    """Every node definition, looking inside groups; works before and after expansion."""
    out: list[Entry] = []
    for entry in entries:
        for node in entry.value["nodes"].value if is_group(entry) else [entry]:
            node_id = node.value["id"].value
            base = node_id
            replica = node.get("replica")  # set on each copy by replicas.py
            if replica is not None and isinstance(replica.value, int):
                base = node_id.removesuffix(f"-{replica.value}")
            out.append(Entry(node_id, base, node))
    return out


def check_unique(entries: list[Entry]) -> None:
    seen: dict[str, Y] = {}
    for entry in entries:
        id_y = entry.node.value["id"]
        if entry.id in seen:
            first = seen[entry.id].mark
            where = f" (first defined at line {first.line})" if first.line else ""
            if first.file is not None and first.file != id_y.mark.file:
                where = f" (first defined at {first.file}:{first.line})"
            raise err(id_y, f"duplicate node id '{entry.id}'{where}")
        seen[entry.id] = id_y


def merge(base: Y, over: Y, *, entries: bool = False) -> Y:
    """Deep merge: mappings merge key by key, anything else is replaced. With ``entries`` (two files,
    two replica groups) their 'nodes' lists merge entry by entry (:func:`merge_entries`)."""
    if base.is_map and over.is_map:
        merged = dict(base.value)
        for key, value in over.value.items():
            if key not in merged:
                merged[key] = value
            elif entries and key == "nodes":
                merged[key] = replace(value, value=merge_entries(merged[key].value, value.value))
            else:
                merged[key] = merge(merged[key], value)
        return replace(over, value=merged)
    return over


def _merge_node(base: Y, over: Y) -> Y:
    # Overriding 'uses' with 'cmd' (or back) swaps what runs; keeping both
    # would only produce a confusing "not both" error.
    base = replace(base, value=dict(base.value))
    if "uses" in over.value and "cmd" not in over.value:
        base.value.pop("cmd", None)
    if "cmd" in over.value and "uses" not in over.value:
        base.value.pop("uses", None)
    return merge(base, over)


def merge_entries(base: list[Y], over: list[Y]) -> list[Y]:
    """``over``'s entries merged into ``base``'s: a group into the group of its name (members by id),
    a node into the node of its id, wherever it stands (also inside a group); anything new is appended."""
    result = list(base)
    for entry in over:
        lists = [result, *(e.value["nodes"].value for e in result if is_group(e))]
        found = next(((entries, i) for entries in lists for i, e in enumerate(entries)
                      if _same(e, entry)), None)
        if found is None:
            result.append(entry)
            continue
        entries, i = found
        entries[i] = merge(entries[i], entry, entries=True) if is_group(entry) else _merge_node(entries[i], entry)
    return result


def _same(a: Y, b: Y) -> bool:
    """Both the group of one name, or both the node of one id (groups are never nested)."""
    key = "group" if is_group(b) else "id"
    return is_group(a) == is_group(b) and a.value[key].value == b.value[key].value


def parse_source(src: Y) -> tuple[str, str]:
    text = src.value
    node, sep, output = text.partition("/")
    if not sep or not node or not output or "/" in output or not ID_RE.match(node):
        raise err(src, f"source {text!r} is not of the form 'node/output'")
    return node, output

