"""Scoring a generated page folder against a task: the pages, the interactions and the error counts.

Both folders are opened side by side (one context each). The initial pages are scored, then for
each interaction: it runs on the ground truth first (a failure there is a broken task, TaskError),
the ground-truth elements it left unchanged are excluded, and it runs on the generated page; when
it fails there, that page scores 0 with its full weight and the next interaction still runs, as
in MageBench's evaluator. Reading the pages (``collect_folder``) and scoring them
(``Collected.report``) are apart, so one rendering can be scored under both rule sets (``aes``'s
``rules``): rendering is the expensive part.

Error counts follow MageBench's Fig. 7: ``parse`` (no index.html to render: the model's output had
no page), ``render`` (the page did not load), ``interaction`` (an interaction failed on the
generated page), ``match`` (a scored ground-truth element found no partner; released, also one
dropped for want of an allowed partner), ``attribute`` (a
matched element lost some attribute score). A parse or render error makes AES 0.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from nodes.browser.webui.aes import Element, PageResult, Rules, aes, failed_page, kept_keys, score_page
from nodes.browser.webui.render import PageFolder, Renderer, RenderError
from nodes.browser.webui.steps import TaskError
from nodes.browser.webui.task import Task, load_task

__all__ = ["Collected", "ERROR_KINDS", "Report", "Stage", "collect_folder", "score", "score_folder"]

ERROR_KINDS = ("parse", "render", "interaction", "match", "attribute")


@dataclass(slots=True)
class Report:
    """The AES of one generated page folder, its pages and error counts."""

    task: str
    page: str
    rules: Rules = "released"
    aes: float = 0.0
    pages: list[PageResult] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ERROR_KINDS, 0))
    messages: list[str] = field(default_factory=list)  # why a page or interaction failed
    refused: list[str] = field(default_factory=list)  # requests of the generated page that were not served
    # requests of the ground truth that were not served (an external font offline shifts its boxes)
    truth_refused: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """Human-readable breakdown, AES on the last line."""
        out = [f"task {self.task}  page {self.page}  rules {self.rules}"]
        for p in self.pages:
            extra = f"  [{p.status}: {p.error}]" if p.status != "ok" else ""
            dropped = f"  dropped {p.dropped:3d}" if p.dropped else ""
            out.append(f"  {p.name:<16} {p.percent:6.2f}  weight {p.weight:12.1f}  elements {p.elements:3d}  "
                       f"matched {p.matched:3d}{dropped}{extra}")
        out.append("  errors: " + ", ".join(f"{k} {v}" for k, v in self.errors.items()))
        out += [f"  {m}" for m in self.messages]
        out += [f"  refused {r}" for r in self.refused]
        out += [f"  refused to the ground truth {r}" for r in self.truth_refused]
        out.append(f"AES {self.aes:.2f}")
        return out


async def _open_both(renderer: Renderer, task: Task, page_dir: Path) -> tuple[PageFolder, PageFolder | str]:
    """Both folders opened side by side; the generated one may fail to render (its message), the
    ground truth may not (TaskError)."""
    gt, gen = await asyncio.gather(renderer.open(task.root), renderer.open(page_dir), return_exceptions=True)
    failed = [r for r in (gt, gen) if isinstance(r, BaseException)]
    if isinstance(gt, BaseException) or any(not isinstance(r, RenderError) for r in failed):
        for opened in (gt, gen):
            if isinstance(opened, PageFolder):
                await opened.close()
        if isinstance(gt, RenderError):
            raise TaskError(f"{task.root}: the ground truth does not render: {gt}") from None
        raise next(r for r in failed if not isinstance(r, RenderError))
    assert isinstance(gt, PageFolder)
    return gt, (str(gen) if isinstance(gen, RenderError) else gen)


async def _gt_stage(gt: PageFolder, task: Task, index: int | None) -> tuple[list[Element], dict[int, str]]:
    """The ground truth after interaction ``index`` (None: as loaded); TaskError when it fails there."""
    if index is not None and (why := await gt.run(task.interactions[index])) is not None:
        raise TaskError(f"{task.root / task.steps_file}: interaction {index} fails on the ground truth: {why}")
    try:  # the outerHTML map is only read to exclude what an interaction left unchanged
        return await gt.collect(html=bool(task.interactions))
    except RenderError as err:
        raise TaskError(f"{task.root}: the ground truth cannot be read: {err}") from None


async def _gen_stage(gen: PageFolder, task: Task, index: int | None) -> tuple[list[Element], str | None]:
    """The generated page after interaction ``index``, or why it could not get there."""
    if index is not None and (why := await gen.run(task.interactions[index])) is not None:
        return [], why
    try:
        return (await gen.collect(html=False))[0], None
    except RenderError as err:
        return [], str(err)


@dataclass(slots=True)
class Stage:
    """One static page as both folders showed it: the ground truth's elements and the outerHTML of
    its body before and after the interaction (``before`` None: the initial page), and the
    generated page's elements or why it could not get there."""

    name: str
    gt: list[Element]
    before: dict[int, str] | None
    after: dict[int, str]
    gen: list[Element]
    error: str | None = None


