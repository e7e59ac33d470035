"""matplotlib figures for the report, each returned as PNG bytes to inline in the page.

Agg only (no display, no GUI toolkit), a fixed small size and dpi, so a report of thousands of
episodes stays a few hundred kB and renders the same on every machine.
"""

from __future__ import annotations

import io
import math
from typing import Any

from kernel.bus.episode_ids import episode_label
from kernel.sdk.pages import Table

MAX_BARS = 40  # beyond this a per-episode bar chart is unreadable: show a histogram
RESULT_HINTS = ("score", "success", "reward", "return", "steps", "agreement", "tokens", "cost", "decisions", "goal")
COLORS = ("#3b6ea8", "#b0b7c3", "#d9a441", "#7a9e6a", "#a8553b", "#6a5a9e")


def _figure(width: float, height: float) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width, height), dpi=110)
    fig.patch.set_facecolor("white")
    return fig


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    out = io.BytesIO()
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out.getvalue()


def numeric_metrics(episodes: list[dict[str, Any]], limit: int = 6) -> list[str]:
    """Metrics worth a plot: numeric in most episodes, results first; constants only when nothing varies."""
    counts: dict[str, list[float]] = {}
    for ep in episodes:
        for k, v in (ep.get("metrics") or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                counts.setdefault(k, []).append(float(v))
    keep = [k for k, vals in counts.items() if len(vals) >= max(1, len(episodes) // 2)]
    keep = [k for k in keep if len(set(counts[k])) > 1] or keep
    results = [k for k in keep if any(hint in k for hint in RESULT_HINTS)]
    return (results or keep)[:limit]  # ids such as level or round only when there is nothing else


def episode_metrics(episodes: list[dict[str, Any]], metrics: list[str]) -> bytes | None:
    """One small panel per metric: bars per episode, or a histogram when there are many."""
    if not episodes or not metrics:
        return None
    cols = min(3, len(metrics))
    rows = math.ceil(len(metrics) / cols)
    fig = _figure(3.6 * cols, 2.4 * rows)
    for i, name in enumerate(metrics):
        ax = fig.add_subplot(rows, cols, i + 1)
        values = [(ep["episode_id"], (ep.get("metrics") or {}).get(name)) for ep in episodes]
        values = [(e, float(v)) for e, v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(values) <= MAX_BARS:
            ax.bar(range(len(values)), [v for _, v in values], color=COLORS[0])
            ax.set_xticks(range(len(values)))
            ax.set_xticklabels([episode_label(e) for e, _ in values], fontsize=7)
            ax.set_xlabel("episode", fontsize=8)
        else:
            ax.hist([v for _, v in values], bins=min(30, max(5, len(values) // 10)), color=COLORS[0])
            ax.set_xlabel(name, fontsize=8)
            ax.set_ylabel("episodes", fontsize=8)
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def comparison(table: Table) -> bytes | None:
    """Grouped bars of a pivoted table: for each task and level, ours beside the papers' numbers."""
    if len(table.groups) < 2 or not table.rows:
        return None
    per = table.groups[1][1]
    names = table.columns[1:1 + per]
    labels: list[str] = []
    series: dict[str, list[float]] = {name: [] for name in names}
    for row in table.rows:
        for g, (level, _) in enumerate(table.groups[1:]):
            labels.append(f"{row[0]} {level}".strip())
            for j, name in enumerate(names):
                value = row[1 + g * per + j]
                series[name].append(float(value) if isinstance(value, (int, float)) else math.nan)
    labels, series = labels[:MAX_BARS * 2], {k: v[:MAX_BARS * 2] for k, v in series.items()}
    fig = _figure(min(14.0, 2.5 + 0.12 * len(labels) * len(series)), 3.0)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        xs = [x + i * width - 0.4 + width / 2 for x in range(len(values))]
        ax.bar(xs, values, width, label=name, color=COLORS[i % len(COLORS)])
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=90, fontsize=6)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_title(table.title, fontsize=9, pad=18)
    ax.legend(fontsize=7, frameon=False, ncols=len(series), loc="lower center", bbox_to_anchor=(0.5, 1.0))
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def methods(table: Table) -> bytes | None:
    """Horizontal bars of a methods table (this run and the papers' baselines)."""
    rows = [(str(r[0]), r[1]) for r in table.rows if isinstance(r[1], (int, float))]
    if len(rows) < 2:
        return None
    fig = _figure(5.5, 0.45 * len(rows) + 0.9)
    ax = fig.add_subplot(1, 1, 1)
    colors = [COLORS[0] if i not in table.paper_rows else COLORS[1] for i in range(len(rows))]
    ax.barh(range(len(rows)), [v for _, v in rows], color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([name for name, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(table.columns[1], fontsize=8)
    ax.set_title(table.title, fontsize=9)
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)


def tokens(per_episode: dict[str, dict[str, int]]) -> bytes | None:
    """Prompt and completion tokens per episode, stacked (from the agents' step records)."""
    if not per_episode or not any(sum(v.values()) for v in per_episode.values()):
        return None
    names = list(per_episode)
    prompt = [per_episode[e].get("prompt_tokens", 0) for e in names]
    completion = [per_episode[e].get("completion_tokens", 0) for e in names]
    fig = _figure(min(12.0, 3.0 + 0.25 * len(names)), 2.6)
    ax = fig.add_subplot(1, 1, 1)
    ax.bar(range(len(names)), prompt, color=COLORS[0], label="prompt")
    ax.bar(range(len(names)), completion, bottom=prompt, color=COLORS[2], label="completion")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([episode_label(e) for e in names], fontsize=7)
    ax.set_xlabel("episode", fontsize=8)
    ax.set_title("model tokens per episode", fontsize=9)
    ax.legend(fontsize=7, frameon=False)
    ax.tick_params(labelsize=7)
    ax.spines[["top", "right"]].set_visible(False)
    return _png(fig)
