"""Benchmark sections of summary.json as tables, with the papers' numbers beside ours.

Judges put what a benchmark reports into summary.json (``summary["sokoban"]``, ``["kidgym"]``,
``["football"]``...) in different shapes, and new benchmarks will add more, so nothing here knows
a benchmark by name. The shapes are read generically:

* scalars make an overview table (key, value);
* a mapping of mappings is a results table (rows × fields). When its row keys form a grid
  (``CL-L1``, ``CL-L2``, ... ``SE-L3``) it is pivoted like the papers print it: one row per task,
  a column group per level;
* fields or mappings whose name starts with ``paper`` are the published numbers: they are set
  beside ours (shaded), in the same table, never in a separate one;
* a ``paper`` mapping whose keys are methods (``idle``, ``random``, ``human``) becomes a
  methods × headline-metric table, ours as the first row.

The ``Table`` itself is SDK data (kernel.sdk.pages): a pack's page over several runs builds the
same tables without importing the tools.
"""

from __future__ import annotations

import math
from typing import Any

from kernel.sdk.pages import Table

HEADLINE_HINTS = ("score_mean", "success_rate", "mean_reward", "score", "reward", "rate", "mean")


def fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
    return str(value)


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (int, float, str, bool))


def _is_paper(key: str) -> bool:
    return str(key).lower().startswith("paper")


def headline(values: dict[str, Any]) -> str | None:
    """The field a paper's table would print: a mean, a rate or a score, not a count."""
    numeric = [k for k, v in values.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
               and not _is_paper(k)]
    for hint in HEADLINE_HINTS:
        for key in numeric:
            if key == hint or key.endswith(hint):
                return key
    return numeric[-1] if numeric else None


def section_tables(name: str, data: Any) -> list[Table]:
    """Every table of one summary section, in the order a reader wants them."""
    if not isinstance(data, dict):
        return [Table(name, ["value"], [[data]])]
    # An empty mapping or list (nothing refused, no errors) is one line of the overview, not a table
    # with a header and no cells.
    scalars = {k: "none" if v in ({}, []) else v for k, v in data.items() if _scalar(v) or v in ({}, [])}
    mappings = {k: v for k, v in data.items() if isinstance(v, dict) and v}
    lists = {k: v for k, v in data.items() if isinstance(v, list) and v}
    tables: list[Table] = []
    baselines = [k for k, v in mappings.items() if _is_paper(k) and not isinstance(mappings.get(k[5:].lstrip("_")), dict)
                 and not _rows_of_rows(v)]
    shown = {headline(scalars)} if baselines else set()  # a methods table shows it beside the baselines
    overview = [[k, v] for k, v in scalars.items() if k not in shown]
    if overview:
        tables.append(Table(name, ["", "value"], overview))
    used: set[str] = set()
    for key, value in mappings.items():
        if _is_paper(key):
            continue
        partner = next((p for p in (f"paper_{key}", f"paper{key}") if isinstance(mappings.get(p), dict)), None)
        if partner:
            used.add(partner)
        tables.append(_mapping_table(f"{name}: {key}", value, mappings.get(partner) if partner else None))
    for key, value in mappings.items():
        if _is_paper(key) and key not in used:
            tables.append(_baselines(f"{name}: {key}", value, scalars, mappings))
    for key, value in lists.items():
        tables.append(Table(f"{name}: {key}", ["#", "value"], [[i, fmt(v)] for i, v in enumerate(value)]))
    return tables


def _rows_of_rows(value: dict[str, Any]) -> bool:
    """A published table (rows of fields), shown as it is: it has no place for our headline."""
    return bool(value) and all(isinstance(v, dict) for v in value.values())


def _mapping_table(title: str, value: dict[str, Any], paper: dict[str, Any] | None) -> Table:
    if value and all(isinstance(v, dict) for v in value.values()):
        return _pivot(title, value) or _matrix(title, value)
    columns = [str(k) for k in value]
    rows: list[list[Any]] = [["this run", *value.values()]]
    if paper is not None:
        rows.append(["paper", *(paper.get(k) for k in value)])
    return Table(title, ["", *columns], rows, paper_rows={1} if paper is not None else set())


def _fields(rows: dict[str, dict[str, Any]]) -> list[str]:
    seen: dict[str, None] = {}
    for row in rows.values():
        for k, v in row.items():
            if _scalar(v):
                seen[k] = None
    ours = [k for k in seen if not _is_paper(k)]
    return ours + [k for k in seen if _is_paper(k)]


def _matrix(title: str, rows: dict[str, dict[str, Any]]) -> Table:
    fields = _fields(rows)
    table = Table(title, ["", *fields], [[k, *(r.get(f) for f in fields)] for k, r in rows.items()])
    table.paper = {i + 1 for i, f in enumerate(fields) if _is_paper(f)}
    return table


def _pivot(title: str, rows: dict[str, dict[str, Any]]) -> Table | None:
    """``TASK-LEVEL`` rows as a task × level grid of (ours, paper...) cells, if they form one."""
    parts = [str(k).rsplit("-", 1) for k in rows]
    if len(rows) < 4 or any(len(p) != 2 for p in parts):
        return None
    tasks = list(dict.fromkeys(p[0] for p in parts))
    levels = list(dict.fromkeys(p[1] for p in parts))
    if len(levels) < 2 or len(levels) > 8 or len(tasks) < 2 or len(rows) < 0.75 * len(tasks) * len(levels):
        return None
    present = {k: v for row in rows.values() for k, v in row.items() if v is not None}  # a cell may be empty
    ours = headline(present)
    if ours is None:
        return None
    paper_fields = [f for f in _fields(rows) if _is_paper(f)]
    per_level = [ours, *paper_fields]
    columns = [f"{'ours' if f == ours else f.removeprefix('paper_')}" for f in per_level] * len(levels)
    table = Table(title, ["", *columns], [], groups=[("", 1), *((lv, len(per_level)) for lv in levels)])
    table.paper = {1 + i * len(per_level) + j for i in range(len(levels)) for j in range(1, len(per_level))}
    for task in tasks:
        row: list[Any] = [task]
        for level in levels:
            cell = rows.get(f"{task}-{level}", {})
            row.extend(cell.get(f) for f in per_level)
        table.rows.append(row)
    table.note = f"ours = {ours}"
    return table


def _baselines(title: str, paper: dict[str, Any], scalars: dict[str, Any], mappings: dict[str, Any]) -> Table:
    if paper and all(isinstance(v, dict) for v in paper.values()):
        table = _matrix(title, paper)
        table.paper = set(range(1, len(table.columns)))
        return table
    metric = headline(scalars)
    ours = scalars.get(metric) if metric else None
    rows = [["this run", ours], *([f"paper: {k}", v] for k, v in paper.items())]
    return Table(title, ["method", metric or "value"], rows, paper_rows=set(range(1, len(rows))))
