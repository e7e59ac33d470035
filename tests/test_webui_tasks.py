"""The shipped WebUI task set (nodes/browser/webui/tasks): every folder loads and is self-contained
(no browser), and, on real Chromium, every ground truth scores 100, a blank page 0 and the task's
``defect/`` page (the ground truth with one deliberate change) strictly between, under both rule
sets (released and corrected).

All 3 x N renderings share one browser and run concurrently (a few at a time) in one module
fixture, each scored under both rule sets from what was collected once; the per-task tests only
read its reports.
"""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodes.browser.webui.__main__ import main
from nodes.browser.webui.aes import RULES
from nodes.browser.webui.make_shots import shot_names
from nodes.browser.webui.render import Renderer
from nodes.browser.webui.scoring import Collected, Report, collect_folder
from nodes.browser.webui.steps import TaskError, step_kind
from nodes.browser.webui.task import KINDS, TASKS_DIR, check_annotations, load_task, task_kind

NAMES = sorted(p.name for p in TASKS_DIR.iterdir() if p.is_dir())
PAGE_FILES = ("index.html", "style.css", "script.js")
BLANK = "<html><body></body></html>"
CONCURRENT = 3  # scorings at a time (each drives two pages); 6 was slower on a loaded 2-core machine
# A step's bound: generous, since a ground truth's step that times out on a loaded machine would fail the
# task, and free on the blank and defect pages (a selector matching nothing fails at once).
STEP_TIMEOUT_MS = 10_000
needs_chromium = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
# The first browser test sets up the module's scorings (about 75 pages, 80-100 s on a loaded 2-core
# machine), beyond the suite's default 120 s per test on a busier one.
browser_timeout = pytest.mark.timeout(600)


def page_text(folder: Path) -> str:
    return "\n".join((folder / f).read_text(encoding="utf-8") for f in PAGE_FILES if (folder / f).is_file())


# -- the set as a whole and each folder, without a browser -------------------------------------------
def test_the_set_covers_every_kind_with_static_and_interactive_tasks():
    tasks = {name: load_task(TASKS_DIR / name) for name in NAMES}
    assert len(tasks) >= 24
    kinds = {kind: [n for n in NAMES if task_kind(n) == kind] for kind in KINDS}
    assert all(len(names) >= 4 for names in kinds.values()), kinds
    interactive = [n for n, t in tasks.items() if t.interactions]
    assert len(interactive) >= 12 and len(tasks) - len(interactive) >= 6
    assert all(t.interactions for n, t in tasks.items() if task_kind(n) == "widget")


@pytest.mark.parametrize("name", NAMES)
def test_the_task_folder_loads_and_is_self_contained(name):
    root = TASKS_DIR / name
    task = load_task(root)
    assert task_kind(name) in KINDS
    assert check_annotations(root / "index.html") >= 8
    assert len(task.interactions) <= 3
    assert all(step_kind(s) in ("click", "type", "press") for i in task.interactions for s in i)
    page = page_text(root)
    # nothing from outside the folder: no absolute URL, no protocol-relative one
    assert not re.search(r"""(https?:|file:|["'(]\s*//)""", page), "an URL outside the folder"
    # every picture the page uses is in the folder and named in the description
    for image in sorted(set(re.findall(r"_images/[\w.-]+", page))):
        assert (root / image).is_file(), image
        assert image in task.description, image
    # the ids, classes and attribute values the steps select on are in the description
    for interaction in task.interactions:
        for step in interaction:
            selector = next(v for k, v in step.model_dump().items() if k in ("click", "type", "press"))
            if f"`{selector}`" in task.description:  # named whole, e.g. `.star[data-value="4"]`
                continue
            for word in re.findall(r"[#.]([\w-]+)|\[([\w-]+)", selector):
                word = word[0] or word[1]
                assert f"`{word}`" in task.description or f"`#{word}`" in task.description, (selector, word)


@pytest.mark.parametrize("name", NAMES)
def test_the_defect_page_is_the_ground_truth_with_one_change(name):
    root = TASKS_DIR / name
    defect = root / "defect"
    assert (defect / "index.html").is_file()
    changed = [f for f in PAGE_FILES if (root / f).is_file() and (root / f).read_bytes() != (defect / f).read_bytes()]
    assert len(changed) == 1, changed
    for image in sorted(set(re.findall(r"_images/[\w.-]+", page_text(defect)))):  # the screenshots stay out
        assert (defect / image).read_bytes() == (root / image).read_bytes(), image


@pytest.mark.parametrize("name", NAMES)
def test_the_description_shows_a_screenshot_per_page(name):
    task = load_task(TASKS_DIR / name)
    shots = shot_names(len(task.interactions))
    assert re.findall(r"_images/shot_\d+\.png", task.description) == shots
    assert sorted(str(p.relative_to(task.root)) for p in task.root.glob("_images/shot_*.png")) == shots
    for shot in shots:  # a PNG of the 1920x1080 window (IHDR width and height)
        head = (task.root / shot).read_bytes()[:24]
        assert head.startswith(b"\x89PNG") and (int.from_bytes(head[16:20]), int.from_bytes(head[20:24])) == (1920, 1080)


