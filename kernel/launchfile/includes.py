"""Reading one file and, recursively, the files it includes, deep-merged under it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kernel.launchfile.entries import check_unique, index_entries, merge, merge_entries, normalise_entries
from kernel.launchfile.errors import LaunchError, closest
from kernel.launchfile.finding import known_names, search, yaml_files
from kernel.launchfile.overrides import apply_set, parse_set
from kernel.launchfile.tree import Y, check_keys, child_path, compose, err
from kernel.launchfile.variables import substitute

_TOP_KEYS = ["name", "description", "bus", "include", "nodes", "run"]
_INCLUDE_KEYS = ["file", "set"]


@dataclass
class Context:
    environ: Mapping[str, str]
    stack: list[Path] = field(default_factory=list)


def read(path: Path, ctx: Context, via: Y | None) -> Y:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if via is not None:
            raise err(via, f"included file '{path}' does not exist") from None
        raise LaunchError("launch file does not exist", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise LaunchError(f"cannot read launch file: {reason}", file=path) from None

    root = compose(text, path)
    if not root.is_map:
        raise err(root, "expected a mapping at the top level (with 'nodes', 'run', ...)",
                   path="")
    check_keys(root, _TOP_KEYS)
    substitute(root, ctx.environ)
    nodes = root.get("nodes")
    if nodes is not None:
        normalise_entries(nodes)
        check_unique(index_entries(nodes.value))

    include = root.value.pop("include", None)
    if include is None:
        return root
    if not include.is_list:
        raise err(include, "expected a list of included files")
    merged_nodes: list[Y] = []
    sections: dict[str, Y] = {}
    for item in include.value:
        included = _read_include(item, path, ctx)
        inc_nodes = included.get("nodes")
        if inc_nodes is not None:
            merged_nodes = merge_entries(merged_nodes, inc_nodes.value)
        for section in ("bus", "run"):
            if section in included.value:
                old = sections.get(section)
                sections[section] = included.value[section] if old is None \
                    else merge(old, included.value[section])
    for section, value in sections.items():
        own = root.value.get(section)
        root.value[section] = value if own is None else merge(value, own)
    own_nodes = nodes.value if nodes is not None else []
    root.value["nodes"] = Y(merge_entries(merged_nodes, own_nodes),
                             nodes.mark if nodes else root.mark,
                             "nodes", nodes.key_mark if nodes else None)
    return root


def _read_include(item: Y, parent: Path, ctx: Context) -> Y:
    if isinstance(item.value, str):
        file_y, set_y = item, None
    elif item.is_map:
        check_keys(item, _INCLUDE_KEYS)
        file_y, set_y = item.get("file"), item.get("set")
        if file_y is None:
            raise err(item, "an include needs 'file'", path=child_path(item.path, "file"))
    else:
        raise err(item, "expected a file name or a mapping with 'file' and 'set'")
    if not isinstance(file_y.value, str) or not file_y.value:
        raise err(file_y, "expected a file name")

    name = file_y.value
    target = parent.parent / name
    if not target.is_file():
        found = search(name, ctx.environ)
        if found is None:
            siblings = [p.name for p in yaml_files(parent.parent)]
            known = siblings + known_names(ctx.environ)
            raise err(file_y, f"included file '{name}' not found (looked next to "
                               f"{parent.name} and among bundled launch files)",
                       suggestion=closest(name, known))
        target = found
    key = target.resolve()
    if key in ctx.stack:
        chain = [p.name for p in ctx.stack[ctx.stack.index(key):]]
        raise err(file_y, "include cycle: " + " -> ".join([*chain, target.name]))

    ctx.stack.append(key)
    try:
        included = read(target, ctx, file_y)
    finally:
        ctx.stack.pop()
    if set_y is not None:
        for set_key, value in _include_sets(set_y):
            apply_set(included, set_key, value)
    return included


def _include_sets(set_y: Y) -> list[tuple[Y, Y]]:
    """An include's ``set:`` as (key, value) pairs that still know their lines."""
    if set_y.is_map:
        pairs = []
        for key, value in set_y.value.items():
            key_y = Y(str(key), value.key_mark or value.mark, value.path)
            pairs.append((key_y, value))
        return pairs
    if set_y.is_list:
        pairs = []
        for item in set_y.value:
            if not isinstance(item.value, str):
                raise err(item, "expected KEY=VALUE")
            pairs.append(parse_set(item.value, item.mark, item.path))
        return pairs
    raise err(set_y, "expected a mapping of KEY: VALUE overrides")

