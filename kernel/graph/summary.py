"""How summary.json combines the sections that nodes send with ``Node.summarize``.

A section that one node sends is written as that node sent it. A section of the same name from
several nodes (replicas of an environment, two judges) cannot simply be added up: two judges that
each report a mean of 0.5 did not score 1.0. A number does not say whether it is a mean or a total,
so the merged view keeps only what can be combined without knowing that:

* integers are counts (episodes, requests, tokens) and add up;
* mappings merge key by key by the same rule;
* floats (means, rates, ratios, and float totals such as a cost) are never combined: they are left
  out of the merged view;
* any other value (a name, a flag, a list) is kept where every node that sent the key sent the same
  value, and left out otherwise;
* ``by_node`` holds each node's section exactly as it sent it, so no number is lost: a reader that
  wants an overall mean weights the nodes' means by their counts there.
"""

from __future__ import annotations

from typing import Any, Mapping

BY_NODE = "by_node"  # the key under which a section sent by several nodes keeps each node's copy
_LEFT_OUT = object()  # a value the merged view cannot hold (floats, values the nodes disagree on)


def merge_sections(per_node: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The summary sections of a graph, from each node's ``{section: data}``, by the rule above."""
    senders: dict[str, dict[str, Any]] = {}
    for node_id, sections in per_node.items():
        for name, data in sections.items():
            senders.setdefault(name, {})[node_id] = data
    merged: dict[str, Any] = {}
    for name, by_node in senders.items():
        if len(by_node) == 1:
            merged[name] = next(iter(by_node.values()))
            continue
        combined = _merge(list(by_node.values()))
        merged[name] = {**(combined if isinstance(combined, dict) else {}), BY_NODE: by_node}
    return merged


def _merge(values: list[Any]) -> Any:
    if all(isinstance(v, dict) for v in values):
        out: dict[str, Any] = {}
        for key in dict.fromkeys(k for v in values for k in v):
            value = _merge([v[key] for v in values if key in v])
            if value is not _LEFT_OUT:
                out[key] = value
        return out
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return sum(values)
    if any(isinstance(v, float) for v in values) or any(v != values[0] for v in values[1:]):
        return _LEFT_OUT
    return values[0]
