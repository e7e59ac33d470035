"""VisualWebArena's task format and evaluators: the loader on good and bad files, every evaluator kind
passing and failing (string and URL ones from an answer alone; program_html and page_image_query on a
real Chromium page over a real HTTP server), the attribute oracle, and the two CLI commands as processes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image, ImageDraw

from nodes.browser.vwa.funcs import FuncSyntaxError, parse_func
from nodes.browser.vwa.helpers import REGISTRY
from nodes.browser.vwa.page import PageImage, PageServices, PlaywrightPageServices
from nodes.browser.vwa.tasks import TaskFileError, VwaTask, load_task_file, load_task_files, parse_task
from nodes.judge import vwa_strings as s
from nodes.judge.vwa_eval import CannotScore, Graders, evaluate, url_matches
from nodes.judge.vwa_graders import OracleAnswerer, OracleCannotAnswer
from nodes.judge.vwa_images import decode, ssim

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "vwa"
CLASSIFIEDS = DATA / "classifieds.raw.json"
SHOPPING = DATA / "shopping_single.json"
UNSUPPORTED = DATA / "reddit_unsupported.raw.json"
BASES = {"classifieds": "http://127.0.0.1:9980", "wikipedia": "http://127.0.0.1:8888"}
browser_test = pytest.mark.asyncio(loop_scope="module")


def task_by_id(path: Path, task_id: int, bases: dict[str, str] | None = None) -> VwaTask:
    return next(t for t in load_task_file(path, bases or BASES) if t.task_id == task_id)


def make_task(eval_spec: dict[str, Any], task_id: int = 900, **fields: Any) -> dict[str, Any]:
    return {"sites": ["classifieds"], "task_id": task_id, "start_url": "__CLASSIFIEDS__",
            "intent": "a test intent", "eval": eval_spec, **fields}


class ScriptedGrader:
    """A text grader that answers from a script: it stands in for the LLM only to test what surrounds it
    (the prompt built, the verdict parsed, the product taken)."""

    label = "scripted-test-grader"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    async def __call__(self, messages: list[dict[str, Any]]) -> str:
        self.prompts.append(messages[-1]["content"])
        return self.replies.pop(0)


# ---- the loader ----------------------------------------------------------------------------------

def test_loader_reads_vwa_files_unchanged_and_resolves_placeholders():
    tasks = load_task_files([CLASSIFIEDS, SHOPPING], {**BASES, "shopping": "http://127.0.0.1:7770/"})
    assert [t.task_id for t in tasks] == [0, 1, 2, 3, 4, 5, 6, 17]
    five = tasks[5]
    assert five.start_urls == ["http://127.0.0.1:9980/index.php?page=item&id=84", "http://127.0.0.1:8888/wiki/Sofa"]
    assert five.images == ["images/sofa.png"] and five.require_reset and five.viewport_size.width == 1280
    assert five.eval.program_html[1].url == "http://127.0.0.1:9980/index.php?page=item&id=84"
    assert five.eval.program_html[1].prep_actions and five.source == str(CLASSIFIEDS)
    assert tasks[1].eval.reference_url.count("http://127.0.0.1:9980/index.php") == 2
    assert tasks[6].images == ["images/red_square.png"] and tasks[6].eval.page_image_query[0].threshold == 0.8
    assert tasks[3].difficulty("reasoning") == "hard" and tasks[3].difficulty("visual") == "medium"  # VWA's typos
    assert tasks[4].unachievable and not tasks[0].unachievable
    assert tasks[7].start_url == "http://127.0.0.1:7770/electronics.html"  # trailing '/' of the base dropped
    assert tasks[7].viewport_size.height == 932 and tasks[7].eval.reference_answers.exact_match == "3"
    assert tasks[0].instantiation_dict == {"item": "bicycle"}
    assert tasks[0].eval.model_extra["reference_answer_raw_annotation"] == "blue, two wheels"  # extras kept
    assert all(t.problems() == [] for t in tasks)
    raw = load_task_file(CLASSIFIEDS)  # without base URLs the placeholders stay
    assert raw[0].start_url == "__CLASSIFIEDS__"


def test_loader_errors_name_file_task_and_key(tmp_path):
    def write(obj: Any, text: str | None = None) -> Path:
        path = tmp_path / "tasks.json"
        path.write_text(text if text is not None else json.dumps(obj))
        return path

    good = json.loads(SHOPPING.read_text())
    cases = [
        ({**good, "start_url": 42}, "task 17: start_url"),
        ({**good, "sites": []}, "task 17: sites"),
        ({**good, "eval": {**good["eval"], "reference_answers": {"must_include": {"three": 3}}}},
         "task 17: eval.reference_answers.must_include"),
        ({**good, "eval": {**good["eval"], "reference_answers": {"fuzzy_match": "nothing here"}}},
         "task 17: eval.reference_answers.fuzzy_match"),
        ({**good, "viewport_size": {"width": -5}}, "task 17: viewport_size.width"),
        ({**good, "eval": {"reference_answers": {"exact_match": "3"}}}, "task 17: eval.eval_types"),
        ([good, {k: v for k, v in good.items() if k != "task_id"}], "task #1 (no task_id): task_id"),
        ([good, good], "task 17: task_id: duplicate"),
        ([good, "not a task"], "task #1 (no task_id): a task must be a JSON object"),
    ]
    for obj, expected in cases:
        path = write(obj)
        with pytest.raises(TaskFileError) as err:
            load_task_file(path, {"shopping": "http://x"})
        assert str(err.value).startswith(f"{path}: ") and expected in str(err.value), str(err.value)
    with pytest.raises(TaskFileError, match=r"tasks.json: line 3 column \d+: not JSON"):
        load_task_file(write(None, '[\n{"task_id": 1,\n oops}]'))
    with pytest.raises(TaskFileError, match=r"task 17: start_url: no base URL for __SHOPPING__ \(given: reddit\)"):
        load_task_file(SHOPPING, {"reddit": "http://x"})
    with pytest.raises(TaskFileError, match="cannot read"):
        load_task_file(tmp_path / "missing.json")


def test_unknown_evaluators_and_helpers_are_named_with_the_task_id():
    tasks = {t.task_id: t for t in load_task_file(UNSUPPORTED, {"reddit": "http://r", "homepage": "http://h"})}
    p0, p1 = tasks[0].problems(), tasks[1].problems()
    assert any("unknown evaluator 'rouge_match'" in p for p in p0)
    assert any("unknown string check 'regex_match'" in p for p in p0)
    assert any("eval.url_note: unknown URL rule 'PREFIX'" in p for p in p1)
    assert any("program_html.0.locator: unknown func: helper 'forum_get_moderator_log'" in p for p in p1)
    assert not any("program_html.0.url" in p for p in p1)  # reddit_get_post_url is a known helper
    # a registry with the helper added knows it (sites extend the registry this way)
    extended = REGISTRY.copy()

    @extended.register("forum_get_moderator_log")
    async def role(ctx, page, user):  # pragma: no cover - only its name matters here
        return ""

    assert not any("moderator" in p for p in tasks[1].problems(extended))
    assert "forum_get_moderator_log" not in REGISTRY


async def test_evaluating_an_unsupported_task_refuses_by_name():
    task = load_task_file(UNSUPPORTED, {"reddit": "http://r", "homepage": "http://h"})[0]
    with pytest.raises(CannotScore, match=r"task 0 cannot be scored: .*rouge_match.*regex_match"):
        await evaluate(task, answer="a sunset over the sea")


def test_func_strings_are_parsed_not_evaluated():
    call = parse_func("func:get_query_text(__page__, '.price')")
    assert call.name == "get_query_text" and call.bind("http://u", "PAGE") == ("PAGE", ".price")
    assert parse_func("func:reddit_get_post_url('__last_url__')").bind("http://a/f/x/1/c", None) == ("http://a/f/x/1/c",)
    for bad in ("func:__import__('os').system('true')", "func:open", "func:f(x=1)", "func:f(os.sep)", "func:f(("):
        with pytest.raises(FuncSyntaxError):
            parse_func(bad)


# ---- string_match ----------------------------------------------------------------------------------

def test_single_token_rule_and_cleaning():
    assert s.word_tokens("$1.99, $2.50 and 10,000 items.") == ["$", "1.99", ",", "$", "2.50", "and", "10,000",
                                                               "items", "."]
    assert s.word_tokens("It's 3:30, don't") == ["It", "'s", "3:30", ",", "do", "n't"]
    assert s.includes("0", "there are 0 left") and not s.includes("0", "there are 10 left")
    assert not s.includes("red", "a reddish chair") and s.includes("red chair", "a red chairs")  # phrase: substring
    assert s.includes("1.99", "$1.99,$2.50,$10.00") and s.includes("10.00", "$1.99,$2.50,$10.00")
    assert s.clean('"Blue"') == "blue" and s.clean("'x'") == "x" and s.clean("'x") == "'x"
    assert s.clean(' "Blue" \n') == "blue"  # WebArena strips before it drops the quotes
    assert s.exact_match("N/A", "n/a") and s.exact_match("3", " 3") and not s.exact_match("3", "3.")
    assert s.to_int("1,250") == 1250 and s.to_int("12.5") is None and s.to_int("about 5") is None
    assert s.satisfies(700, "< 700")  # VWA widens bounds by its tolerance


async def test_string_match_kinds_pass_and_fail():
    async def score(spec: dict[str, Any], answer: str, **graders: Any) -> float:
        task = parse_task(make_task({"eval_types": ["string_match"], "reference_answers": spec,
                                     "string_note": "There are no boats."}))
        return (await evaluate(task, answer=answer, graders=Graders(**graders))).reward

    assert await score({"exact_match": "3"}, '"3"') == 1 and await score({"exact_match": "3"}, "three") == 0
    assert await score({"must_include": ["blue", "2 |OR| two"]}, "Blue, with two wheels") == 1
    assert await score({"must_include": ["blue", "2 |OR| two"]}, "blue, 12 wheels") == 0
    assert await score({"must_exclude": ["30000 |OR| 30,000"]}, "now 25,000") == 1
    assert await score({"must_exclude": ["30000 |OR| 30,000"]}, "was 30,000") == 0
    assert await score({"one_of": ["sofa", "couch"]}, "A Couch.") == 1
    assert await score({"one_of": ["sofa", "couch"]}, "an armchair") == 0
    assert await score({"required_values": ["< 300", ">= 100"]}, "150") == 1
    assert await score({"required_values": ["< 300", ">= 100"]}, "50") == 0
    assert await score({"required_values": ["< 300"]}, "about 150 dollars") == 0  # not an integer
    assert await score({"exact_match": "3", "must_include": ["4"]}, "3") == 0  # the product of checks
    # unachievable: "N/A" itself passes without a grader; a reason goes to the grader
    assert await score({"fuzzy_match": "N/A"}, "N/A") == 1
    same, different = ScriptedGrader("Same."), ScriptedGrader("different")
    assert await score({"fuzzy_match": "N/A"}, "no boats are listed", text=same) == 1
    assert await score({"fuzzy_match": "N/A"}, "the page did not load", text=different) == 0
    assert "There are no boats." in same.prompts[0] and "no boats are listed" in same.prompts[0]
    with pytest.raises(CannotScore, match="needs an LLM judge"):
        await score({"fuzzy_match": "N/A"}, "a reason")
    # fuzzy_match: only "correct" passes; a list of references is graded once, all of them together
    for reply, expected in (("correct", 1), ("Partially correct", 0), ("incorrect", 0), ("no idea", 0)):
        assert await score({"fuzzy_match": ["a blue bike"]}, "blue bicycle", text=ScriptedGrader(reply)) == expected
    two = ScriptedGrader("incorrect")
    assert await score({"fuzzy_match": ["driving: 13min", "walking: 1h 45min"]}, "x", text=two) == 0
    assert len(two.prompts) == 1 and "Reference answer: driving: 13min, walking: 1h 45min\n" in two.prompts[0]


async def test_result_records_checks_scores_and_graders():
    task = parse_task(make_task({"eval_types": ["string_match", "url_match"],
                                 "reference_answers": {"fuzzy_match": ["red"]},
                                 "reference_url": "__CLASSIFIEDS__/index.php?page=item&id=4"}), base_urls=BASES)
    result = await evaluate(task, answer="red", url="http://127.0.0.1:9980/index.php?page=item&id=5",
                            graders=Graders(text=ScriptedGrader("correct")))
    assert result.reward == 0 and result.scores == {"string_match": 1.0, "url_match": 0.0}
    assert result.graders == {"text": "scripted-test-grader"}
    assert [c.passed for c in result.checks] == [True, False] and "id=5" in result.checks[1].detail
    assert json.loads(json.dumps(result.as_dict()))["task_id"] == 900


# ---- url_match -------------------------------------------------------------------------------------

def test_url_rules():
    ref = "http://127.0.0.1:9980/index.php?page=search&sCategory=5"
    assert url_matches(ref, "http://localhost:9980/index.php?sCategory=5&page=search/", "EXACT")  # order, host, slash
    assert url_matches(ref, "http://127.0.0.1:9980/index.php?page=search&sCategory=5", "EXACT")
    assert not url_matches(ref, "http://127.0.0.1:9980/index.php?page=search&sCategory=6", "EXACT")
    assert not url_matches(ref, "http://127.0.0.1:9980/index.php?page=search&sCategory=5&iPage=2", "EXACT")
    assert url_matches("http://h/s?q=red%20car", "http://h/s?q=red+car", "EXACT")
    assert url_matches(ref, "http://127.0.0.1:9980/index.php?page=search&sCategory=5&iPage=2", "GOLD in PRED")
    assert url_matches(ref, "http://127.0.0.1:9980/index.php?iPage=2&sCategory=5&page=search", "GOLD in PRED")
    assert not url_matches(ref, "http://127.0.0.1:9980/index.php?page=search", "GOLD in PRED")
    assert not url_matches(ref, "http://127.0.0.1:7770/index.php?page=search&sCategory=5", "GOLD in PRED")


async def test_url_match_tasks():
    exact, gold = task_by_id(CLASSIFIEDS, 1), task_by_id(CLASSIFIEDS, 2)
    ok = "http://127.0.0.1:9980/index.php?sOrder=i_price&sCategory=5&page=search"
    assert (await evaluate(exact, answer=None, url=ok)).reward == 1  # second |OR| alternative, other order
    assert (await evaluate(exact, answer=None, url=ok + "&iOrderType=desc")).reward == 0
    assert (await evaluate(gold, answer=None, url="http://127.0.0.1:9980/index.php?page=item&id=42&x=1")).reward == 1
    assert (await evaluate(gold, answer=None, url="http://127.0.0.1:9980/index.php?page=item&id=4")).reward == 0
    unresolved = load_task_file(CLASSIFIEDS)[1]
    with pytest.raises(CannotScore, match="reference_url still holds __CLASSIFIEDS__"):
        await evaluate(unresolved, answer=None, url=ok)
    with pytest.raises(CannotScore, match="needs the live page for program_html"):
        await evaluate(task_by_id(CLASSIFIEDS, 5), answer="done", url=ok)
    assert parse_task(make_task({"eval_types": ["url_match"], "reference_url": "http://h/"}, image="")).images == []


# ---- the attribute oracle and SSIM -------------------------------------------------------------------

def test_oracle_answers_from_stored_attributes():
    oracle = OracleAnswerer({"/img/1.png": {"object": "stool", "color": "Red", "count": 2, "text": "SALE"},
                             "/img/2.png": {"object": "lamp", "colour": "blue", "count": 1}})
    facts = oracle.attributes["/img/1.png"]
    assert oracle.answer(facts, "What colour is the stool?") == "red"
    assert oracle.answer(facts, "How many stools are there?") == "2"
    assert oracle.answer(facts, "What does the sign say?") == "SALE"
    assert oracle.answer(facts, "Is this a red stool? (yes/no)") == "yes"
    assert oracle.answer(facts, "Is this a blue stool? (yes/no)") == "no"
    assert oracle.answer(facts, "Is this a lamp? (yes/no)") == "no"
    assert oracle.answer(facts, "Are there two stools?") == "yes" and oracle.answer(facts, "Are there 3 stools?") == "no"
    assert oracle.answer(facts, "Does it say 'sale'?") == "yes"
    with pytest.raises(OracleCannotAnswer):
        oracle.answer(facts, "Is this chair comfortable? (yes/no)")
    with pytest.raises(OracleCannotAnswer):
        oracle.answer(facts, "Why is it here?")
    assert oracle.label.startswith("oracle:")


def drawing(colour: str, size: tuple[int, int] = (160, 120), stripes: bool = False) -> Image.Image:
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    if stripes:
        for x in range(0, size[0], 12):
            d.rectangle([x, 0, x + 5, size[1]], fill=colour)
    else:
        d.rectangle([30, 20, 130, 60], fill=colour)
        for x in (38, 114):
            d.rectangle([x, 60, x + 8, 110], fill="black")
        d.ellipse([70, 28, 90, 48], fill="white")
    return img


def encoded(img: Image.Image, fmt: str) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, quality=70) if fmt == "JPEG" else img.save(buf, format=fmt)
    return buf.getvalue()


def test_ssim_resizes_and_compares_in_grey():
    red = drawing("red")
    assert ssim(red, red) == pytest.approx(1.0)
    assert ssim(red, red.resize((320, 240))) > 0.9  # resized to the larger size before comparing
    assert ssim(red, decode(encoded(red, "JPEG"))) > 0.8
    assert ssim(red, drawing("blue", stripes=True)) < 0.5
    assert decode(b"not an image") is None


# ---- the live page: a real HTTP server and a real Chromium --------------------------------------------

class Site:
    """A tiny real web site: path+query -> (content type, bytes), changed by each test."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[str, bytes]] = {}
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                found = site.routes.get(self.path) or site.routes.get(self.path.split("?")[0])
                body = found[1] if found else b"<html><body>not found</body></html>"
                self.send_response(200 if found else 404)
                self.send_header("Content-Type", found[0] if found else "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def page(self, path: str, body: str) -> None:
        self.routes[path] = ("text/html; charset=utf-8", f"<!doctype html><html><body>{body}</body></html>".encode())

    def file(self, path: str, data: bytes, kind: str) -> None:
        self.routes[path] = (kind, data)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def site():
    s = Site()
    yield s
    s.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    chromium = await pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
    yield chromium
    await chromium.close()
    await pw.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser):
    context = await browser.new_context(viewport={"width": 800, "height": 600})
    p = await context.new_page()
    yield p
    await context.close()


