"""The WebUI judge end to end on real Chromium: the task folder format, the sandboxed rendering and
AES of hand-made generated pages against tests/data/webui/tea_counter (2 interactions).

One browser serves the whole module; each generated page is a copy of the ground truth with one
deliberate change, so what each test expects follows from that change alone.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nodes.browser.webui import aes
from nodes.browser.webui.__main__ import main
from nodes.browser.webui.render import ORIGIN, STEP_TIMEOUT_MS, Renderer, resolve_in
from nodes.browser.webui.scoring import Report, collect_folder, score_folder
from nodes.browser.webui.steps import Click, TaskError, load_steps
from nodes.browser.webui.task import check_annotations, load_task

TASK = Path(__file__).parent / "data" / "webui" / "tea_counter"
needs_chromium = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")


class Judge:
    """One event loop and one browser for the module, driven from plain (sync) tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.renderer = Renderer(settle_timeout_s=2.0)  # the bound a hung page costs
        self.loop.run_until_complete(self.renderer.start())
        self.task = load_task(TASK)

    def score(self, page_dir: Path) -> Report:
        return self.loop.run_until_complete(score_folder(self.renderer, self.task, page_dir))

    def close(self) -> None:
        self.loop.run_until_complete(self.renderer.close())
        self.loop.close()


@pytest.fixture(scope="module")
def judge() -> Iterator[Judge]:
    judge = Judge()
    yield judge
    judge.close()


@pytest.fixture(scope="module")
def truth(judge: Judge) -> Report:
    return judge.score(TASK)


def variant(tmp_path: Path, name: str, replace: dict[str, str] | None = None, html: str | None = None) -> Path:
    """A generated page folder: the ground truth's page files with ``replace`` applied to index.html
    (each old text must be there, so a change cannot silently miss) or ``html`` as the whole page."""
    folder = tmp_path / name
    shutil.copytree(TASK, folder, ignore=shutil.ignore_patterns("task.md", "steps.json"))
    index = folder / "index.html"
    text = index.read_text() if html is None else html
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    index.write_text(text)
    return folder


# -- the task folder format (no browser) ------------------------------------------------------------
def test_the_task_folder_loads_with_its_interactions():
    task = load_task(TASK)
    assert task.name == "tea_counter" and "Tea Counter" in task.description
    assert [[s.model_dump() for s in i] for i in task.interactions] == [
        [{"click": "#add"}], [{"type": "#name", "text": "Ann"}, {"click": "#greet"}]]


@pytest.mark.parametrize("steps, says", [
    ([[{"click": "#a"}], [{"type": "#n"}]], ["interaction 1, step 0", "'text'", '{"type": "<css selector>"']),
    ([[{"wait": 9000}]], ["interaction 0, step 0", "'wait'", "less than or equal to 5000"]),
    ([[{"click": "#a", "python": "driver.quit()"}]], ["'python'", "Extra inputs"]),
    ([[{"dance": "#a"}]], ["exactly one of click, hover, type, press, wait", "'dance'"]),
    ([[]], ["interaction 0 is empty"]),
    ({"click": "#a"}, ["a list of interactions"]),
])
def test_a_bad_steps_file_names_the_file_the_interaction_the_key_and_what_is_allowed(tmp_path, steps, says):
    path = tmp_path / "steps.json"
    path.write_text(json.dumps(steps))
    with pytest.raises(TaskError) as err:
        load_steps(path)
    for part in [str(path), *says]:
        assert part in str(err.value)


def test_bad_task_folders_name_the_path(tmp_path):
    with pytest.raises(TaskError, match="no such task folder"):
        load_task(tmp_path / "nope")
    folder = variant(tmp_path, "t")
    (folder / "task.md").write_text("x")
    with pytest.raises(TaskError, match=f"{folder / 'steps.json'}: no steps.json"):
        load_task(folder)
    (folder / "steps.json").write_text("[[{'click': 1}]]")
    with pytest.raises(TaskError, match="not readable JSON"):
        load_task(folder)


