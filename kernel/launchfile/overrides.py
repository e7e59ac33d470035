"""Overrides: ``--set KEY=VALUE`` on the command line and ``set:`` under an include."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import yaml

from kernel.launchfile.entries import index_entries
from kernel.launchfile.errors import closest
from kernel.launchfile.tree import NOWHERE, Budget, Mark, Y, child_path, count, err, load_value, wrap


def apply_sets(root: Y, sets: Sequence[str], budget: Budget | None = None) -> None:
    """The command line's ``--set`` overrides, in order (a later one wins)."""
    budget = Budget() if budget is None else budget
    for text in sets:
        apply_set(root, *parse_set(text, budget=budget), budget)


def override_episodes(root: Y, episodes: int | None) -> None:
    """``--episodes N``: the same as ``--set run.episodes=N``, applied after every ``--set``."""
    if episodes is not None:
        apply_set(root, Y("run.episodes", NOWHERE, "--episodes"), Y(episodes, NOWHERE, "--episodes"))


def parse_set(text: str, mark: Mark = NOWHERE, path: str | None = None, budget: Budget | None = None) -> tuple[Y, Y]:
    key, sep, raw = text.partition("=")
    key = key.strip()
    label = path if path is not None else f"--set {key}"
    if not sep or not key:
        raise err(Y(text, mark, label), f"expected KEY=VALUE, got {text!r}")
    try:
        value = load_value(raw, Y(text, mark, label), Budget() if budget is None else budget)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc)
        raise err(Y(text, mark, label), f"cannot parse value {raw!r}: {problem}") from None
    return Y(key, mark, label), wrap(value, mark, label)


def apply_set(root: Y, key_y: Y, value: Y, budget: Budget | None = None) -> None:
    key: str = key_y.value
    parts = key.split(".")
    if len(parts) < 2 or not all(parts):
        raise err(key_y, f"cannot set {key!r}; expected <node>.<param>, run.<field> "
                          "or bus.<field>")
    head, rest = parts[0], parts[1:]
    if head in ("run", "bus"):
        _set_in(root, parts, value, key_y)
        return
    nodes = root.get("nodes")
    entries = index_entries(nodes.value) if nodes is not None else []  # a list: normalise_entries checked
    targets = [e.node for e in entries if e.id == head] or \
              [e.node for e in entries if e.base == head]
    if not targets:
        heads = list(dict.fromkeys([*(e.id for e in entries), *(e.base for e in entries), "run", "bus"]))
        raise err(key_y, f"unknown node '{head}'", allowed=heads, suggestion=closest(head, heads))
    budget = Budget() if budget is None else budget
    size = count(value)
    for node in targets:  # a copy each (every replica of a node is one): counted before it is made
        budget.spend(size, key_y, f"setting {key!r} on node {node.value['id'].value!r}")
        _set_in(node, ["params", *rest], copy.deepcopy(value), key_y)


def _set_in(target: Y, parts: list[str], value: Y, key_y: Y) -> None:
    """Put ``value`` at ``parts`` under ``target``, making the mappings on the way (they point at the key)."""
    if not target.is_map:
        raise err(key_y, f"cannot set {key_y.value!r}: {target.path or 'value'} "
                          "is not a mapping")
    part, *rest = parts
    if not rest:
        value.key_mark = key_y.mark
        target.value[part] = value
        return
    child = target.value.setdefault(part, Y({}, key_y.mark, child_path(target.path, part), key_y.mark))
    _set_in(child, rest, value, key_y)