def item_page(price: str, description: str) -> str:
    return (f'<h1>Beige sofa</h1><div class="price">{price}</div>'
            f'<p class="description" hidden>{description}</p>'
            '<div class="item-photos"><img src="/img/photo.jpg" alt="photo"></div><img src="/img/logo.png">')


@browser_test
async def test_page_services_over_a_real_page(site, page):
    site.page("/hello", '<p id="t">Hi there</p><div class="g"><img src="/img/a.png"></div>')
    site.file("/img/a.png", encoded(drawing("green"), "PNG"), "image/png")
    services = PlaywrightPageServices(page)
    assert isinstance(services, PageServices)
    await services.goto(site.base + "/hello")
    assert await services.url() == site.base + "/hello"
    assert await services.evaluate("document.querySelector('#t').textContent") == "Hi there"
    assert "Hi there" in await services.content()
    images = await services.images(".g")
    assert [i.src for i in images] == [site.base + "/img/a.png"] and decode(images[0].data).size == (160, 120)
    assert await services.images(".nothing") == []
    shot = decode(await services.screenshot())
    assert shot.size == (800, 600)
    from nodes.browser.vwa.helpers import HelperContext
    ctx = HelperContext(services, site.base + "/hello")
    assert await REGISTRY.call(parse_func("func:get_query_text(__page__, '#t')"), ctx) == "Hi there"
    assert await REGISTRY.call(parse_func("func:get_query_text_lowercase(__page__, '#t')"), ctx) == "hi there"
    assert await REGISTRY.call(parse_func("func:get_query_text(__page__, '#missing')"), ctx) == ""
    assert await REGISTRY.call(parse_func("func:reddit_get_post_url('__last_url__')"),
                               HelperContext(None, "http://r/f/pics/12/-/comment/5")) == "http://r/f/pics/12/"