@pytest.mark.parametrize("html, says", [
    ('<p data-filter-by="id" data-evalby="text">x</p>', ":1: <p>: data-filter-by='id' has no filter; use one of"),
    ('<b>x</b>\n<p\n data-filter-by="text" data-evalby="text|colour">x</p>', ":2: <p>: data-evalby names 'colour'"),
    ('<p data-filter-by="text">x</p>', ":1: <p> needs both data-filter-by and data-evalby"),
    ("<p>x</p>", ": no element carries data-filter-by"),
])
def test_annotations_that_would_silently_score_nothing_are_refused(tmp_path, html, says):
    index = tmp_path / "index.html"
    index.write_text(html)
    with pytest.raises(TaskError) as err:
        check_annotations(index)
    assert f"{index}{says}" in str(err.value)
    assert check_annotations(TASK / "index.html") == 9  # the greeting is annotated though hidden at first


def test_files_are_served_only_from_inside_the_folder(tmp_path):
    folder = variant(tmp_path, "p")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, folder / "leak.txt")
    os.symlink(TASK / "style.css", folder / "alias.css")  # a link that stays... in another folder: refused too
    assert resolve_in(folder, ORIGIN) == (folder / "index.html").resolve()
    assert resolve_in(folder, ORIGIN + "_images/cup.svg") == (folder / "_images" / "cup.svg").resolve()
    for url in ("leak.txt", "alias.css", "../secret.txt", "%2e%2e/secret.txt", "_images", "missing.js",
                "_images/..%2f..%2fsecret.txt"):
        assert resolve_in(folder, ORIGIN + url) is None, url


# -- scoring in Chromium ----------------------------------------------------------------------------
@needs_chromium
def test_the_ground_truth_scores_100(truth: Report):
    assert truth.aes == pytest.approx(100.0, abs=1e-9)
    assert [p.name for p in truth.pages] == ["initial", "interaction 0", "interaction 1"]
    # initial: h1, 2 cards, img, count, add, name, greet (the greeting is hidden); after the click the
    # count and its card changed; after greeting, the greeting (now shown) and its card
    assert [(p.elements, p.matched) for p in truth.pages] == [(8, 8), (2, 2), (2, 2)]
    assert truth.errors == dict.fromkeys(truth.errors, 0) and truth.refused == truth.truth_refused == []


@needs_chromium
def test_a_blank_page_scores_0_and_both_interactions_fail(judge, truth, tmp_path):
    report = judge.score(variant(tmp_path, "blank", html=""))
    assert report.aes == 0.0
    assert report.errors == {"parse": 0, "render": 0, "interaction": 2, "match": 8, "attribute": 0}
    assert [p.weight for p in report.pages] == pytest.approx([p.weight for p in truth.pages], abs=1e-6)


@needs_chromium
def test_one_wrong_colour_costs_exactly_that_attribute(judge, truth, tmp_path):
    folder = variant(tmp_path, "red")
    css = folder / "style.css"
    css.write_text(css.read_text().replace("h1 { color: rgb(40, 60, 120);", "h1 { color: rgb(200, 30, 30);"))
    report = judge.score(folder)
    assert 0 < report.aes < 100
    assert report.errors == {"parse": 0, "render": 0, "interaction": 0, "match": 0, "attribute": 1}
    # the h1 (evalby text|font-size|color|font-weight) keeps text 6.8, font-size 9.8, font-weight 2.1 and
    # position 46; its colour scores mean(1 - 160/256, 1 - 30/256, 1 - 90/256) with α 30
    colour = (1 - 160 / 256 + 1 - 30 / 256 + 1 - 90 / 256) / 3
    h1_score = (6.8 + 9.8 + 2.1 + 46 + 30 * colour) / (6.8 + 9.8 + 2.1 + 46 + 30)
    h1 = next(e for e in judge.loop.run_until_complete(_gt_elements(judge)) if e.tag == "h1")
    total = sum(p.weight for p in truth.pages)
    expected = 100 * (total - aes.weight_of(h1) * (1 - h1_score)) / total
    assert report.aes == pytest.approx(expected, abs=1e-6)


