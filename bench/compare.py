"""Compare two bench JSON files (from bench/run_all.py or any single bench's --json) key by key.

Both objects are flattened to dotted paths (``benches.grid.step_vs_raw_rtt_ratio``; list items by
index, ``benches.scale.curve.1.speedup``). For every path whose value is a number in both files the
two values and B/A are printed, and the change is judged by the key's name:

* higher is better: a name containing ``speedup``, ending in ``_per_s`` (a rate), or a name or
  enclosing key that is or ends with ``fps`` (``logic_fps.pong.no_draw``);
* lower is better: a name ending in ``_ratio``, ``_ms``, ``_us`` or ``_s``, or with ``ms``/``us``/``s``
  just before ``_per_`` (a cost per unit: ``bus_cpu_ms_per_step``), or starting with ``growth_``
  (memory a soak run gained: ``growth_kb_per_1k_episodes``);
* anything else (counts, load averages, settings), and whatever lies under a key starting with
  ``target`` (goals, not measurements), is shown but never judged.

The higher-is-better rules are checked first, since ``steps_per_s`` also ends in ``_s``. With a
threshold t (default 0.10), a lower-is-better value is ``worse`` when B > A * (1 + t) and ``better``
when B < A * (1 - t); a higher-is-better one is ``worse`` when B < A * (1 - t) and ``better`` when
B > A * (1 + t). A value of 0 in A has no ratio and is not judged.

Short runs on a shared machine move by more than 10 % from one run to the next on their own: read
a flag as "look again with the bench's longer settings", not as a verdict.

    python bench/compare.py before.json after.json [--threshold 0.1] [--json] [--fail-on-worse]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator, Literal

Direction = Literal["higher", "lower"] | None


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value with its dotted path, so nested bench objects line up by name."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from flatten(item, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from flatten(item, f"{prefix}.{index}" if prefix else str(index))
    else:
        yield prefix, value


def is_number(value: Any) -> bool:
    """Numbers only: JSON booleans are ints to Python but say nothing about speed."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _name_direction(name: str) -> Direction:
    words = name.split("_")
    if "speedup" in words or name.startswith("speedup") or name.endswith("_per_s"):
        return "higher"
    if name.endswith("fps"):
        return "higher"
    if words[-1] in {"ratio", "ms", "us", "s"} and len(words) > 1:
        return "lower"
    if words[0] == "growth" and len(words) > 1:
        return "lower"
    if any(words[i] in {"ms", "us", "s"} and words[i + 1] == "per" for i in range(len(words) - 1)):
        return "lower"
    return None


def direction(path: str) -> Direction:
    """Which way is better for this dotted path (see the module docstring): the leaf's own name
    decides; when it says nothing, the nearest enclosing key that does (``logic_fps.pong.no_draw``)."""
    parts = path.split(".")
    if any(part.startswith("target") for part in parts):
        return None
    for part in reversed(parts):
        if part.isdigit():
            continue
        found = _name_direction(part)
        if found is not None:
            return found
    return None


def judge(a: float, b: float, way: Direction, threshold: float) -> str:
    """'worse', 'better' or '' for a change from a to b, by the rule in the module docstring."""
    if way is None or a == 0:
        return ""
    grew, shrank = b > a * (1 + threshold), b < a * (1 - threshold)
    if way == "lower":
        return "worse" if grew else "better" if shrank else ""
    return "worse" if shrank else "better" if grew else ""


def compare(a: dict[str, Any], b: dict[str, Any], threshold: float = 0.10) -> list[dict[str, Any]]:
    """One row per numeric path present in both objects, in A's order."""
    right = {path: value for path, value in flatten(b) if is_number(value)}
    rows = []
    for path, value in flatten(a):
        if not is_number(value) or path not in right:
            continue
        other = right[path]
        way = direction(path)
        rows.append({"key": path, "a": value, "b": other, "ratio": round(other / value, 3) if value else None,
                     "better": way, "flag": judge(value, other, way, threshold)})
    return rows


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.6g}" if isinstance(value, float) else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("a", type=Path, help="the earlier JSON (before)")
    parser.add_argument("b", type=Path, help="the later JSON (after)")
    parser.add_argument("--threshold", type=float, default=0.10, help="relative change that flags (default 0.10)")
    parser.add_argument("--json", action="store_true", help="print the rows as one JSON object")
    parser.add_argument("--fail-on-worse", action="store_true", help="exit 1 when any key got worse")
    args = parser.parse_args()
    rows = compare(json.loads(args.a.read_text()), json.loads(args.b.read_text()), args.threshold)
    worse = [r["key"] for r in rows if r["flag"] == "worse"]
    if args.json:
        print(json.dumps({"threshold": args.threshold, "rows": rows, "worse": worse,
                          "better": [r["key"] for r in rows if r["flag"] == "better"]}))
    else:
        width = max((len(r["key"]) for r in rows), default=10)
        print(f"{'key':{width}}  {'A':>12} {'B':>12} {'B/A':>8}  better  flag")
        for r in rows:
            print(f"{r['key']:{width}}  {_fmt(r['a']):>12} {_fmt(r['b']):>12} {_fmt(r['ratio']):>8}  "
                  f"{r['better'] or '':6}  {r['flag'].upper() if r['flag'] == 'worse' else r['flag']}")
        print(f"{len(worse)} worse by more than {args.threshold:.0%}" + (f": {', '.join(worse)}" if worse else ""))
    return 1 if worse and args.fail_on_worse else 0


if __name__ == "__main__":
    sys.exit(main())