@browser_test
async def test_program_html_pass_and_fail(site, page):
    bases = {"classifieds": site.base, "wikipedia": site.base}
    task = task_by_id(CLASSIFIEDS, 5, bases)
    services = PlaywrightPageServices(page)
    site.page("/index.php", item_page("$25,000", "A comfy sofa, now 25000 dollars."))
    await page.goto(site.base + "/index.php?page=item&id=84")
    result = await evaluate(task, answer=None, page=services)
    assert result.reward == 1, result.checks
    assert [c.passed for c in result.checks] == [True, True, True]
    site.page("/index.php", item_page("$30,000", "A comfy sofa, was 30,000 now 25000 dollars."))
    await page.goto(site.base + "/index.php?page=item&id=84")
    result = await evaluate(task, answer=None, page=services)
    assert result.reward == 0 and [c.passed for c in result.checks] == [False, True, False]


@browser_test
async def test_program_html_locators_and_urls(site, page):
    site.page("/f/pics/12/", '<article class="post"><h2 class="title">Sunset</h2><span class="votes">1,204</span>'
              '</article><ul><li>a</li><li>b</li></ul>')
    site.page("/f/pics/12/-/comment/5", "<p>a comment</p>")
    site.page("/other", "<p>elsewhere</p>")
    services = PlaywrightPageServices(page)

    def task(targets: list[dict[str, Any]]) -> VwaTask:
        return parse_task(make_task({"eval_types": ["program_html"], "program_html": targets}),
                          base_urls={"classifieds": site.base})

    async def reward(targets: list[dict[str, Any]], final: str = "/f/pics/12/-/comment/5") -> float:
        await page.goto(site.base + final)
        return (await evaluate(task(targets), answer=None, page=services)).reward

    post = "func:reddit_get_post_url('__last_url__')"
    assert await reward([{"url": post, "locator": "", "required_contents": {"must_include": ["Sunset"]}}]) == 1
    assert await reward([{"url": post, "locator": "", "required_contents": {"must_include": ["Sunrise"]}}]) == 0
    assert await reward([{"url": post, "locator": "func:get_query_text(__page__, '.votes')",
                          "required_contents": {"required_values": ["> 1000"]}}]) == 1
    assert await reward([{"url": post, "locator": "func:get_query_text(__page__, '.votes')",
                          "required_contents": {"required_values": ["< 1000"]}}]) == 0
    lam = "lambda:(() => [...document.querySelectorAll('li')].map(x => x.textContent).join(','))()"
    assert await reward([{"url": post, "locator": lam, "required_contents": {"exact_match": "a,b"}}]) == 1
    assert await reward([{"url": post, "locator": lam, "required_contents": {"exact_match": "a"}}]) == 0
    nothing = "lambda:document.querySelector('.missing')"
    assert await reward([{"url": post, "locator": nothing, "required_contents": {"must_exclude": ["x"]}}]) == 0
    broken = "document.querySelector('.missing').outerText"  # a JS error selects "", as in VWA
    assert await reward([{"url": post, "locator": broken, "required_contents": {"exact_match": ""}}]) == 1
    # "last" after an earlier target navigated elsewhere is still the page the agent stopped on
    assert await reward([{"url": "__CLASSIFIEDS__/other", "locator": "", "required_contents": {"must_include": [
        "elsewhere"]}}, {"url": "last", "locator": "", "required_contents": {"must_include": ["a comment"]}}]) == 1
    grader = ScriptedGrader("correct")
    result = await evaluate(task([{"url": post, "locator": "func:get_query_text(__page__, '.title')",
                                   "required_contents": {"fuzzy_match": "a sunset |OR| dusk"}}]),
                            answer=None, page=services, graders=Graders(text=grader))
    assert result.reward == 1 and "Agent's answer: Sunset" in grader.prompts[0]


