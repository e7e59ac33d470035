"""The live progress line of ``launch run``: episodes done and failed, the running metric, tokens
and cost, redrawn in place on a terminal (and silent elsewhere, so logs stay readable)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

if TYPE_CHECKING:
    from kernel.graph.core import Kernel


def status_line(kernel: Kernel, metric: str | None) -> str:
    """What the progress line says after the bar (also used by tests)."""
    counts = kernel.book.counts()
    means = kernel.book.summary_metrics()
    key = metric or next((k for k in ("score", "success", "reward") if k in means), None)
    parts = [f"failed {counts['failed']}"] + ([f"unscored {counts['unscored']}"] if counts.get("unscored") else [])
    if key and key in means:
        parts.append(f"{key} {means[key]:.3g}")
    model: dict[str, Any] = kernel.summary_sections().get("model") or {}
    if model:
        tokens = int(model.get("prompt_tokens", 0)) + int(model.get("completion_tokens", 0))
        parts.append(f"tokens {tokens:,}")
        parts.append(f"${float(model.get('cost_usd', 0.0)):.4f}")
    return "  ".join(parts)


async def show(kernel: Kernel, console: Console, metric: str | None, every_s: float = 0.5) -> None:
    """Redraw until cancelled; a no-op when the console is not a terminal.

    rich redraws from its own thread, holding the console's lock that this loop's prints take too;
    the run's console writes to kernel.bus.outlet's queue, so the lock is held only while rendering and
    a stalled terminal blocks neither thread."""
    if not console.is_terminal:
        return
    progress = Progress(TextColumn("[bold]episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.fields[status]}"), console=console, transient=False)
    total = kernel.book.total
    task = progress.add_task("run", total=total, status="")
    with progress:
        try:
            while True:
                done = kernel.book.ended_count
                progress.update(task, completed=done, status=status_line(kernel, metric))
                await asyncio.sleep(every_s)
        finally:
            progress.update(task, completed=kernel.book.ended_count, status=status_line(kernel, metric))
