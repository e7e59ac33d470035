"""VisualWebArena's judge node: the reward of each browser episode, scored on its final page.

It reads the browser environment's ``step`` stream; on the last step it asks the environment for
the task the episode played (``vwa.task``), scores it with ``vwa_eval.evaluate`` on the answer of the
final ``stop``, the final URL, and the live final page reached through the environment's ``page.*``
services, then ends the episode with ``success`` (the reward, 0 or 1), the per-evaluator scores and
the task's labels. Visual questions are answered by a model node when ``vision`` names one, else by
the attribute oracle built from the site nodes' ``site.attributes`` (labelled so in the results).
A task that cannot be scored (a fuzzy_match or an unachievable task's reason with no LLM judge
wired in ``grader``, a helper or page request that failed) ends ``unscored`` with the reason, never
a silent 0 or 1.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from kernel.sdk import FramebusError
from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.node import Node, NodeParams
from kernel.sdk.steps import StepRecord
from nodes.browser.vwa.page import IMAGES_JS, PageImage
from nodes.browser.vwa.tasks import TaskFileError, parse_task
from nodes.judge import vwa_paper
from nodes.judge.vwa_eval import CannotScore, Graders, evaluate
from nodes.judge.vwa_graders import ModelNodeAnswerer, ModelNodeGrader, OracleAnswerer


class BusPageServices:
    """``PageServices`` over the environment's ``page.*`` services for one finished episode."""

    def __init__(self, node: Node, env: str, episode: str, timeout_s: float) -> None:
        self.node, self.env, self.episode, self.timeout_s = node, env, episode, timeout_s

    async def _call(self, svc: str, **args: Any) -> Any:
        return await self.node.request(self.env, svc, {"episode": self.episode, **args}, timeout=self.timeout_s)

    async def url(self) -> str:
        return str(await self._call("page.url"))

    async def goto(self, url: str) -> None:
        await self._call("page.goto", url=url)

    async def evaluate(self, js: str) -> Any:
        return await self._call("page.evaluate", expression=js)

    async def content(self) -> str:
        return str(await self._call("page.content"))

    async def images(self, selector: str) -> list[PageImage]:
        """Read by the page itself (its cookies, as the agent saw them): ``page.images`` gives only sources."""
        found = await self.evaluate(f"({IMAGES_JS})({json.dumps(selector)})")
        return [_page_image(item) for item in found]

    async def screenshot(self) -> bytes:
        return bytes(await self._call("page.screenshot"))


def _page_image(item: Any) -> PageImage:
    """One ``{src, data}`` row, data in base64 (null where the page could not fetch it)."""
    data = item.get("data")
    return PageImage(str(item["src"]), base64.b64decode(data) if isinstance(data, str) else None)


class SitesOracle:
    """The attribute oracle over several local sites: every site numbers its images from 1 under the
    same path, so the image's host picks the site's answer key."""

    label = OracleAnswerer.label

    def __init__(self, keys: Mapping[str, OracleAnswerer]) -> None:
        self.keys = dict(keys)  # host:port -> that site's oracle

    async def __call__(self, image: PageImage, question: str) -> str:
        oracle = self.keys.get(urlsplit(image.src).netloc)
        return "unknown" if oracle is None else await oracle(image, question)


class VwaJudgeParams(NodeParams):
    env: str | None = Field(None, description="the browser environment node (default: the source of step)")
    sites: list[str] = Field(default_factory=list, description="site node ids whose site.attributes answer visual "
                             "questions when no vision model is named (the attribute oracle)")
    vision: str | None = Field(None, description="a model node answering eval_vqa questions about images")
    grader: str | None = Field(None, description="a model node grading fuzzy_match and N/A reasons (LLM judge)")
    timeout_s: float = Field(60.0, gt=0, description="longest wait for one page.* or model request")
    release: bool = Field(True, description="close the episode's final page once it is scored (which also "
                          "frees its sites' leases for other replicas' resets)")
    paper_model: str = Field("GPT-4V / Image + Caps + SoM", description="the row of VWA's Table 3 (or 5) "
                             "printed beside ours per site and, where Figure 6 has it, per difficulty")

    @field_validator("paper_model")
    @classmethod
    def _known_row(cls, name: str) -> str:
        return vwa_paper.check_model(name)