@browser_test
async def test_page_image_query_ssim_and_oracle(site, page, tmp_path):
    bases = {"classifieds": site.base, "wikipedia": site.base}
    task = task_by_id(CLASSIFIEDS, 6, bases)
    (tmp_path / "images").mkdir()
    drawing("red").save(tmp_path / "images" / "red_square.png")
    site.page("/index.php", item_page("$40", "A red stool."))
    site.file("/img/logo.png", encoded(drawing("gray", (40, 40)), "PNG"), "image/png")
    oracle = OracleAnswerer({"/img/photo.jpg": {"object": "stool", "colour": "red", "count": 1}})
    graders = Graders(vision=oracle, image_root=tmp_path)
    services = PlaywrightPageServices(page)

    site.file("/img/photo.jpg", encoded(drawing("red"), "JPEG"), "image/jpeg")
    await page.goto(site.base + "/")
    result = await evaluate(task, answer=None, page=services, graders=graders)
    assert result.reward == 1, result.checks
    assert result.graders == {"vision": "oracle:image-attributes"} and "best SSIM" in result.checks[1].detail
    assert await services.url() == site.base + "/index.php?page=item&id=84"  # it opened the query's URL

    strict = parse_task(make_task({"eval_types": ["page_image_query"], "page_image_query": [{
        "eval_image_url": "last", "eval_image_class": ".item-photos",
        "eval_fuzzy_image_match": "images/red_square.png", "ssim_threshold": 0.999}]}))
    result = await evaluate(strict, answer=None, page=services, graders=graders)
    assert result.reward == 0 and not result.checks[0].passed  # JPEG noise is under a 0.999 threshold

    site.file("/img/photo.jpg", encoded(drawing("blue", stripes=True), "JPEG"), "image/jpeg")
    blue = OracleAnswerer({"/img/photo.jpg": {"object": "stool", "colour": "blue", "count": 1},
                           "/x.png": {"colour": "red"}})
    result = await evaluate(task, answer=None, page=services, graders=Graders(vision=blue, image_root=tmp_path))
    assert result.reward == 0 and [c.passed for c in result.checks] == [False, False]

    no_images = parse_task(make_task({"eval_types": ["page_image_query"], "page_image_query": [{
        "eval_image_url": "last", "eval_image_class": ".gallery",
        "eval_vqa": [{"question": "Is this red? (yes/no)", "answer": "yes"}]}]}))
    result = await evaluate(no_images, answer=None, page=services, graders=graders)
    assert result.reward == 0 and result.checks[0].detail == "no images there"
    with pytest.raises(CannotScore, match="needs a vision model"):
        await evaluate(task, answer=None, page=services, graders=Graders(image_root=tmp_path))
    with pytest.raises(CannotScore, match="still holds a site placeholder"):
        await evaluate(load_task_file(CLASSIFIEDS)[6], answer=None, page=services, graders=graders)


