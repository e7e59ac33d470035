"""MageBench's own WebUI task folders (tests/data/webui/magebench/Reading-Lamp, written for these
tests in MageBench's layout): the loader reads tasks.md and the annotated page, translates
actions.py to steps without running it (or refuses it with file:line), the CLI scores the ground
truth 100 against itself and webui.env plays such a folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nodes.browser.webui.env import _task_images, task_folders
from nodes.browser.webui.magebench_folder import css_selector, is_magebench_folder, load_actions
from nodes.browser.webui.steps import MAX_WAIT_MS, Click, Hover, Press, TaskError, TypeText, Wait
from nodes.browser.webui.task import check_annotations, load_task
from tests.test_webui_env import gold_config, run_graph

SETS = Path(__file__).parent / "data" / "webui" / "magebench"
FOLDER = SETS / "Reading-Lamp"
UNSUPPORTED = Path(__file__).parent / "data" / "webui" / "magebench_unsupported_actions.py"
needs_chromium = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")
GUEST = '[name="guest"]'


def test_the_folder_loads_with_its_description_and_translated_steps():
    assert is_magebench_folder(FOLDER)
    task = load_task(FOLDER)
    assert task.name == "Reading-Lamp" and task.steps_file == "actions.py"
    assert task.description == (FOLDER / "tasks.md").read_text()
    assert task.interactions == (
        (Click(click="button.switch"), Wait(wait=500), Hover(hover="#lamp")),
        (Click(click=GUEST), TypeText(type=GUEST, text="Ann"), Press(press=GUEST, key="Enter"), Hover(hover=".note"),
         Wait(wait=1000)),
    )
    # the pictures of tasks.md (./_images/...) resolve inside the folder, as the env sends them
    frames, notes = _task_images(task, limit=10)
    assert len(frames) == 3 and notes == [] and all(f.shape == (1080, 1920, 3) for f in frames)


def test_magebench_annotations_the_metric_does_not_score_are_let_through_there_only():
    # the heading's data-evalby names line-height, as MageBench's own pages do: skipped, not refused
    with pytest.raises(TaskError, match="data-evalby names 'line-height'"):
        check_annotations(FOLDER / "index.html")
    assert check_annotations(FOLDER / "index.html", strict=False) == 6


def test_an_unsupported_statement_is_refused_with_the_file_and_line(tmp_path):
    folder = tmp_path / "Reading-Lamp"
    shutil.copytree(FOLDER, folder)
    shutil.copy(UNSUPPORTED, folder / "actions.py")
    with pytest.raises(TaskError) as err:
        load_task(folder)
    message = str(err.value)
    assert message.startswith(f"{folder / 'actions.py'}:10: in toggle_all(): "
                              '`for box in driver.find_elements(By.CSS_SELECTOR, "input"): ...`')
    assert "allowed: el = driver.find_element(By.CSS_SELECTOR" in message


@pytest.mark.parametrize("body, line, says", [
    ('    driver.find_element(By.XPATH, "//button").click()', 2, "has no CSS selector equivalent"),
    ('    driver.execute_script("document.body.remove()")', 2, ".execute_script() is not translated"),
    ('    el = driver.find_element(By.ID, "a")\n    ActionChains(driver).drag_and_drop(el, el).perform()', 3,
     "ActionChains.drag_and_drop() is not translated"),
    ('    el = driver.find_element(By.ID, "a")\n    el.send_keys(name)', 3, "send_keys takes strings and Keys."),
    ('    if True:\n        pass', 2, "this kind of statement is not translated"),
    ("    time.sleep(delay)", 2, "time.sleep needs a number of seconds"),
    ('    other.find_element(By.ID, "a").click()', 2, "not an element found by driver.find_element"),
])
def test_each_refusal_names_the_line_and_why(tmp_path, body, line, says):
    path = tmp_path / "actions.py"
    path.write_text(f"def act(driver):\n{body}\n\nactions = [act]\n")
    with pytest.raises(TaskError) as err:
        load_actions(path)
    assert str(err.value).startswith(f"{path}:{line}: in act(): `") and says in str(err.value), str(err.value)


@pytest.mark.parametrize("source, says", [
    ("def act(driver):\n    pass\n", ": no module-level `actions = [f1, f2, ...]` list"),
    ("actions = [missing]\n", ":1: `actions` names 'missing', which is not a function"),
    ("actions = ['act']\n", ":1: `actions` must be a list of function names"),
    ("def act(driver):\n    pass\n\nactions = [act]\n", ":1: act() does nothing that can be translated"),
    ("def act(driver)\n", ":1: not Python"),
])
def test_a_bad_actions_file_is_refused(tmp_path, source, says):
    path = tmp_path / "actions.py"
    path.write_text(source)
    with pytest.raises(TaskError) as err:
        load_actions(path)
    assert f"{path}{says}" in str(err.value)


def test_more_translations_and_selectors():
    assert css_selector("ID", "lamp") == "#lamp" and css_selector("ID", "1st") == '[id="1st"]'
    assert css_selector("CLASS_NAME", "btn") == ".btn" and css_selector("CLASS_NAME", "a b") is None
    assert css_selector("NAME", 'say "hi"') == '[name="say \\"hi\\""]' and css_selector("TAG_NAME", "li") == "li"
    assert css_selector("css selector", "a > b") == "a > b" and css_selector("XPATH", "//a") is None


def test_chains_keys_selenium3_spellings_and_a_capped_sleep(tmp_path):
    path = tmp_path / "actions.py"
    path.write_text(
        "def helper(driver):  # not listed: never translated\n    driver.quit()\n\n"
        "def act(d):\n"
        "    'a docstring'\n"
        "    box = d.find_element_by_id('q')\n"
        "    box.send_keys('tea', Keys.TAB)\n"
        "    ActionChains(d).move_to_element(box).click().perform()\n"
        "    d.find_element('css selector', 'ul > li').click()\n"
        "    time.sleep(30)\n\n"
        "actions = [act]\n")
    interactions, names = load_actions(path)
    assert names == ["act"]
    assert interactions == [[TypeText(type="#q", text="tea"), Press(press="#q", key="Tab"), Hover(hover="#q"),
                             Click(click="#q"), Click(click="ul > li"), Wait(wait=MAX_WAIT_MS)]]


def test_a_folder_with_steps_json_is_ours_even_with_an_actions_py(tmp_path):
    folder = tmp_path / "widget_lamp"
    shutil.copytree(FOLDER, folder)
    (folder / "task.md").write_text("x")
    (folder / "steps.json").write_text('[[{"click": "button.switch"}]]')
    assert not is_magebench_folder(folder)
    with pytest.raises(TaskError, match="line-height"):  # our folders are checked strictly
        load_task(folder)


def test_the_env_finds_magebench_folders():
    assert task_folders(SETS) == [FOLDER] and task_folders(FOLDER) == [FOLDER]


def test_the_tasks_lister_lists_magebench_folders_as_their_own_kind(capsys):
    from nodes.browser.webui.__main__ import main

    assert main(["tasks", str(FOLDER.parent)]) == 0
    out = capsys.readouterr().out
    assert "Reading-Lamp" in out and "BROKEN" not in out
    assert "magebench 1" in out and "1 tasks (1 interactive), 0 broken" in out


@needs_chromium
@pytest.mark.parametrize("rules", ["released", "corrected"])
def test_the_cli_scores_the_ground_truth_100_against_itself(rules):
    done = subprocess.run([sys.executable, "-m", "nodes.browser.webui", "score", str(FOLDER), str(FOLDER),
                           "--rules", rules], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "AES 100.00", done.stdout
    assert "errors: parse 0, render 0, interaction 0, match 0, attribute 0" in done.stdout
    assert [line.split()[0] for line in lines[1:4]] == ["initial", "interaction", "interaction"]


@needs_chromium
def test_webui_env_plays_a_magebench_folder(tmp_path):
    config = gold_config()
    next(n for n in config["nodes"] if n["id"] == "env")["params"]["tasks"] = str(SETS)
    out, records = run_graph(tmp_path, config, "magebench")
    assert [r["status"] for r in records] == ["completed"]
    m = records[0]["metrics"]
    assert m["aes"] == 100.0 and m["task"] == "Reading-Lamp", m
    page = out / "webui" / "env" / "ep00000" / "round_0"
    assert (page / "_images" / "origin.png").is_file()  # the description's pictures go beside the page
    assert json.loads((out / "summary.json").read_text())["webui"]["rules"] == "released"  # judge.webui's default
