"""The evaluators of WebArena, VisualWebArena and WebArena-Lite: the reward of one finished task.

``evaluate`` runs the task's evaluators in ``eval_types`` order; the reward is the product of their
scores, and each evaluator's score is the product of its checks, so the reward is 1 only when every
check passes. String and URL checks need only the answer and the final URL; ``program_html`` and
``page_image_query`` read the live final page through ``PageServices`` and may navigate it, so they
run once, after the episode. Every check is recorded with what it compared, and the graders used
(an LLM judge, a vision model, or the attribute oracle) are named in the result. A check that needs
a grader nobody gave (fuzzy_match without an LLM judge) raises ``CannotScore``: never a guessed 0 or 1.

The three benchmarks' evaluators are one code base that drifted; one rule is kept for every task,
and where they part it is said here (string cleaning and the single-token rule: vwa_strings.py).

URLs (``url_match``):
- ``EXACT`` (VWA): the final URL is one of the ``|OR|`` references; here query parameters compare in
  any order and percent-encoding decoded (VWA compares raw strings).
- ``GOLD in PRED`` (WebArena's rule, and its default when a task names none; VWA's files always name
  theirs): host+path of a reference is part of the final URL's host+path, and every query parameter
  of that reference has its value among the final URL's values for that name (extra parameters and
  a fragment are free; the scheme is not compared). VWA's copy tested the raw reference text as a
  substring, which let ``id=4`` match ``id=42``; WebArena pooled the query parameters of all ``|OR|``
  alternatives, where here each alternative stands alone (no released task has queries in them).
- both: ``localhost`` is ``127.0.0.1`` and trailing '/' are dropped (of the path too, before a query:
  ``/issues/?state=opened`` is the page ``/issues?state=opened`` leads to).

Where VWA's code and its evident intent part, this follows the intent, and says so:
- the URL the agent ended on is read once, before any evaluator navigates, and is what ``url_match``,
  ``__last_url__`` and a later target's ``"last"`` mean (VWA re-reads the possibly navigated page);
- every kind in a ``required_contents`` is checked (VWA and WebArena check only the first);
- what a ``program_html`` locator selected is HTML-unescaped before it is compared (WebArena does;
  VWA does not, so "&amp;" in a page's HTML never matched a reference's "&" there);
- a ``program_html`` fuzzy_match string's ``|OR|`` parts are alternatives (VWA requires all);
- a fuzzy_match given as a list is graded once, against the references joined by ", " (VAB's
  WebArena-Lite evaluator; WebArena graded each entry alone, which a complete answer to a
  two-part question fails on each single part);
- an "N/A" answer check folds into the product like every other check (VWA's overwrote earlier ones).
"""

from __future__ import annotations

import asyncio
import html
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, unquote, urlsplit

from nodes.browser.vwa.funcs import parse_func
from nodes.browser.vwa.registry import REGISTRY, HelperContext, HelperRegistry
from nodes.browser.vwa.page import PageImage, PageServices
from nodes.browser.vwa.tasks import NOT_ACHIEVABLE, OR, PLACEHOLDER, HtmlTarget, ImageQuery, RequiredContents, VwaTask
from nodes.judge import vwa_strings as s
from nodes.judge.vwa_graders import (
    OracleCannotAnswer,
    TextGrader,
    VisionAnswerer,
    fuzzy_messages,
    fuzzy_verdict,
    ua_messages,
    ua_verdict,
)


class CannotScore(RuntimeError):
    """The task cannot be scored with what was given (no page, no grader, or evaluators it lacks)."""


@dataclass
class Check:
    evaluator: str
    what: str
    passed: bool
    detail: str = ""


@dataclass
class EvalResult:
    task_id: int
    reward: float
    scores: dict[str, float]
    checks: list[Check]
    graders: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Graders:
    """What the evaluators may call: model graders, ``func:`` helpers, where reference images live."""

    text: TextGrader | None = None
    vision: VisionAnswerer | None = None
    helpers: HelperRegistry = REGISTRY
    base_urls: Mapping[str, str] = field(default_factory=dict)
    image_root: Path | None = None


async def evaluate(task: VwaTask, *, answer: str | None, url: str | None = None, page: PageServices | None = None,
                   graders: Graders | None = None) -> EvalResult:
    """Score a finished task: ``answer`` from the final ``stop`` (None: the agent never stopped)."""
    run = _Run(task, answer or "", url, page, graders or Graders())
    return await run.score()


