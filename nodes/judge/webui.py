"""MageBench WebUI's judge node (``judge.webui``): the AES of each finished episode's page folders.

It reads ``webui.env``'s step stream; on an episode's last step it scores every round's page
folder (``info.pages``; a round the episode never reached, after a stop or the time limit, is a
round without a page) against the task (``info.task``) with the pack's AES scorer
(``nodes.browser.webui.scoring``) in its own sandboxed Chromium, under the ``rules`` param
(``released`` by default, so the numbers sit beside MageBench's Table 1; ``corrected`` fixes the
released evaluator's accidents, see ``nodes/browser/webui/aes.py``), and ends the episode with:

* ``aes`` (0-100): the last round's (online: after the last revision); online also ``aes_round_k``
  for every round k (0 is the global reply), since MageBench writes one evaluation per iteration;
* ``errors_parse``, ``errors_render``, ``errors_interaction``, ``errors_match``,
  ``errors_attribute``: the last round's error counts in MageBench's Fig. 7 classes (a round that
  ended without a page is a parse error and scores 0);
* ``refused``: what the last page asked for and was not served (outside URLs, missing files).

There is no ``success``: WebUI has no pass mark, and inventing one would say more than the
benchmark does. A broken page never crashes the judge: the scorer turns it into its error class.
A task that cannot be scored (its ground truth fails) ends the episode ``unscored`` with the
reason, never a silent 0. summary.json's ``webui`` section has our mean AES beside MageBench's
Table 1 WebUI rows (``webui_paper``).

Before ending an episode it keeps, for the report, the target's window beside the last round's
page, as loaded and after each interaction, with each stage's score (``images``; ``webui_images``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.node import NodeParams
from kernel.sdk.steps import StepRecord
from nodes.browser.webui.render import Renderer
from nodes.browser.webui.scoring import ERROR_KINDS, Report, score_folder
from nodes.browser.webui.steps import TaskError
from nodes.browser.webui.task import Task, load_task
from nodes.judge import webui_images, webui_paper

__all__ = ["WebUIJudge", "WebUIJudgeParams"]


class WebUIJudgeParams(NodeParams):
    chromium: str = Field("/usr/bin/chromium", description="the Chromium binary the pages are scored in")
    settle_timeout_s: float = Field(5.0, gt=0, description="longest wait for a page to settle (then it is "
                                    "scored as it is, or as a render error when it never answers)")
    rules: Literal["released", "corrected"] = Field(
        "released", description="released: AES exactly as MageBench's released evaluator computes it, accidents "
        "included, comparable with its Table 1; corrected: those accidents fixed (nodes/browser/webui/aes.py)")
    images: Literal["interactions", "initial", "off"] = Field(
        "interactions", description="pictures kept for the report (RUN/media/): the target's window beside the "
        "last round's page as loaded and after each interaction, or as loaded only; off: none (the page is "
        "not rendered again)")
    images_timeout_s: float = Field(20.0, gt=0, description="longest time spent on one episode's pictures (a page "
                                    "that hangs costs its pictures, never the episode)")


class WebUIJudge(JudgeNode):
    """Scores each WebUI episode's pages with AES and ends it with the metrics above."""

    Params = WebUIJudgeParams
    params: WebUIJudgeParams
    section = "webui"

    async def setup(self) -> None:
        self.renderer = Renderer(self.params.chromium, self.params.settle_timeout_s)
        self.tasks: dict[str, Task] = {}
        self.targets: dict[tuple[str, int], list[webui_images.Capture]] = {}  # the targets of tasks without shots
        self.scores: dict[str, list[float]] = {}  # mode -> the episodes' AES
        self.errors = dict.fromkeys(ERROR_KINDS, 0)
        await super().setup()

    async def teardown(self) -> None:
        if hasattr(self, "renderer"):
            await self.renderer.close()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info = records[-1]["info"]
        if not info.get("task") or not isinstance(info.get("pages"), list):
            raise Unscored("the step has no task and pages: is its env webui.env?")
        try:
            task = self._task(str(info["task"]))
            pages = list(info["pages"])
            reports = [await self._score(task, page) for page in pages]
            why = f"the episode ended before this round ({info.get('stopped') or 'time limit'})"
            reports += [_no_page(task.name, why) for _ in range(int(info.get("rounds", 1)) - len(reports))]
        except TaskError as exc:
            raise Unscored(str(exc)) from None
        except Exception as exc:  # noqa: BLE001 - the browser itself failed: on record, never a crash or a 0
            raise Unscored(f"scoring failed: {type(exc).__name__}: {exc}") from None
        if self.params.images != "off":
            await self._keep_images(episode.id, task, pages, reports)
        return self._counted(episode.id, str(info.get("mode", "global")), reports,
                             {"task": task.name, **episode.labels})

    def _task(self, root: str) -> Task:
        if root not in self.tasks:
            self.tasks[root] = load_task(root)
        return self.tasks[root]

    async def _score(self, task: Task, page: str | None) -> Report:
        if page is None:
            return _no_page(task.name, "the round ended without a page (its replies were invalid)")
        return await score_folder(self.renderer, task, Path(page), self.params.rules)

    async def _keep_images(self, episode: str, task: Task, pages: list[str | None], reports: list[Report]) -> None:
        """The pictures of the scored pages for the report; a failure here costs the pictures only."""
        try:
            timeout = self.params.images_timeout_s * (2 if len(reports) > 1 else 1)  # online: the rounds too
            await asyncio.wait_for(self._pictures(episode, task, pages, reports), timeout)
        except Exception as exc:  # noqa: BLE001 - the score stands without its pictures
            self.log.warning("could not keep the pictures", episode=episode, error=f"{type(exc).__name__}: {exc}")

    async def _pictures(self, episode: str, task: Task, pages: list[str | None], reports: list[Report]) -> None:
        page = pages[-1] if len(pages) == len(reports) else None
        steps = task.interactions if self.params.images == "interactions" else ()
        key = (str(task.root), len(steps))
        targets = self.targets.get(key) or await webui_images.target_shots(self.renderer, task, 1 + len(steps))
        if not webui_images.has_shots(task, 1 + len(steps)):  # rendered: once per task, not per episode
            self.targets[key] = targets
        generated = (await webui_images.captures(self.renderer, Path(page), steps) if page is not None
                     else ["none: " + "; ".join(reports[-1].messages[:1])] * (1 + len(steps)))
        label = f"round {len(reports) - 1}" if len(reports) > 1 else "the reply"
        for k, (caption, pictures) in enumerate(webui_images.rows(targets, generated, reports[-1].pages, label)):
            await self.attach_images(episode, pictures, caption=caption, row=f"stage_{k}",
                                     metrics=("aes", "task", "mode"))
        if len(reports) > 1:  # online: how the page evolved, every round as loaded beside the target
            shots = [(await webui_images.captures(self.renderer, Path(p), ()))[0] if p is not None else "no page"
                     for p in pages] + ["the episode ended before this round"] * (len(reports) - len(pages))
            caption, pictures = webui_images.rounds_row(targets[0], shots, [r.aes for r in reports])
            await self.attach_images(episode, pictures, caption=caption, row="rounds",
                                     metrics=("aes", "task", "mode"))

    def _counted(self, episode: str, mode: str, reports: list[Report], labels: dict[str, Any]) -> dict[str, Any]:
        """The episode's metrics from its rounds' reports, once they are added to the run's totals."""
        last = reports[-1]
        metrics: dict[str, Any] = {"aes": round(last.aes, 4), "mode": mode, **labels,
                                   **{f"errors_{kind}": int(n) for kind, n in last.errors.items()},
                                   "refused": last.refused[:8], "messages": last.messages[:8]}
        if mode == "online":
            metrics.update({f"aes_round_{k}": round(r.aes, 4) for k, r in enumerate(reports)})
        self.log.info("scored", episode=episode, aes=metrics["aes"], errors=last.errors)
        self.scores.setdefault(mode, []).append(last.aes)
        for kind, n in last.errors.items():
            self.errors[kind] += int(n)
        return metrics

    def summary(self) -> dict[str, Any]:
        every = [s for scores in self.scores.values() for s in scores]
        return {"episodes": len(every), "unscored": self.unscored, "rules": self.params.rules,
                "mean_aes": sum(every) / len(every) if every else None,
                "per_mode": {mode: {"episodes": len(s), "mean_aes": sum(s) / len(s)} for mode, s in self.scores.items()},
                "errors": dict(self.errors), "paper_source": webui_paper.SOURCE, "paper_table": webui_paper.table()}


def _no_page(task: str, why: str) -> Report:
    """A round without a page: MageBench's parse error, AES 0."""
    report = Report(task, "(no page)")
    report.errors["parse"] = 1
    report.messages.append(why)
    return report