async def _gt_elements(judge: Judge) -> list[aes.Element]:
    page = await judge.renderer.open(TASK)
    try:
        return (await page.collect())[0]
    finally:
        await page.close()


@needs_chromium
def test_a_missing_selector_is_an_interaction_error_and_the_page_keeps_its_weight(judge, truth, tmp_path):
    report = judge.score(variant(tmp_path, "nogreet", {'id="greet"': 'id="hello"'}))
    assert report.errors["interaction"] == 1 and "no element matches '#greet'" in report.messages[0]
    first, second, failed = report.pages
    assert (first.status, second.status, failed.status) == ("ok", "ok", "interaction")
    assert failed.score == 0.0 and failed.weight == pytest.approx(truth.pages[2].weight, abs=1e-6)
    w = [p.weight for p in truth.pages]
    # the first two pages are perfect (an id is not scored): AES = (w0 + w1) / (w0 + w1 + w2)
    assert report.aes == pytest.approx(100 * (w[0] + w[1]) / sum(w), abs=1e-6)


@needs_chromium
def test_broken_html_is_rendered_as_the_browser_repairs_it_and_scored(judge, tmp_path):
    report = judge.score(variant(tmp_path, "broken", html=(
        '<html><head><link rel="stylesheet" href="style.css"><body><h1 id="title">Tea Counter<div class="card"'
        '><p id="count">0 cups today<button id="add" class="primary">Add a cup</span></div></div></td>'
        '<input id="name" placeholder="Your name"<button id=greet>Greet me</b><p id="greeting" class="hidden"'
        '><script src="script.js"></script')))
    assert report.errors["parse"] == report.errors["render"] == 0
    assert len(report.pages) == 3 and 0 < report.aes < 100


