"""The agent's pure parts: parsers (with the benchmarks' own examples), templates and memory windows."""

from __future__ import annotations

import numpy as np
import pytest

from nodes.agent.memory import ALL, DROPPED, ChatMemory, Turn, window
from nodes.agent.parsers import answer_option, first_mention, mention_list, section_action, section_list
from nodes.agent.templates import BUNDLED, TemplateError, fields_of, load_template

SOKOBAN = ["Up", "Down", "Left", "Right"]
KIDGYM = ["pick up item with label 2", "pick up item with label 3", "move up"]


def test_section_action_needs_exactly_one_name_after_the_marker():
    assert section_action("# analyze\nthe box is left\n# action\nLeft\n", SOKOBAN) == ["Left"]
    assert section_action("# Action:\n `right`.", SOKOBAN) == ["Right"]
    assert section_action("# action\nI would go Left", SOKOBAN) == []  # chatty: unparsable, as in MageBench
    assert section_action("Left", SOKOBAN) == []  # no marker
    assert section_action("# action\naction_shot", ["action_shot", "action_left"]) == ["action_shot"]


def test_section_list_drops_unknown_tokens():
    reply = "### Analyze\nthree pushes\n### Actions\nUp, Up, jump, Left ,Down"
    assert section_list(reply, SOKOBAN) == ["Up", "Up", "Left", "Down"]
    assert section_list("Up, Down", SOKOBAN) == []


@pytest.mark.parametrize("reply, expected", [
    ("<answer>A</answer>", 0),
    ("A", 0),
    ("I choose action letter B) 'pick up item with label 3'.", 1),
    ("Based on all of the information, I choose action C.", 2),
    ("I'm sorry, but I can't provide the correct answer as the image does not contain a dog", None),
    ("...?-=\\== ..n\n The-1\n\n The-1", None),
    ("<THINK> go up </THINK> <ANSWER> C </ANSWER>", 2),
])
def test_answer_option_parses_kidgyms_own_examples(reply, expected):
    """The paper's examples (spec §3.3) decode as the paper says they do."""
    assert answer_option(reply, KIDGYM) == ([] if expected is None else [KIDGYM[expected]])


def test_forgiving_parsers_for_small_models():
    assert first_mention("I will go right, not left", ["left", "right", "stay"]) == ["right"]
    assert first_mention("Rightward!", ["left", "right"]) == []  # whole words only
    assert mention_list("left then Right, then stay", ["left", "right", "stay"]) == ["left", "right", "stay"]


def test_every_bundled_template_loads_and_renders():
    obs = {"env": "x", "t": 0, "actions": ["a", "b"], "goal": "g", "text": "t",
           "url": "u", "previous_action": "None"}  # the browser templates' fields (nodes.agent.webepisode)
    for path in BUNDLED.glob("*.yaml"):
        tpl = load_template(path.stem)
        fields = fields_of(obs)
        for mode in tpl.io:  # the browser is played online only
            assert tpl.render("io", tpl.io[mode], fields)
            assert tpl.parser(mode)
        assert "{observation}" in tpl.render("first", tpl.first, {**fields, "observation": "{observation}"})


def test_an_observation_with_more_actions_than_letters_still_gives_its_fields():
    fields = fields_of({"env": "x", "actions": [f"a{i}" for i in range(40)]})
    assert fields["actions"].endswith("a39") and fields["actions_lettered"].endswith("Z) 'a25'")


def test_cot_lines_reach_the_template_with_unquoted_yaml_keys(tmp_path):
    """YAML reads unquoted on/off as booleans; both spellings must give the on and off lines."""
    for path in BUNDLED.glob("*.yaml"):
        tpl = load_template(path.stem)
        assert set(tpl.cot) == {"on", "off"}
    assert load_template("sokoban").cot["on"].startswith("Before you answer")
    mine = tmp_path / "mine.yaml"
    base = "system: s\nio: {online: o}\nfirst: '{observation}'\nnext: '{observation}'\nparser: first_mention\n"
    mine.write_text(base + "cot:\n  on: think\n  off: answer\n")
    assert load_template(str(mine)).cot == {"on": "think", "off": "answer"}
    mine.write_text(base + "cot: {maybe: x}\n")
    with pytest.raises(TemplateError, match=r"mine.yaml: cot.maybe: unknown key; allowed: on, off"):
        load_template(str(mine))


def test_template_errors_name_the_file_and_what_is_allowed(tmp_path):
    with pytest.raises(TemplateError, match="no bundled prompt template 'sokobna'; bundled: .*sokoban"):
        load_template("sokobna")
    bad = tmp_path / "mine.yaml"
    bad.write_text("system: s\nio: {online: o}\nfirst: '{observation}'\nnext: '{observation}'\nparser: {online: regex}\n")
    with pytest.raises(TemplateError, match=r"mine.yaml: parser.online: unknown parser 'regex'; allowed: "):
        load_template(str(bad))
    bad.write_text("system: '{nope}'\nio: {online: o}\nfirst: '{observation}'\nnext: '{observation}'\nparser: first_mention\n")
    tpl = load_template(str(bad))
    with pytest.raises(TemplateError, match=r"system uses the field \{nope\}"):
        tpl.render("system", tpl.system, fields_of({"actions": []}))


def _turns(n: int, images: bool = True) -> list[Turn]:
    frame = np.zeros((4, 6, 3), np.uint8)
    return [Turn(prompt=f"turn {i}: {{observation}}", text=f"state {i}", frames=[frame] if images else [],
                 reply=f"reply {i}") for i in range(n)]


def test_memory_keeps_am_exchanges_and_om_observations():
    memory = ChatMemory(am=3, om=2, images=True)
    for turn in _turns(6):
        memory.add(turn)
    messages = memory.messages([{"role": "system", "content": "rules"}])
    users = [m for m in messages if m["role"] == "user"]
    assert [m["content"] for m in messages if m["role"] == "assistant"] == ["reply 2", "reply 3", "reply 4"]
    assert len(users) == 4  # three past exchanges and the current turn
    assert users[0]["content"] == f"turn 2: {DROPPED}" and users[1]["content"] == f"turn 3: {DROPPED}"
    images = [p for m in users if isinstance(m["content"], list) for p in m["content"] if p["type"] == "image"]
    assert len(images) == 2  # OM = 2: the current frame and the one before


def test_text_mode_memory_and_windows():
    memory = ChatMemory(am=ALL, om=1, images=False)
    for turn in _turns(3, images=False):
        memory.add(turn)
    users = [m["content"] for m in memory.messages([], retry=[("bad", "again please")]) if m["role"] == "user"]
    assert users == [f"turn 0: {DROPPED}", f"turn 1: {DROPPED}", "turn 2: state 2", "again please"]
    assert window("all", "am") == ALL and window(0, "om") == 0
    with pytest.raises(ValueError, match="param am must be a non-negative integer or 'all'"):
        window(-2, "am")