@dataclass(slots=True)
class Collected:
    """Everything the browser read for one (task, page folder) pair; ``report`` turns it into AES
    under either rule set without rendering again."""

    task: str
    page: str
    stages: list[Stage] = field(default_factory=list)
    fatal: tuple[str, str] | None = None  # ("parse" | "render", why): AES 0 outright
    refused: list[str] = field(default_factory=list)
    truth_refused: list[str] = field(default_factory=list)

    def report(self, rules: Rules = "released") -> Report:
        """The AES and error counts of these pages under ``rules`` (see ``aes``'s module notes)."""
        report = Report(self.task, self.page, rules=rules, refused=list(self.refused),
                        truth_refused=list(self.truth_refused))
        if self.fatal is not None:
            report.errors[self.fatal[0]] = 1
            report.messages.append(self.fatal[1])
            return report
        for stage in self.stages:
            excluded = kept_keys(stage.before, stage.after, rules) if stage.before is not None else frozenset()
            if stage.error is None:
                report.pages.append(score_page(stage.name, stage.gt, stage.gen, excluded, rules))
            else:
                report.errors["interaction"] += 1
                report.messages.append(f"{stage.name}: {stage.error}")
                report.pages.append(failed_page(stage.name, stage.gt, excluded, "interaction", stage.error))
        for p in report.pages:
            report.errors["match"] += (p.unmatched + p.dropped) if p.status == "ok" else 0
            report.errors["attribute"] += p.attribute_losses
        report.aes = aes(report.pages)
        return report


async def collect_folder(renderer: Renderer, task: Task, page_dir: Path) -> Collected:
    """Drive both folders through the task's interactions and keep what they showed (see the module
    notes). The two pages are driven concurrently, each in its own context: they share nothing but
    the browser."""
    collected = Collected(task.name, str(page_dir))
    if not (page_dir / "index.html").is_file():
        collected.fatal = ("parse", f"{page_dir / 'index.html'}: no page to render")
        return collected
    gt, gen = await _open_both(renderer, task, page_dir)
    try:
        if isinstance(gen, str):
            collected.fatal = ("render", gen)
            return collected
        before: dict[int, str] | None = None
        for index in (None, *range(len(task.interactions))):
            (gt_elements, after), (gen_elements, why) = await asyncio.gather(
                _gt_stage(gt, task, index), _gen_stage(gen, task, index))
            name = "initial" if index is None else f"interaction {index}"
            if why is not None and index is None:  # the initial page could not be read: a render error
                collected.fatal = ("render", why)
                collected.stages.clear()
                return collected
            collected.stages.append(Stage(name, gt_elements, before, after, gen_elements, why))
            before = after
    finally:
        collected.truth_refused = list(gt.refused)
        closing = [gt.close()]
        if isinstance(gen, PageFolder):
            collected.refused = list(gen.refused)
            closing.append(gen.close())
        await asyncio.gather(*closing)  # both pages are wiped for reuse at once
    return collected


async def score_folder(renderer: Renderer, task: Task, page_dir: Path, rules: Rules = "released") -> Report:
    """AES of the page in ``page_dir`` against ``task`` under ``rules``."""
    return (await collect_folder(renderer, task, page_dir)).report(rules)


def score(task_dir: str | Path, page_dir: str | Path, executable: str = "/usr/bin/chromium",
          rules: Rules = "released") -> Report:
    """Blocking form for scripts and the CLI: load the task, start a browser, score, stop it."""
    task = load_task(task_dir)

    async def run() -> Report:
        renderer = Renderer(executable)
        try:
            return await score_folder(renderer, task, Path(page_dir), rules)
        finally:
            await renderer.close()

    return asyncio.run(run())