class _Run:
    def __init__(self, task: VwaTask, answer: str, url: str | None, page: PageServices | None,
                 graders: Graders) -> None:
        self.task, self.answer, self.final_url, self.page, self.g = task, answer, url, page, graders
        self.checks: list[Check] = []
        self.used: dict[str, str] = {}
        self.navigated = False

    def fail_unless(self, cond: bool, evaluator: str, what: str, detail: str = "") -> float:
        self.checks.append(Check(evaluator, what, bool(cond), detail))
        return 1.0 if cond else 0.0

    async def score(self) -> EvalResult:
        task = self.task
        problems = task.problems(self.g.helpers)
        if problems:
            raise CannotScore(f"task {task.task_id} cannot be scored: " + "; ".join(problems))
        if task.needs_page and self.page is None:
            kinds = [k for k in task.eval.eval_types if k in ("program_html", "page_image_query")]
            raise CannotScore(f"task {task.task_id} needs the live page for {', '.join(kinds)}: "
                              "score it in a browser episode, not from an answer alone")
        if self.final_url is None and self.page is not None:
            self.final_url = await self.page.url()
        scores: dict[str, float] = {}
        for kind in task.eval.eval_types:
            method = {"string_match": self.string_match, "url_match": self.url_match,
                      "program_html": self.program_html, "page_image_query": self.page_image_query}[kind]
            scores[kind] = scores.get(kind, 1.0) * await method()
        reward = 1.0
        for value in scores.values():
            reward *= value
        return EvalResult(task.task_id, reward, scores, self.checks, self.used)

    # ---- string_match ----

    async def string_match(self) -> float:
        ev = self.task.eval
        answers = ev.reference_answers
        assert answers is not None  # problems() guarantees it
        pred = s.clean(self.answer)
        score, E = 1.0, "string_match"
        if answers.exact_match is not None:
            score *= self.fail_unless(s.exact_match(answers.exact_match, pred), E, f"exact_match {answers.exact_match!r}")
        for ref in answers.must_include or []:
            score *= self.fail_unless(s.must_include(ref, pred), E, f"must_include {ref!r}")
        for ref in answers.must_exclude or []:
            score *= self.fail_unless(s.must_exclude(ref, pred), E, f"must_exclude {ref!r}")
        if answers.one_of is not None:
            score *= self.fail_unless(s.one_of(answers.one_of, pred), E, f"one_of {answers.one_of!r}")
        if answers.required_values is not None:
            score *= self.numbers(answers.required_values, s.to_int(pred), E)
        if answers.fuzzy_match == NOT_ACHIEVABLE:
            score *= await self.not_achievable(pred, ev.string_note)
        elif answers.fuzzy_match:
            score *= await self.fuzzy(", ".join(answers.fuzzy_match), pred, E)
        return score

    def numbers(self, refs: list[str], value: float | None, evaluator: str) -> float:
        if value is None:
            return self.fail_unless(False, evaluator, f"required_values {refs!r}", "not an integer")
        score = 1.0
        for ref in refs:
            score *= self.fail_unless(s.required_value(ref, value), evaluator, f"required_values {ref!r}",
                                      f"value {value}")
        return score

    async def not_achievable(self, pred: str, reason: str | None) -> float:
        E = "string_match"
        if s.exact_match(NOT_ACHIEVABLE, pred):
            return self.fail_unless(True, E, "fuzzy_match 'N/A'", "answered N/A")
        if not reason:  # problems() refuses such a task; a task built in code may still get here
            raise CannotScore(f"task {self.task.task_id}: fuzzy_match 'N/A' with an answer other than N/A needs "
                              "the reason the task cannot be done (eval.string_note)")
        grader = self.text_grader("fuzzy_match 'N/A' (ua_match)")
        ok, note = ua_verdict(await grader(ua_messages(self.task.intent, reason, pred)))
        return self.fail_unless(ok, E, "ua_match (unachievable reason)", note)

    async def fuzzy(self, ref: str, pred: str, evaluator: str) -> float:
        grader = self.text_grader(f"fuzzy_match {ref!r}")
        ok, note = fuzzy_verdict(await grader(fuzzy_messages(self.task.intent, ref, pred)))
        return self.fail_unless(ok, evaluator, f"fuzzy_match {ref!r}", note)

    def text_grader(self, what: str) -> TextGrader:
        if self.g.text is None:
            raise CannotScore(f"task {self.task.task_id}: {what} needs an LLM judge (a model node); none was given")
        self.used["text"] = self.g.text.label
        return self.g.text

    # ---- url_match ----

    async def url_match(self) -> float:
        ev = self.task.eval
        assert ev.reference_url is not None
        if self.final_url is None:
            raise CannotScore(f"task {self.task.task_id}: url_match needs the final URL")
        rule = ev.url_note or DEFAULT_URL_RULE
        refs = [r.strip() for r in ev.reference_url.split(OR)]
        unresolved = sorted({m.group(0) for r in refs for m in PLACEHOLDER.finditer(r)})
        if unresolved:
            raise CannotScore(f"task {self.task.task_id}: eval.reference_url still holds {', '.join(unresolved)}: "
                              "give the base URL of each site")
        ok = any(url_matches(ref, self.final_url, rule) for ref in refs)
        return self.fail_unless(ok, "url_match", f"{rule} {ev.reference_url!r}", f"final URL {self.final_url}")

    # ---- program_html ----

    async def program_html(self) -> float:
        score = 1.0
        for i, target in enumerate(self.task.eval.program_html):
            selected = await self.select(target)
            what = f"target {i} ({target.url} / {target.locator[:60] or 'page HTML'})"
            if selected is None:
                score *= self.fail_unless(False, "program_html", what, "the locator selected nothing")
                break  # as VWA: the page is not the one the task leads to
            score *= await self.contents(target.required_contents, selected, what)
        return score

    async def open_target(self, url: str) -> None:
        """Navigate for a target: 'last' is where the agent stopped, 'func:' a helper's URL."""
        if url.startswith("func:"):
            url = str(await self.g.helpers.call(parse_func(url), self.helper_context()))
        page = self.need_page()
        if PLACEHOLDER.search(url):
            raise CannotScore(f"task {self.task.task_id}: {url!r} still holds a site placeholder: "
                              "give the base URL of each site")
        if url == "last":
            if self.navigated and self.final_url:
                await page.goto(self.final_url)
                self.navigated = False
            return
        await page.goto(url)
        self.navigated = True

    def helper_context(self) -> HelperContext:
        return HelperContext(self.page, self.final_url or "", self.g.base_urls)

    def need_page(self) -> PageServices:
        if self.page is None:
            raise CannotScore(f"task {self.task.task_id} needs the live page")
        return self.page

    async def select(self, target: HtmlTarget) -> Any:
        await self.open_target(target.url)
        page, loc = self.need_page(), target.locator.strip()
        if not loc:
            return await page.content()
        if loc.startswith(("document.", "[...document.")):
            for prep in target.prep_actions:
                try:
                    await page.evaluate(f"() => {prep}")
                except Exception:  # noqa: BLE001 - as VWA: a failing preparation leaves the page as it is
                    pass
            try:
                return _text(await page.evaluate(f"() => {loc}"))
            except Exception:  # noqa: BLE001 - the element is not there: the page is wrong, select ""
                return ""
        if loc.startswith("lambda:"):
            try:
                value = await page.evaluate(loc[len("lambda:"):])
            except Exception:  # noqa: BLE001
                return None
            return value if value else None
        return await self.g.helpers.call(parse_func(loc), self.helper_context())  # func:, checked at load

    async def contents(self, req: RequiredContents, selected: Any, what: str) -> float:
        E, text, score = "program_html", html.unescape(_text(selected)), 1.0
        if req.exact_match is not None:
            score *= self.fail_unless(s.exact_match(req.exact_match, text), E, f"{what}: exact_match "
                                      f"{req.exact_match!r}", f"selected {text[:80]!r}")
        for ref in req.must_include or []:
            score *= self.fail_unless(s.must_include(ref, text), E, f"{what}: must_include {ref!r}")
        for ref in req.must_exclude or []:
            score *= self.fail_unless(s.must_exclude(ref, text), E, f"{what}: must_exclude {ref!r}")
        if req.required_values is not None:
            value = selected if isinstance(selected, int | float) and not isinstance(selected, bool) \
                else s.to_int(text)
            score *= self.numbers(req.required_values, value, E)
        if req.fuzzy_match:
            # a string: VWA's |OR| alternatives; a list: VAB's facts, graded together
            refs = req.fuzzy_match.split(OR) if isinstance(req.fuzzy_match, str) else [", ".join(req.fuzzy_match)]
            grader = self.text_grader(f"{what}: fuzzy_match")
            verdicts: list[tuple[bool, str]] = []
            for ref in refs:  # alternatives: the first graded correct settles it
                verdicts.append(fuzzy_verdict(await grader(fuzzy_messages(self.task.intent, ref, text))))
                if verdicts[-1][0]:
                    break
            score *= self.fail_unless(verdicts[-1][0], E, f"{what}: fuzzy_match {req.fuzzy_match!r}",
                                      "; ".join(n for _, n in verdicts))
        return score

    # ---- page_image_query ----

    async def page_image_query(self) -> float:
        score = 1.0
        for i, query in enumerate(self.task.eval.page_image_query):
            await self.open_target(query.eval_image_url)
            what = f"query {i} ({query.eval_image_url} / {query.eval_image_class or 'all images'})"
            found = await self.need_page().images(query.eval_image_class)
            decoded = [(img, pil) for img, pil in zip(found, await asyncio.to_thread(_decode_all, found))
                       if pil is not None]
            if not decoded:
                detail = "no images there" if not found else f"none of {len(found)} images could be read"
                return self.fail_unless(False, "page_image_query", what, detail)
            score *= await self.vqa(query, decoded, what)
            if query.eval_fuzzy_image_match:
                score *= await self.image_match(query, [pil for _, pil in decoded], what)
        return score

    async def vqa(self, query: ImageQuery, decoded: list[tuple[PageImage, Any]], what: str) -> float:
        score = 1.0
        for qa in query.eval_vqa:
            if self.g.vision is None:
                raise CannotScore(f"task {self.task.task_id}: eval_vqa {qa.question!r} needs a vision model "
                                  "or the attribute oracle; none was given")
            self.used["vision"] = self.g.vision.label
            try:
                replies = [await self.g.vision(img, qa.question) for img, _ in decoded]
            except OracleCannotAnswer as e:
                raise CannotScore(f"task {self.task.task_id}: {e}") from None
            ok = any(qa.answer.lower() in r.lower() for r in replies)
            score *= self.fail_unless(ok, "page_image_query", f"{what}: eval_vqa {qa.question!r} -> {qa.answer!r}",
                                      f"{self.g.vision.label} said {replies[:4]!r}")
        return score

    async def image_match(self, query: ImageQuery, pixels: list[Any], what: str) -> float:
        refs = [r.strip() for r in (query.eval_fuzzy_image_match or "").split(OR)]
        best = await asyncio.to_thread(_best_ssim, refs, pixels, self.g.image_root)
        return self.fail_unless(best > query.threshold, "page_image_query",
                                f"{what}: eval_fuzzy_image_match (SSIM > {query.threshold})", f"best SSIM {best:.3f}")