class VwaJudge(JudgeNode):
    """Scores each VWA episode on its final page and ends it with the reward and the task's labels."""

    Params = VwaJudgeParams
    params: VwaJudgeParams
    section = "vwa"

    async def setup(self) -> None:
        self.oracle: SitesOracle | None = None
        self.tally = Tally(self.params.paper_model)
        await super().setup()

    def _env(self, episode: JudgedEpisode) -> str:
        return self.params.env or episode.env  # with replicas, the env that played this episode

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        info, env = records[-1]["info"], self._env(episode)
        try:
            reply = await self.request(env, "vwa.task", {"episode": episode.id}, timeout=self.params.timeout_s)
            task = parse_task(reply["task"], file=f"{env}:vwa.task", base_urls=None)
        except (FramebusError, TaskFileError) as exc:  # the env lost the task, or sent a bad one
            raise Unscored(f"{env}: vwa.task: {exc}") from None
        labels: dict[str, Any] = {"task_id": str(task.task_id), "site": ",".join(task.sites), "evaluators": ",".join(task.eval.eval_types),
                  "reasoning_difficulty": task.difficulty("reasoning"), "visual_difficulty": task.difficulty("visual"),
                  "overall_difficulty": task.difficulty("overall"), **episode.labels,
                  "answered": float(info.get("answer") is not None)}
        page = BusPageServices(self, env, episode.id, self.params.timeout_s)
        try:
            graders = await self._graders(reply.get("base_urls") or {}, task.eval.eval_types)
            result = await evaluate(task, answer=info.get("answer"), url=info.get("url"), page=page, graders=graders)
        except CannotScore as exc:
            raise Unscored(str(exc), labels) from None
        except FramebusError as exc:  # a page.* or grader request failed: the episode ends unscored
            raise Unscored(f"{type(exc).__name__}: {exc}", labels) from None
        self.log.info("scored", episode=episode.id, task=task.task_id, reward=result.reward)
        self.tally.add(task.sites, labels["reasoning_difficulty"], labels["visual_difficulty"], result.reward,
                       result.scores)
        return {"success": float(result.reward), **labels,
                **{f"score_{kind}": value for kind, value in result.scores.items()},
                "graders": ",".join(f"{k}={v}" for k, v in sorted(result.graders.items())),
                "failed_checks": [f"{c.evaluator}: {c.what} ({c.detail})" for c in result.checks if not c.passed][:8]}

    async def finished(self, episode: JudgedEpisode) -> None:
        """After the episode has ended: its sites' leases go with the page (a reset may follow)."""
        if self.params.release:
            try:
                await self.request(self._env(episode), "page.release", {"episode": episode.id},
                                   timeout=self.params.timeout_s)
            except FramebusError as exc:  # the env closed it meanwhile: nothing is lost
                self.log.warning("page.release failed", episode=episode.id, error=str(exc))

    async def _graders(self, base_urls: Mapping[str, str], kinds: list[str]) -> Graders:
        p = self.params
        text = ModelNodeGrader(self.request, p.grader, timeout_s=p.timeout_s) if p.grader else None
        vision: Any = None
        if p.vision:
            vision = ModelNodeAnswerer(self.request, p.vision, timeout_s=p.timeout_s)
        elif p.sites and "page_image_query" in kinds:
            vision = await self._oracle()
        return Graders(text=text, vision=vision, base_urls=dict(base_urls))

    async def _oracle(self) -> SitesOracle:
        """Built once: a site's images do not change under a reset (uploads aside, which it never answers)."""
        if self.oracle is None:
            keys = {}
            for node in self.params.sites:
                base = str(await self.request(node, "site.url", None, timeout=self.params.timeout_s))
                rows = await self.request(node, "site.attributes", None, timeout=self.params.timeout_s)
                keys[urlsplit(base).netloc] = OracleAnswerer({row["url"]: row for row in rows})
            self.oracle = SitesOracle(keys)
        return self.oracle

    def summary(self) -> dict[str, Any]:
        return self.tally.summary(self.unscored)


