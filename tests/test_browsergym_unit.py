"""browsergym.env's pure parts: the goal, the listed clicks, which bodies are actions, the params'
refusals, and the agent's reading of a reply in BrowserGym's action calls."""

from __future__ import annotations

import pytest
from browsergym.core.action.highlevel import HighLevelActionSet
from pydantic import ValidationError

from nodes.agent.parsers import get_parser
from nodes.browser.browsergym.node import BrowserGymParams, is_action
from nodes.browser.browsergym.observation import clicks, goal_text


def test_the_goal_is_the_text_of_browsergyms_goal_messages_else_its_legacy_goal() -> None:
    assert goal_text({"goal_object": [{"type": "text", "text": "Click on the ONE button."},
                                      {"type": "image_url", "image_url": "data:..."},
                                      {"type": "text", "text": "Then stop."}], "goal": "ignored"}) \
        == "Click on the ONE button.\nThen stop."
    assert goal_text({"goal_object": [], "goal": "legacy words"}) == "legacy words"
    assert goal_text({}) == ""


def test_the_listed_clicks_are_the_visible_clickable_elements_in_page_order() -> None:
    props = {"13": {"clickable": True, "visibility": 1.0}, "2": {"clickable": True, "visibility": 0.6},
             "a7": {"clickable": True, "visibility": 1.0}, "4": {"clickable": False, "visibility": 1.0},
             "5": {"clickable": True, "visibility": 0.2}, "6": {"clickable": True}}
    assert clicks(props, 10) == ['click("2")', 'click("a7")', 'click("13")']
    assert clicks(props, 1) == ['click("2")']
    assert clicks(props, 0) == []


def test_an_action_is_a_call_of_the_action_sets_functions_with_literal_arguments() -> None:
    bid = HighLevelActionSet(subsets=["bid"])
    assert is_action(bid, 'click("12")') and is_action(bid, 'fill("5", "blue shoes")') and is_action(bid, "noop()")
    assert not is_action(bid, "mouse_click(3, 4)")  # not in the bid subset
    assert is_action(HighLevelActionSet(subsets=["coord"]), "mouse_click(3, 4)")
    assert not is_action(bid, 'click(__import__("os").system("id"))')  # no expressions, only literals
    assert not is_action(bid, "os.system('id')")
    assert not is_action(bid, "")
    assert not is_action(bid, None) and not is_action(bid, {"stop": True}) and not is_action(bid, 'click("1")' * 2000)


def test_params_name_what_is_wrong_and_what_is_allowed() -> None:
    assert BrowserGymParams(task="browsergym/miniwob.click-test").task == "miniwob.click-test"
    with pytest.raises(ValidationError, match="BENCHMARK.NAME"):
        BrowserGymParams(task="click-test")
    with pytest.raises(ValidationError, match=r"browsergym.nosuchbench is not installed \(pip install browsergym-nosuchbench\)"):
        BrowserGymParams(task="nosuchbench.1")
    with pytest.raises(ValidationError, match=r"registers no such task \(did you mean miniwob.click-test"):
        BrowserGymParams(task="miniwob.click-tset")
    with pytest.raises(ValidationError, match="unknown action subsets .'mouse'.; allowed: chat, infeas, bid"):
        BrowserGymParams(task="miniwob.click-test", action_subsets=["bid", "mouse"])


def test_the_agent_reads_the_fenced_call_verbatim() -> None:
    read = get_parser("fenced_call")
    assert read('The button is 12.\nIn summary, the next action I will perform is ```click("12")```', []) \
        == ['click("12")']
    assert read("```python\nfill(\"5\", \"a b\")\n```", []) == ['fill("5", "a b")']
    assert read("In summary, the next action I will perform is ```click [12]```", []) == []  # not a call
    assert read("no block at all", []) == []
