"""YAML with positions: every value keeps the file, line and column it was written at, so that
errors found after includes, replicas and ``--set`` still point at the right place."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from kernel.launchfile.errors import LaunchError, closest

ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
ID_RE = re.compile(ID_PATTERN)


class Mark(NamedTuple):
    file: Path | None
    line: int | None
    column: int | None


NOWHERE = Mark(None, None, None)


@dataclass
class Y:
    """A YAML value plus where it was written.

    Mappings hold ``dict[key, Y]`` and sequences ``list[Y]``; each child
    also knows where its key was (for "unknown key" errors) and its dotted
    path *in the file it came from*, which is what the user can find.
    """

    value: Any
    mark: Mark
    path: str
    key_mark: Mark | None = None
    plain: bool = False  # an unquoted scalar: '${N}' may become a number

    @property
    def is_map(self) -> bool:
        return isinstance(self.value, dict)

    @property
    def is_list(self) -> bool:
        return isinstance(self.value, list)

    def get(self, key: str) -> Y | None:
        return self.value.get(key) if self.is_map else None


def err(y: Y, message: str, *, key: bool = False, path: str | None = None,
        allowed: Sequence[str] | None = None, suggestion: str | None = None) -> LaunchError:
    """A LaunchError at ``y`` (at its key with ``key``), named by its path in the file unless ``path`` is given."""
    mark = (y.key_mark or y.mark) if key else y.mark
    return LaunchError(message, file=mark.file, line=mark.line, column=mark.column,
                       key=y.path if path is None else path, allowed=allowed, suggestion=suggestion)


def check_keys(y: Y, allowed: list[str], where: str = "") -> None:
    """A mapping's keys are among ``allowed``; an unknown one is reported at the key, with its closest spelling."""
    for key, child in y.value.items():
        if key not in allowed:
            raise err(child, f"unknown key '{key}'{where}", key=True, allowed=allowed,
                      suggestion=closest(key, allowed))


def child_path(parent: str, key: Any) -> str:
    if isinstance(key, int) and not isinstance(key, bool):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _mark_of(mark: yaml.Mark | None, file: Path) -> Mark:
    if mark is None:
        return Mark(file, None, None)
    return Mark(file, mark.line + 1, mark.column + 1)


MAX_VALUES = 200_000
"""The most values (mappings, lists and scalars) one launch file may come to, counted as the loader
builds it: its aliases expanded, its includes, replica copies and ``--set`` copies added. A file
written by hand holds a few hundred; the bound stops a few lines of aliases (a "billion laughs")
from taking minutes and gigabytes to expand."""


@dataclass
class Budget:
    """The values one load has built so far, against :data:`MAX_VALUES`."""

    limit: int = MAX_VALUES
    used: int = 0

    @property
    def left(self) -> int:
        return self.limit - self.used

    def spend(self, count: int, at: Y, why: str) -> None:
        """Count ``count`` more values (``why`` says where they come from), or refuse at ``at``."""
        if count > self.left:
            raise err(at, f"{why} would bring the file to more than {self.limit:,} values, the most a launch "
                          "file may hold (aliases expanded; includes, replica copies and --set copies counted)")
        self.used += count


class TooBig(Exception):
    """A YAML node that expands to more values than are left (``node``), or that contains itself."""

    def __init__(self, node: yaml.Node, recursive: bool) -> None:
        super().__init__()
        self.node, self.recursive = node, recursive