def primary_site(sites: list[str]) -> str:
    """The site a task counts under, as VWA files it: the first of classifieds/reddit/shopping it
    names (a reddit + wikipedia task is a Reddit task), else its first site."""
    return next((s for s in sites if s in vwa_paper.SITES), sites[0] if sites else "none")


class Tally:
    """The run's success counts per site, per reasoning x visual difficulty and per evaluator, and
    the ``vwa`` section of summary.json with the paper's rates beside them (summary())."""

    def __init__(self, paper_model: str) -> None:
        self.paper_model = paper_model
        self.sites: dict[str, list[int]] = {}  # site -> [episodes, successes]
        self.cells: dict[tuple[str, str], list[int]] = {}  # (reasoning, visual) -> [episodes, successes]
        self.evaluators: dict[str, list[int]] = {}  # kind -> [episodes, successes, evaluator passed]

    def add(self, sites: list[str], reasoning: str | None, visual: str | None, reward: float,
            scores: Mapping[str, float]) -> None:
        win = int(reward >= 1.0)
        for key in (primary_site(sites), "overall"):
            _bump(self.sites.setdefault(key, [0, 0]), 1, win)
        r, v = reasoning or "unlabelled", visual or "unlabelled"
        for cell in {(r, v), (r, "overall"), ("overall", v), ("overall", "overall")}:
            _bump(self.cells.setdefault(cell, [0, 0]), 1, win)
        for kind, score in scores.items():
            _bump(self.evaluators.setdefault(kind, [0, 0, 0]), 1, win, int(score >= 1.0))

    def summary(self, unscored: int) -> dict[str, Any]:
        """The section, with ``unscored`` (the episodes the judge could not score) beside the counts."""
        paper, human = self.paper_model, vwa_paper.HUMAN
        n, wins = self.sites.get("overall", [0, 0])
        out: dict[str, Any] = {"episodes": n, "successes": wins, "success_rate": wins / n if n else 0.0,
                               "unscored": unscored, "paper_model_name": paper, "paper_source": vwa_paper.SOURCE}
        order = [*vwa_paper.SITES, *sorted(k for k in self.sites if k not in (*vwa_paper.SITES, "overall")), "overall"]
        out["per_site"] = {site: {**_rates(self.sites.get(site, [0, 0])),
                                  "paper_model": vwa_paper.site_rate(paper, site),
                                  "paper_human": vwa_paper.site_rate(human, site)} for site in order}
        levels = [*vwa_paper.LEVELS[:3], *sorted({x for c in self.cells for x in c} - set(vwa_paper.LEVELS)),
                  "overall"]
        grid: dict[str, Any] = {}
        for r in levels:
            for v in levels:
                if (r, v) in self.cells or (r in vwa_paper.LEVELS and v in vwa_paper.LEVELS):
                    grid[f"{r}-{v}"] = {**_rates(self.cells.get((r, v), [0, 0])),
                                        "paper_model": vwa_paper.difficulty_rate(paper, r, v)}
        out["per_difficulty"] = grid  # rows "<reasoning>-<visual>", VWA's Figure 6 layout
        out["per_evaluator"] = {kind: {**_rates(c[:2]), "passed": c[2], "pass_rate": c[2] / c[0] if c[0] else None}
                                for kind, c in sorted(self.evaluators.items())}
        out["paper_table"] = vwa_paper.table()
        return out


def _bump(counts: list[int], *amounts: int) -> None:
    for i, amount in enumerate(amounts):
        counts[i] += amount


def _rates(counts: list[int]) -> dict[str, Any]:
    n, wins = counts
    return {"episodes": n, "successes": wins, "success_rate": wins / n if n else None}
