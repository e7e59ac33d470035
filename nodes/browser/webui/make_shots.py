"""``python -m nodes.browser.webui.make_shots [TASK_DIR ...]``: the screenshots a task.md shows.

Renders each task's ground truth with the judge's own renderer (sandboxed, 1920x1080, as MageBench's
screenshots) and writes the window as ``_images/shot_0.png`` after loading and ``_images/shot_<k>.png``
after interaction k (1-based), replacing older ones. Without arguments, every task of the shipped
set. A task.md names the shots it shows; ``tests/test_webui_tasks.py`` checks that they exist.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from nodes.browser.webui.render import Renderer
from nodes.browser.webui.steps import TaskError
from nodes.browser.webui.task import TASKS_DIR, load_task

__all__ = ["make_shots", "shot_names"]


def shot_names(interactions: int) -> list[str]:
    """The screenshot paths of a task with that many interactions, relative to its folder."""
    return [f"_images/shot_{k}.png" for k in range(interactions + 1)]


async def make_shots(renderer: Renderer, folder: Path) -> list[Path]:
    """Write the screenshots of one task; the files written. TaskError when an interaction fails."""
    task = load_task(folder)
    for old in (task.root / "_images").glob("shot_*.png"):
        old.unlink()
    names = shot_names(len(task.interactions))
    (task.root / "_images").mkdir(exist_ok=True)
    page = await renderer.open(task.root)
    try:
        assert page.page is not None
        written = [task.root / names[0]]
        await page.page.screenshot(path=written[0])
        for k, interaction in enumerate(task.interactions, 1):
            if (why := await page.run(interaction)) is not None:
                raise TaskError(f"{task.root / task.steps_file}: interaction {k - 1} fails: {why}")
            written.append(task.root / names[k])
            await page.page.screenshot(path=written[-1])
        return written
    finally:
        await page.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    folders = [Path(a) for a in args] or sorted(p for p in TASKS_DIR.iterdir() if p.is_dir())

    async def run() -> int:
        renderer = Renderer(step_timeout_ms=10_000)
        try:
            for folder in folders:
                written = await make_shots(renderer, folder)
                print(f"{folder.name}: {', '.join(p.name for p in written)}")
        except TaskError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        finally:
            await renderer.close()
        return 0

    return asyncio.run(run())


if __name__ == "__main__":
    sys.exit(main())
