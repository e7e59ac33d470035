"""Reading one file and, recursively, the files it includes, deep-merged under it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from kernel.launchfile.entries import check_unique, index_entries, merge, normalise_entries
from kernel.launchfile.errors import LaunchError, closest
from kernel.launchfile.finding import find, known_names, yaml_files
from kernel.launchfile.overrides import apply_set, parse_set
from kernel.launchfile.tree import Budget, Y, check_keys, child_path, compose, err
from kernel.launchfile.variables import substitute

_TOP_KEYS = ["name", "description", "bus", "include", "nodes", "run"]
_INCLUDE_KEYS = ["file", "set"]
MAX_READS = 256
"""The most files one load reads, a file included twice counted twice: a few files that each
include the next many times would otherwise be read millions of times."""


@dataclass
class Context:
    environ: Mapping[str, str]
    stack: list[Path] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)  # the values built so far (tree.MAX_VALUES)
    reads: int = 0


def read(path: Path, ctx: Context, via: Y | None) -> Y:
    ctx.reads += 1
    if ctx.reads > MAX_READS and via is not None:
        raise err(via, f"too many includes: a launch file may read at most {MAX_READS} files in all "
                       "(one included several times counts each time)")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if via is not None:
            raise err(via, f"included file '{path}' does not exist") from None
        raise LaunchError("launch file does not exist", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise LaunchError(f"cannot read launch file: {reason}", file=path) from None

    root = compose(text, path, ctx.budget)
    if not root.is_map:
        raise err(root, "expected a mapping at the top level (with 'nodes', 'run', ...)",
                   path="")
    check_keys(root, _TOP_KEYS)
    substitute(root, ctx.environ)
    nodes = root.get("nodes")
    if nodes is not None:
        normalise_entries(nodes)
        check_unique(index_entries(nodes.value))

    include = root.value.pop("include", Y([], root.mark, "include"))
    if not include.is_list:
        raise err(include, "expected a list of included files")
    merged = Y({}, root.mark, "")  # the includes in order, then this file on top
    for item in include.value:
        included = _read_include(item, path, ctx)
        for key in ("name", "description"):  # the including file's own, never inherited
            included.value.pop(key, None)
        merged = merge(merged, included, entries=True)
    return merge(merged, root, entries=True)


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
    target = find(name, parent.parent, ctx.environ)
    if target is None:
        known = [p.name for p in yaml_files(parent.parent)] + known_names(ctx.environ)
        raise err(file_y, f"included file '{name}' not found (looked next to "
                           f"{parent.name} and among bundled launch files)",
                   suggestion=closest(name, known))
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
        _apply_sets(included, set_y, ctx.budget)
    return included


def _apply_sets(included: Y, set_y: Y, budget: Budget) -> None:
    """An include's ``set:`` (a mapping, or a list of KEY=VALUE), each pointing at where it was written."""
    if set_y.is_map:
        for key, value in set_y.value.items():
            apply_set(included, Y(str(key), value.key_mark or value.mark, value.path), value, budget)
    elif set_y.is_list:
        for item in set_y.value:
            if not isinstance(item.value, str):
                raise err(item, "expected KEY=VALUE")
            apply_set(included, *parse_set(item.value, item.mark, item.path, budget), budget)
    else:
        raise err(set_y, "expected a mapping of KEY: VALUE overrides")