# ---- the CLI, as processes ---------------------------------------------------------------------------

def cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for site in ("CLASSIFIEDS", "SHOPPING", "REDDIT", "WIKIPEDIA", "HOMEPAGE"):
        env.pop(site, None)
    return subprocess.run([sys.executable, "-m", "nodes.browser.vwa", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)


def test_cli_tasks_counts_and_lists_what_cannot_run(tmp_path):
    run = cli("tasks", str(CLASSIFIEDS), str(SHOPPING), str(UNSUPPORTED))
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    for expected in ("  classifieds 7", "  shopping 1", "  reddit 2", "  wikipedia 1", "  string_match 5",
                     "  url_match 3", "  program_html 2", "  page_image_query 1", "  rouge_match 1",
                     "  overall: easy 3, medium 5, hard 2", "  reasoning: easy 3, medium 5, hard 2"):
        assert expected in lines, (expected, run.stdout)
    assert "10 tasks in 3 files" in lines[0]
    blocked = run.stdout.split("cannot run (2 tasks), by reason:\n")[1]
    assert "  1 tasks: unknown func: helper 'forum_get_moderator_log'\n" in blocked
    assert "  1 tasks: unknown evaluator 'rouge_match'\n" in blocked
    assert "reddit_unsupported.raw.json: task 0: eval.eval_types: unknown evaluator 'rouge_match'\n" in blocked
    assert "task 1: eval.program_html.0.locator: unknown func: helper 'forum_get_moderator_log'\n" in blocked

    good = cli("tasks", str(CLASSIFIEDS), str(SHOPPING))
    assert good.returncode == 0 and good.stdout.splitlines()[-1] == "all tasks can run"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"task_id": 3, "sites": ["shopping"], "start_url": "__SHOPPING__", "intent": "x",
                               "eval": {"eval_types": ["string_match"], "reference_answers": {"one_of": 5}}}))
    run = cli("tasks", str(bad), str(SHOPPING))
    assert run.returncode == 2 and f"{bad}: task 3: eval.reference_answers.one_of" in run.stderr
    assert "1 tasks in 1 files" in run.stdout
    assert "all tasks can run" not in run.stdout and "1 of 2 files could not be read" in run.stdout
    missing = cli("tasks", str(tmp_path / "missing.json"))
    assert missing.returncode == 2 and f"{tmp_path / 'missing.json'}: cannot read" in missing.stderr