def test_the_lister_prints_kinds_counts_and_names_broken_folders(tmp_path, capsys):
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert f"{len(NAMES)} tasks (" in out and ", 0 broken" in out
    assert re.search(r"^widget_counter\s+widget\s+3\s+\d+$", out, re.M)
    assert re.search(r"^landing_bakery\s+landing\s+0\s+17$", out, re.M)
    for good in ("widget_tabs", "form_login"):
        shutil.copytree(TASKS_DIR / good, tmp_path / good)
    shutil.copytree(TASKS_DIR / "nav_drawer", tmp_path / "nav_nosteps")
    (tmp_path / "nav_nosteps" / "steps.json").unlink()
    shutil.copytree(TASKS_DIR / "form_login", tmp_path / "signin")
    assert main(["tasks", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"^nav_nosteps\s+BROKEN\s+.*steps.json: no steps.json", out, re.M)
    assert re.search(r"^signin\s+BROKEN\s+signin: a task folder's name starts with its kind", out, re.M)
    assert "per kind: landing 0, form 1, gallery 0, nav 0, widget 1" in out
    assert "2 tasks (2 interactive), 2 broken" in out
    assert main(["tasks", str(tmp_path / "none")]) == 2
    assert f"{tmp_path / 'none'}: no such folder" in capsys.readouterr().err


def test_a_name_without_a_kind_is_refused():
    with pytest.raises(TaskError, match="starts with its kind"):
        task_kind("carousel")
    with pytest.raises(TaskError, match="starts with its kind"):
        task_kind("slider_x")


# -- scoring in Chromium ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> Iterator[dict[tuple[str, str], dict[str, Report] | BaseException]]:
    """(task, "truth" | "blank" | "defect") -> its report per rule set (or the exception), all
    rendered at once."""
    blank = tmp_path_factory.mktemp("blank")
    (blank / "index.html").write_text(BLANK)

    async def run() -> dict[tuple[str, str], Collected | BaseException]:
        renderer = Renderer(step_timeout_ms=STEP_TIMEOUT_MS)
        gate = asyncio.Semaphore(CONCURRENT)

        async def one(name: str, page: Path) -> Collected:
            async with gate:
                return await collect_folder(renderer, load_task(TASKS_DIR / name), page)

        jobs = {(n, which): one(n, page) for n in NAMES
                for which, page in (("truth", TASKS_DIR / n), ("blank", blank), ("defect", TASKS_DIR / n / "defect"))}
        try:
            await renderer.start()
            done = await asyncio.gather(*jobs.values(), return_exceptions=True)
        finally:
            await renderer.close()
        return dict(zip(jobs, done))

    collected = asyncio.run(run())
    yield {key: c if isinstance(c, BaseException) else {rules: c.report(rules) for rules in RULES}
           for key, c in collected.items()}


def _report(reports, name: str, which: str, rules: str) -> Report:
    report = reports[name, which]
    if isinstance(report, BaseException):
        raise report
    return report[rules]


@needs_chromium
@browser_timeout
@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("name", NAMES)
def test_truth_scores_100_blank_0_and_the_defect_in_between(reports, name, rules):
    truth, blank, defect = (_report(reports, name, w, rules) for w in ("truth", "blank", "defect"))
    steps = len(load_task(TASKS_DIR / name).interactions)
    assert truth.aes == pytest.approx(100.0, abs=1e-9), "\n".join(truth.lines())
    assert truth.errors == dict.fromkeys(truth.errors, 0)
    assert len(truth.pages) == 1 + steps and all(p.weight > 0 and p.elements > 0 for p in truth.pages)
    assert truth.refused == truth.truth_refused == []  # every file it asks for is in the folder
    assert blank.aes == 0.0 and blank.errors["interaction"] == steps
    assert 0.0 < defect.aes < 100.0, "\n".join(defect.lines())
    assert defect.refused == [] and defect.errors["parse"] == defect.errors["render"] == 0


@needs_chromium
@browser_timeout
def test_a_carousel_dot_that_lost_its_highlight_is_scored(reports):
    truth = _report(reports, "widget_carousel", "truth", "corrected")
    # after "next": the picture, its caption, the slide and the two dots whose highlight moved; the first
    # dot then reads like the unchanged third one but is scored all the same. After "prev" twice, likewise.
    assert [p.elements for p in truth.pages] == [9, 5, 5]
    # released, a changed dot that reads like an unchanged one is excluded with it: one dot fewer per page
    assert [p.elements for p in _report(reports, "widget_carousel", "truth", "released").pages] == [9, 4, 4]