@needs_chromium
def test_a_page_reaching_outside_is_refused_and_scored_on_what_it_shows(judge, tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    folder = variant(tmp_path, "reach", {"</body>": """
  <link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">
  <img src="http://example.com/pixel.png" style="display: none">
  <script>
    window.reached = [];
    for (const url of ['http://example.com/data.json', 'file:///etc/hostname', '/leak.txt', 'http://webui.page:8080/'])
      fetch(url).then(r => r.ok && r.text()).then(t => { if (t) window.reached.push(url); }).catch(() => {});
    setTimeout(() => { location.href = 'http://example.com/away'; }, 0);  // a navigation out: the tab stays
  </script>
</body>"""})
    os.symlink(outside, folder / "leak.txt")
    report = judge.score(folder)
    assert report.aes == pytest.approx(100.0, abs=1e-9)  # what it shows is the ground truth
    refused = "\n".join(report.refused)
    for url in ("http://example.com/data.json", "http://example.com/pixel.png", "fonts.googleapis.com",
                "example.com/away",  # Chromium may upgrade a navigation to https first
                "http://webui.page/leak.txt", "webui.page:8080"):
        assert url in refused, url

    async def reached() -> list[str]:
        page = await judge.renderer.open(folder)
        try:
            await page.page.wait_for_timeout(200)
            return await page.page.evaluate("window.reached")
        finally:
            await page.close()

    assert judge.loop.run_until_complete(reached()) == []


@needs_chromium
def test_a_page_that_never_yields_is_a_render_error_scored_0(judge, tmp_path):
    report = judge.score(variant(tmp_path, "hang", {"<body>": "<body><script>for (;;) {}</script>"}))
    assert report.aes == 0.0 and report.pages == []
    assert report.errors["render"] == 1 and "did not answer" in report.messages[0]


@needs_chromium
def test_an_interaction_failing_on_the_ground_truth_is_a_broken_task(judge, tmp_path):
    task_dir = variant(tmp_path, "task")
    (task_dir / "task.md").write_text("x")
    (task_dir / "steps.json").write_text('[[{"click": "#add"}], [{"click": "#nope"}]]')
    with pytest.raises(TaskError, match=r"steps.json: interaction 1 fails on the ground truth: .*'#nope'"):
        judge.loop.run_until_complete(score_folder(judge.renderer, load_task(task_dir), TASK))


@needs_chromium
def test_dialogs_are_accepted(judge, truth, tmp_path):
    folder = variant(tmp_path, "alerts", {"<script src=\"script.js\"></script>": (
        "<script>alert('hi'); document.getElementById('add').addEventListener('click', () => {"
        " if (confirm('sure?')) alert('added'); });</script><script src=\"script.js\"></script>")})
    report = judge.score(folder)
    assert report.aes == pytest.approx(100.0, abs=1e-9) and report.errors["interaction"] == 0


@needs_chromium
def test_one_rendering_scores_under_both_rules_and_a_wrong_placeholder_only_costs_when_corrected(judge, tmp_path):
    folder = variant(tmp_path, "email", {'placeholder="Your name"': 'placeholder="Email"'})
    collected = judge.loop.run_until_complete(collect_folder(judge.renderer, judge.task, folder))
    released, corrected = collected.report("released"), collected.report("corrected")
    assert (released.rules, corrected.rules) == ("released", "corrected")
    # released compares an input's visible text ("" on both sides) for its placeholder: nothing lost
    assert released.aes == pytest.approx(100.0, abs=1e-9) and released.errors["attribute"] == 0
    # corrected: the input still matches its own place (GIoU 1 - filter 1 = 0) but loses its placeholder score
    assert 0 < corrected.aes < 100 and corrected.errors["attribute"] == 1 and corrected.errors["match"] == 0
    assert judge.score(folder).aes == pytest.approx(released.aes, abs=1e-9)  # score_folder's default: released


# -- the CLI ----------------------------------------------------------------------------------------
def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nodes.browser.webui", "score", *args], capture_output=True,
                          text=True, timeout=60)


@needs_chromium
def test_the_cli_prints_aes_on_its_last_line(tmp_path):
    done = cli(str(TASK), str(variant(tmp_path, "nogreet", {'id="greet"': 'id="hello"'})))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1].startswith("AES ") and 0 < float(lines[-1].split()[1]) < 100
    assert any(line.strip().startswith("interaction 1") and "[interaction:" in line for line in lines)
    assert "errors: parse 0, render 0, interaction 1, match 0, attribute 0" in done.stdout
    assert lines[0].endswith("rules released")  # the default
    corrected = cli(str(TASK), str(variant(tmp_path, "email", {'placeholder="Your name"': 'placeholder="Email"'})),
                    "--rules", "corrected")
    assert corrected.returncode == 0, corrected.stderr
    assert corrected.stdout.splitlines()[0].endswith("rules corrected")
    assert float(corrected.stdout.strip().splitlines()[-1].split()[1]) < 100


def test_the_cli_refuses_bad_inputs_naming_the_path(tmp_path, capsys):
    def refused(*args: str) -> str:  # the CLI's own main, in-process: no browser starts for these
        assert main(["score", *args]) == 2
        return capsys.readouterr().err

    missing = tmp_path / "missing"
    assert f"{missing}: no such page folder" in refused(str(TASK), str(missing))
    empty = tmp_path / "empty"
    empty.mkdir()
    assert f"{empty / 'index.html'}: the page folder has no index.html" in refused(str(TASK), str(empty))
    task = variant(tmp_path, "task")
    (task / "task.md").write_text("x")
    (task / "steps.json").write_text('[[{"click": "#add", "sleep": 1}]]')
    assert f"{task / 'steps.json'}: interaction 0, step 0: key 'sleep'" in refused(str(task), str(task))
    assert f"{tmp_path / 'no_task'}: no such task folder" in refused(str(tmp_path / "no_task"), str(task))