def test_cli_score_prints_the_reward_last():
    run = cli("score", str(SHOPPING), "--answer", "3")
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "1", run.stdout + run.stderr
    run = cli("score", str(SHOPPING), "--answer", "4")
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "0"
    assert "FAIL string_match: exact_match '3'" in run.stdout
    url = "http://localhost:9980/index.php?page=search&sOrder=i_price&sCategory=5/"
    run = cli("score", str(CLASSIFIEDS), "--task-id", "1", "--url", url, "--base-url", "classifieds=http://127.0.0.1:9980")
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "1", run.stdout + run.stderr
    run = cli("score", str(CLASSIFIEDS), "--task-id", "4", "--answer", "N/A")
    assert run.stdout.splitlines()[-1] == "1"
    run = cli("score", str(CLASSIFIEDS), "--task-id", "5", "--answer", "done")
    assert run.returncode == 3 and "task 5 needs the live page for program_html" in run.stderr and run.stdout == ""
    run = cli("score", str(CLASSIFIEDS), "--answer", "blue")
    assert run.returncode == 2 and "holds 7 tasks: pick one with --task-id" in run.stderr


async def test_oracle_reads_a_local_sites_answer_key() -> None:
    """The oracle takes a site's own /images.json rows (object under ``kind``) keyed by URL path."""
    from nodes.browser.sites.classifieds import Classifieds

    site = Classifieds(seed=3, size=5)
    rows = site.attributes()
    oracle = OracleAnswerer({row["url"]: row for row in rows})
    row = next(r for r in rows if r["kind"] != "upload")
    image = PageImage(src=f"http://127.0.0.1:9980{row['url']}", data=b"")
    assert await oracle(image, "What colour is it?") == row["colour"]
    assert await oracle(image, "How many shapes are there?") == str(row["count"])
    assert await oracle(image, "What object is shown?") == row["kind"]
