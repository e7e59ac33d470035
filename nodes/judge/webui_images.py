"""The pictures ``judge.webui`` keeps of an episode: the target's window beside the generated page's,
as loaded and after each interaction, for the report (``Node.attach_images``).

The targets are the task's own screenshots (``_images/shot_<k>.png``, written by ``make_shots``
with this renderer and viewport), so only the generated page is rendered; a task without them
(a user's folder) has its ground truth rendered the same way. The scorer keeps no pictures, so the
generated page is loaded once more here: cheaper than a second scorer, and a page that behaves
differently the second time shows it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from nodes.browser.webui.aes import PageResult
from nodes.browser.webui.make_shots import shot_names
from nodes.browser.webui.render import Renderer, RenderError
from nodes.browser.webui.steps import Step
from nodes.browser.webui.task import Task

__all__ = ["Capture", "captures", "has_shots", "rounds_row", "rows", "target_shots"]

Capture = bytes | str  # a PNG, or why there is none


async def captures(renderer: Renderer, folder: Path, interactions: Sequence[Sequence[Step]]) -> list[Capture]:
    """The window of ``folder``'s page as loaded, then after each interaction; from the first that
    fails on, the reason instead of a picture."""
    if not (folder / "index.html").is_file():
        return ["no page: the round ended without an index.html"] * (1 + len(interactions))
    try:
        page = await renderer.open(folder)
    except RenderError as err:
        return [f"did not render: {err}"] * (1 + len(interactions))
    out: list[Capture] = []
    try:
        assert page.page is not None
        out.append(await page.page.screenshot(type="png"))
        for k, interaction in enumerate(interactions):
            if (why := await page.run(interaction)) is not None:
                out += [f"interaction {k} failed: {why}"] * (len(interactions) - k)
                break
            out.append(await page.page.screenshot(type="png"))
    finally:
        await page.close()
    return out


def _shot_files(task: Task, stages: int) -> list[Path]:
    return [task.root / name for name in shot_names(len(task.interactions))[:stages]]


def has_shots(task: Task, stages: int) -> bool:
    """Whether the task ships the screenshots of its first ``stages`` stages."""
    return all(f.is_file() for f in _shot_files(task, stages))


async def target_shots(renderer: Renderer, task: Task, stages: int) -> list[Capture]:
    """The task's shipped screenshots of the first ``stages`` stages, rendered when one is missing."""
    files = _shot_files(task, stages)
    if has_shots(task, stages):
        return await asyncio.to_thread(lambda: [f.read_bytes() for f in files])
    return (await captures(renderer, task.root, task.interactions[:stages - 1]))[:stages]


def rows(targets: list[Capture], generated: list[Capture], pages: list[PageResult],
         round_label: str) -> list[tuple[str, list[tuple[str, bytes]]]]:
    """(caption, pictures) per stage: the target beside the generated page, the stage's score in the
    caption; where a side has no picture, the caption says why."""
    out: list[tuple[str, list[tuple[str, bytes]]]] = []
    for k, target in enumerate(targets):
        stage = "as loaded" if k == 0 else f"after interaction {k - 1}"
        notes = []
        if k < len(pages):
            notes.append(f"stage score {pages[k].percent:.1f}/100")
        pictures: list[tuple[str, bytes]] = []
        if isinstance(target, bytes):
            pictures.append(("target (ground truth)", target))
        else:
            notes.append(f"target {target}")
        mine = generated[k] if k < len(generated) else "not captured"
        if isinstance(mine, bytes):
            pictures.append((f"generated ({round_label})", mine))
        else:
            notes.append(f"generated page {mine}"[:300])
        if pictures:
            out.append((f"{stage}: " + "; ".join(notes) if notes else stage, pictures))
    return out


def rounds_row(target: Capture, shots: list[Capture], aes: list[float]) -> tuple[str, list[tuple[str, bytes]]]:
    """(caption, pictures) of an online episode: the target, then every round's page as loaded with
    its AES; a round without a picture is named in the caption with the reason."""
    pictures: list[tuple[str, bytes]] = [("target (ground truth)", target)] if isinstance(target, bytes) else []
    missing = []
    for k, (shot, score) in enumerate(zip(shots, aes)):
        if isinstance(shot, bytes):
            pictures.append((f"round {k}: AES {score:.1f}", shot))
        else:
            missing.append(f"round {k} (AES {score:.1f}): {shot}"[:200])
    caption = "every round as loaded" + ("; " + "; ".join(missing) if missing else "")
    return caption, pictures