@needs_chromium
def test_the_step_timeout_is_the_renderers(judge, tmp_path):
    folder = variant(tmp_path, "disabled", {'<button id="add" class="primary"': '<button id="add" class="primary" disabled'})

    async def click_disabled() -> str | None:
        page = await judge.renderer.open(folder)
        try:
            return await page.run([Click(click="#add")])
        finally:
            await page.close()

    judge.renderer.step_timeout_ms = 300
    try:
        why = judge.loop.run_until_complete(click_disabled())
    finally:
        judge.renderer.step_timeout_ms = STEP_TIMEOUT_MS
    assert why is not None and "Timeout 300ms exceeded" in why


@needs_chromium
@pytest.mark.parametrize("popup", [False, True])
def test_a_reused_page_keeps_nothing_of_the_page_before(judge, tmp_path, popup):
    """The renderer reuses contexts between folders (render.py's notes): what one page stored (local
    and session storage, a cookie, IndexedDB, window.name) is gone for the next; a page that opened
    a window does not hand its context on at all."""
    opener = "window.open('/index.html');" if popup else ""
    writer = variant(tmp_path, "writer", {"</body>": f"""<script>
    localStorage.setItem('k', 'v'); sessionStorage.setItem('k', 'v'); document.cookie = 'k=v';
    window.name = 'kept'; indexedDB.open('db', 1); {opener}
  </script></body>"""})
    reader = variant(tmp_path, "reader")

    async def both() -> tuple[bool, int, Any]:
        first = await judge.renderer.open(writer)
        context = first.context
        await first.page.wait_for_timeout(100)
        await first.close()
        second = await judge.renderer.open(reader)
        try:
            found = await second.page.evaluate("""async () => [localStorage.length, sessionStorage.length,
                document.cookie, window.name, (await indexedDB.databases()).length]""")
            return second.context is context, len(second.context.pages), found
        finally:
            await second.close()

    reused, pages, found = judge.loop.run_until_complete(both())
    assert (reused, pages) == (not popup, 1)
    assert found == [0, 0, "", "", 0]


def _chromium_browsers() -> list[int]:
    """This process's Chromium browser processes (not their renderers or helpers), read from /proc."""
    from tests.helpers import children_of

    found = []
    for pid in children_of(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0].endswith(b"chromium") and not any(a.startswith(b"--type=") for a in argv):
            found.append(pid)
    return found


@needs_chromium
def test_a_chromium_that_stops_answering_is_killed_and_the_folder_opens_in_a_fresh_one(tmp_path):
    """Chromium is stopped from outside (SIGSTOP: starved, or hung, it answers nothing). Opening a
    folder used to wait for ever for a context or tab; now, past the renderer's bound, that Chromium
    and its driver are killed and the folder opens in a fresh one, and it scores as before."""
    from tests.helpers import alive

    async def run() -> tuple[Report, float, int, int]:
        # the bound well above a healthy open on a loaded machine, so only the stopped one trips it
        renderer = Renderer(settle_timeout_s=2.0, browser_timeout_s=15.0)
        try:
            first = await score_folder(renderer, load_task(TASK), TASK)
            (stuck,) = _chromium_browsers()  # one, though scoring opened both folders at once
            os.kill(stuck, signal.SIGSTOP)
            started = asyncio.get_running_loop().time()
            again = await score_folder(renderer, load_task(TASK), TASK)
            took = asyncio.get_running_loop().time() - started
            assert first.aes == again.aes == 100.0
            return again, took, stuck, renderer.restarts
        finally:
            await renderer.close()

    report, took, stuck, restarts = asyncio.run(run())
    assert restarts == 1 and took < 90, took
    assert not alive(stuck), "the stuck Chromium was left behind"
    assert _chromium_browsers() == []  # the fresh one closed with the renderer
