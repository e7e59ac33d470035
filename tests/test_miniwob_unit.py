"""MiniWoB++ pack, the pure parts: the task list read from the installed package, task names and
params with clear errors, MiniWoB's extra actions, the page-end reading and the scripted solver's
reading of pages (synthetic snapshots in SNAPSHOT_JS's shape)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from nodes.browser.miniwob import html_dir
from nodes.browser.miniwob.actions import parse_miniwob_action
from nodes.browser.miniwob.env import MiniwobParams
from nodes.browser.miniwob.page import PageEnd, page_end
from nodes.browser.miniwob.solver import SOLVED_TASKS, SolverError, next_action, quoted
from nodes.browser.miniwob.tasks import TaskNameError, all_tasks, pick_tasks

pytestmark = pytest.mark.unit


def test_the_installed_package_ships_the_miniwob_and_flightwob_tasks() -> None:
    tasks = all_tasks()
    names = [t.name for t in tasks]
    assert len(names) == len(set(names)) >= 129
    assert {"click-button", "enter-text", "drag-box", "flight.AA", "flight.Alaska"} <= set(names)
    for task in tasks:
        assert (html_dir() / task.path).is_file(), task
    assert next(t for t in tasks if t.name == "click-button").window == (500, 320)
    assert next(t for t in tasks if t.name == "flight.AA").window == (600, 800)
    assert SOLVED_TASKS <= set(names) and len(SOLVED_TASKS) >= 15


def test_a_task_list_from_a_folder_and_the_names_a_param_may_give(tmp_path: Path) -> None:
    (tmp_path / "miniwob").mkdir()
    (tmp_path / "flight" / "Zed").mkdir(parents=True)
    for name in ("b-task", "a-task"):
        (tmp_path / "miniwob" / f"{name}.html").write_text("<html></html>")
    (tmp_path / "flight" / "Zed" / "wrapper.html").write_text("<html></html>")
    known = all_tasks(tmp_path)
    assert [(t.name, t.path) for t in known] == [("a-task", "miniwob/a-task.html"), ("b-task", "miniwob/b-task.html"),
                                                 ("flight.Zed", "flight/Zed/wrapper.html")]
    assert [t.name for t in pick_tasks("all", known)] == ["a-task", "b-task", "flight.Zed"]
    assert [t.name for t in pick_tasks("miniwob", known)] == ["a-task", "b-task"]
    assert [t.name for t in pick_tasks(["b-task", "a-task"], known)] == ["b-task", "a-task"]
    with pytest.raises(TaskNameError, match=r"'a-tsk' is not a MiniWoB task.*did you mean a-task"):
        pick_tasks("a-tsk", known)
    with pytest.raises(TaskNameError, match="the list is empty"):
        pick_tasks([], known)


def test_params_refuse_the_browser_params_that_the_task_decides() -> None:
    assert MiniwobParams(task="click-button", seeds=20).seeds == 20
    with pytest.raises(ValidationError, match="start_url, viewport: not a miniwob.env param"):
        MiniwobParams(start_url="http://x", viewport=(10, 10))
    with pytest.raises(ValidationError, match="seeds"):
        MiniwobParams(seeds=0)
    with pytest.raises(ValidationError, match="reward"):
        MiniwobParams(reward="scaled")


def test_miniwob_actions_parse_and_bad_ones_say_how_to_write_them() -> None:
    view = (500, 320)
    click = parse_miniwob_action("click_xy [80] [120.5]", view)
    assert click is not None and (click.name, click.points) == ("click_xy", ((80.0, 120.5),))
    drag = parse_miniwob_action("drag [1] [2] [3] [4]", view)
    assert drag is not None and drag.points == ((1.0, 2.0), (3.0, 4.0))
    typed = parse_miniwob_action("type_text [a [b] c]", view)
    assert typed is not None and typed.text == "a [b] c"
    assert parse_miniwob_action("click [12]", view) is None  # the browser node's, not MiniWoB's
    assert parse_miniwob_action(42, view) is None
    with pytest.raises(ValueError, match=r"write it as drag \[x1\] \[y1\] \[x2\] \[y2\]"):
        parse_miniwob_action("drag [1] [2]", view)
    with pytest.raises(ValueError, match="outside the page"):
        parse_miniwob_action("click_xy [500] [10]", view)
    with pytest.raises(ValueError, match="needs the text"):
        parse_miniwob_action("type_text []", view)


def test_the_page_end_is_the_pages_own_and_leaving_the_page_fails() -> None:
    assert page_end({"left": False, "end": None, "utterance": "x"}) is None
    assert page_end({"left": False, "end": {"done": True, "reward": 0.82, "raw": 1, "reason": None}}) == \
        PageEnd(1.0, 0.82, None)
    assert page_end({"left": True}) == PageEnd(-1.0, -1.0, "left the task page")
    with pytest.raises(ValueError, match="not a mapping"):
        page_end(None)


def el(tag: str, x: float = 10, y: float = 20, **kw: Any) -> dict[str, Any]:
    base = {"tag": tag, "id": "", "cls": "", "type": "", "text": "", "all": "", "value": None, "checked": None,
            "dtype": "", "label": "", "focused": False, "options": None, "selected": None,
            "x": x, "y": y, "w": 20, "h": 10, "left": x - 10, "top": y - 5}
    return {**base, **kw}


def snap(utterance: str, *elements: dict[str, Any]) -> dict[str, Any]:
    return {"utterance": utterance, "elements": [el("body", 80, 100), *elements]}


def test_the_solver_clicks_what_the_utterance_names() -> None:
    page = snap('Click on the "Okay" button.', el("button", 30, 60, all="ok"), el("button", 50, 90, all="Okay"))
    assert next_action("click-button", page) == "click_xy [50.0] [90.0]"
    assert quoted('Enter the username "ab" and the password "c d"') == ["ab", "c d"]
    page = snap("Click on Tab #2.", el("a", 10, 60, all="Tab #1"), el("a", 40, 60, all="Tab #2"))
    assert next_action("click-tab", page) == "click_xy [40.0] [60.0]"
    with pytest.raises(SolverError, match='no button "Yes" on the page'):
        next_action("click-button", snap('Click on the "Yes" button.', el("button", all="No")))
    with pytest.raises(SolverError, match="no scripted solver for book-flight"):
        next_action("book-flight", page)


def test_the_solver_fills_fields_in_turn_then_submits() -> None:
    utterance = 'Enter the username "kim" and the password "x1" into the text fields and press login.'
    user, password = el("input", 50, 60, id="username", value=""), el("input", 50, 80, id="password", value="")
    submit = el("button", 40, 100, id="subbtn", all="Login")
    assert next_action("login-user", snap(utterance, user, password, submit)) == "click_xy [50.0] [60.0]"
    user.update(focused=True)
    assert next_action("login-user", snap(utterance, user, password, submit)) == "type_text [kim]"
    user.update(value="kimx")  # wrong text in a focused field: select it, typing then replaces it
    assert next_action("login-user", snap(utterance, user, password, submit)) == "press [Control+a]"
    user.update(value="kim", focused=False)
    password.update(value="x1")
    assert next_action("login-user", snap(utterance, user, password, submit)) == "click_xy [40.0] [100.0]"


def test_the_solver_sets_checkboxes_to_the_utterance_then_submits() -> None:
    boxes = [el("input", 10, 50 + 10 * i, type="checkbox", label=name, checked=checked)
             for i, (name, checked) in enumerate([("ab", False), ("cd", True), ("ef", False)])]
    submit = el("button", 30, 120, id="subbtn")
    assert next_action("click-checkboxes", snap("Select ab, ef and click Submit.", *boxes, submit)) == \
        "click_xy [10.0] [50.0]"
    boxes[0]["checked"] = True
    assert next_action("click-checkboxes", snap("Select ab, ef and click Submit.", *boxes, submit)) == \
        "click_xy [10.0] [60.0]"  # cd is checked but not named: unchecked next
    assert next_action("click-checkboxes", snap("Select nothing and click Submit.",
                                                *[{**b, "checked": False} for b in boxes], submit)) == \
        "click_xy [30.0] [120.0]"


def test_the_solver_computes_arithmetic_drags_into_the_box_and_picks_from_a_list() -> None:
    problem = el("div", 20, 50, id="math-problem", all="7 x 3 =")
    answer = el("input", 60, 50, id="math-answer", value="", focused=True)
    assert next_action("simple-arithmetic", snap("Solve the math problem and type your answer.", problem, answer,
                                                 el("button", id="subbtn"))) == "type_text [21]"
    small = el("div", 20, 60, id="draggableSmall", w=10, h=10, left=15, top=55)
    large = el("div", 100, 100, id="draggableLarge", w=40, h=40, left=80, top=80)
    assert next_action("drag-box", snap("Drag the smaller box...", small, large, el("button", id="subbtn"))) == \
        "drag [20.0] [60.0] [100.0] [100.0]"
    options = el("select", 60, 60, id="options", options=["Ann", "Bo", "Cy"], selected=0)
    submit = el("button", 40, 90, all="Submit")
    utterance = "Select Cy from the list and click Submit."
    assert next_action("choose-list", snap(utterance, options, submit)) == "press [Tab]"
    assert next_action("choose-list", snap(utterance, {**options, "focused": True}, submit)) == "press [ArrowDown]"
    assert next_action("choose-list", snap(utterance, {**options, "selected": 2}, submit)) == "click_xy [40.0] [90.0]"


def test_the_prompt_template_renders_a_miniwob_observation_and_its_replies_parse() -> None:
    from nodes.agent.templates import fields_of, load_template

    tpl = load_template("miniwob")
    obs = {"env": "miniwob", "episode": "ep0", "t": 1, "goal": 'Click on the "ok" button.', "task": "click-button",
           "seed": 3, "text": "[1] [BUTTON] [ok]", "url": "http://127.0.0.1:1/miniwob/click-button.html",
           "last_action_error": "", "actions": ["click", "type", "press", "stop", "click_xy", "drag", "type_text"]}
    fields = {**fields_of(obs), "observation": "{observation}"}
    for key in ("first", "next"):
        text = tpl.render(key, getattr(tpl, key), fields)
        assert 'OBJECTIVE: Click on the "ok" button.' in text and "{observation}" in text
    reply = "The button is [1]. In summary, the next action I will perform is ```click [1]```"
    assert tpl.parser("online")(reply, obs["actions"]) == ["click [1]"]