# scikit-image and Pillow load only when a task has page images: `score` on a string task stays quick.
def _decode_all(images: list[PageImage]) -> list[Any]:
    from nodes.judge.vwa_images import decode

    return [decode(img.data) if img.data is not None else None for img in images]


def _best_ssim(refs: list[str], pixels: list[Any], root: Path | None) -> float:
    from nodes.judge.vwa_images import load_reference, ssim

    best = -1.0
    for ref in refs:
        reference = load_reference(ref, root)
        for img in pixels:
            best = max(best, ssim(img, reference))
    return best


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


# ---- URLs -----------------------------------------------------------------------------------------

DEFAULT_URL_RULE = "GOLD in PRED"  # WebArena's, when a task names no url_note (VWA's files always name one)


def normal_url(url: str) -> str:
    """``localhost`` is ``127.0.0.1``, and trailing '/' are dropped (WebArena's and VWA's ``clean_url``)."""
    return url.strip().replace("://localhost", "://127.0.0.1").rstrip("/")


def _parts(url: str) -> tuple[str, str, str, list[tuple[str, str]], str]:
    p = urlsplit(normal_url(url))
    return (p.scheme.lower(), p.netloc.lower(), unquote(p.path).rstrip("/"),
            sorted(parse_qsl(p.query, keep_blank_values=True)), p.fragment)


def _gold_in_pred(ref: str, pred: str) -> bool:
    r, p = urlsplit(normal_url(ref)), urlsplit(normal_url(pred))
    if r.netloc.lower() + unquote(r.path).rstrip("/") not in p.netloc.lower() + unquote(p.path):
        return False
    have = parse_qs(p.query, keep_blank_values=True)
    return all(any(v in have.get(key, []) for v in values)
               for key, values in parse_qs(r.query, keep_blank_values=True).items())


def url_matches(ref: str, pred: str, rule: str = DEFAULT_URL_RULE) -> bool:
    """``EXACT``: the same URL, query parameters in any order; ``GOLD in PRED``: the reference's host
    and path are part of the final URL's, and each of its query parameters is among the final URL's
    (the module docstring says where VWA and WebArena differ)."""
    if rule == "EXACT":
        return normal_url(ref) == normal_url(pred) or _parts(ref) == _parts(pred)
    if rule == "GOLD in PRED":
        return _gold_in_pred(ref, pred)
    raise ValueError(f"unknown URL rule {rule!r} (known: EXACT, GOLD in PRED)")