def expanded_size(node: yaml.Node, left: int) -> int:
    """How many values ``node`` becomes once every alias in it is expanded, computed on the composed
    graph (each anchor's size once, so a bomb costs no more than its text); a TooBig at the innermost
    node that exceeds ``left``, or at one that contains itself through an alias."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(n: yaml.Node) -> int:
        key = id(n)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise TooBig(n, recursive=True)
        active.add(key)
        total = 1
        if isinstance(n, yaml.MappingNode):
            children = [c for pair in n.value for c in pair]  # a '<<' merge counts what it merges in
        else:
            children = n.value if isinstance(n, yaml.SequenceNode) else []
        for child in children:
            total += size(child)
            if total > left:
                raise TooBig(n, recursive=False)
        active.discard(key)
        sizes[key] = total
        return total

    return size(node)


def compose(text: str, file: Path, budget: Budget | None = None) -> Y:
    budget = Budget() if budget is None else budget
    loader = None
    try:
        loader = yaml.SafeLoader(text)
        node = loader.get_single_node()
        if node is None:
            raise LaunchError("the file is empty; expected a mapping with 'nodes'", file=file)
        try:
            count = expanded_size(node, budget.left)
        except TooBig as big:
            raise _too_big(big, Y(None, _mark_of(big.node.start_mark, file), ""), budget) from None
        tree = _from_node(loader, node, file, "", None)
        budget.used += count
        return tree
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (a NUL byte): where it is
        raise _bad_character(exc, text, file) from None
    except yaml.MarkedYAMLError as exc:
        mark = _mark_of(exc.problem_mark or exc.context_mark, file)
        raise err(Y(None, mark, ""), f"YAML syntax error: {exc.problem or exc.context or 'invalid YAML'}") from None
    except yaml.YAMLError as exc:
        raise LaunchError(f"YAML error: {exc}", file=file) from None
    finally:
        if loader is not None:
            loader.dispose()


def _too_big(big: TooBig, at: Y, budget: Budget) -> LaunchError:
    if big.recursive:
        return err(at, "a recursive alias: this value contains itself (an alias inside its own anchor)")
    return err(at, f"this value expands through its aliases past the {budget.limit:,} values a launch file may "
                   "hold (aliases expanded; includes, replica copies and --set copies counted)")


def _bad_character(exc: yaml.reader.ReaderError, text: str, file: Path) -> LaunchError:
    position = max(0, min(exc.position, len(text)))
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    what = "a NUL byte" if code == 0 else f"the control character #x{code:04x}"
    return LaunchError(f"{what} is not allowed in a launch file (YAML takes printable text only)",
                       file=file, line=line, column=column)


def load_value(text: str, at: Y, budget: Budget) -> Any:
    """One YAML value (a ``--set``'s), within ``budget``: refused at ``at`` when its aliases would
    expand past what is left, so a value on the command line or in an include's ``set:`` is no bomb."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            budget.spend(expanded_size(node, budget.left), at, "this value")
        except TooBig as big:
            raise _too_big(big, at, budget) from None
        return loader.construct_document(node)
    finally:
        loader.dispose()


def count(y: Y) -> int:
    """The values in a tree (itself included)."""
    return sum(1 for _ in walk(y))


def _from_node(loader: yaml.SafeLoader, node: yaml.Node, file: Path, path: str,
               key_mark: Mark | None) -> Y:
    mark = _mark_of(node.start_mark, file)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # resolves '<<' merge keys
        items: dict[Any, Y] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            kmark = _mark_of(key_node.start_mark, file)
            try:
                duplicate = key in items
            except TypeError:
                raise err(Y(key, kmark, path), "a mapping key must be a plain value") from None
            if duplicate:
                raise err(Y(key, kmark, child_path(path, key)), f"duplicate key '{key}'")
            items[key] = _from_node(loader, value_node, file, child_path(path, key), kmark)
        return Y(items, mark, path, key_mark)
    if isinstance(node, yaml.SequenceNode):
        return Y([_from_node(loader, child, file, child_path(path, i), None)
                   for i, child in enumerate(node.value)], mark, path, key_mark)
    value = loader.construct_object(node, deep=True)  # a scalar (the only other kind of node)
    return Y(value, mark, path, key_mark, node.style is None)  # plain: written without quotes


def wrap(value: Any, mark: Mark, path: str, key_mark: Mark | None = None) -> Y:
    """Turn a plain value (from --set or code) into a tree that points at ``mark``."""
    if isinstance(value, dict):
        return Y({k: wrap(v, mark, child_path(path, k), mark) for k, v in value.items()},
                  mark, path, key_mark)
    if isinstance(value, list):
        return Y([wrap(v, mark, child_path(path, i)) for i, v in enumerate(value)],
                  mark, path, key_mark)
    return Y(value, mark, path, key_mark)


def plain(y: Y) -> Any:
    if y.is_map:
        return {k: plain(v) for k, v in y.value.items()}
    if y.is_list:
        return [plain(v) for v in y.value]
    return y.value


def walk(y: Y) -> Iterable[Y]:
    yield y
    for child in y.value.values() if y.is_map else y.value if y.is_list else ():
        yield from walk(child)


_KINDS = {dict: "a mapping", list: "a list", type(None): "null"}  # as an error names a value of no scalar kind


def describe_value(value: Any) -> str:
    return _KINDS.get(type(value)) or repr(value)
