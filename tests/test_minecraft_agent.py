"""The agent pack's VAB-Minecraft setting: the bundled template, the reply as VAB passes it on and
keeps it (THOUGHT cut to five lines), and the generic ``kept_reply`` template key the LLM agent
applies to its chat history. On the in-memory runtime; no processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kernel.testing import FakeRuntime
from nodes.agent.llm import LLMAgent
from nodes.agent.memory import IMAGE_OMITTED
from nodes.agent.parsers import KEPT_REPLIES, get_kept_reply, vab_minecraft, vab_minecraft_reply
from nodes.agent.templates import TemplateError, load_template

ROOT = Path(__file__).resolve().parents[1]
LONG = ("Observation: a plains biome, two cows ahead.\nThought: 1. I need leather.\n\n2. Cows drop it.\n"
        "3. So kill one.\n4. Then craft.\n5. more\n6. more\nAction: execute(\"kill a cow\", \"leather\", 1)\n"
        "Feedback on the Action: imagined\nOBSERVATION: a second turn")


def test_the_reply_is_cut_labels_in_capitals_and_thought_at_its_second_numbered_line():
    assert vab_minecraft_reply(LONG) == ("OBSERVATION: a plains biome, two cows ahead.\nTHOUGHT: 1. I need leather.\n"
                                         "2. Cows drop it.\nACTION: execute(\"kill a cow\", \"leather\", 1)")


def test_thought_keeps_what_is_left_of_its_first_five_lines_once_blank_ones_are_dropped():
    reply = "OBSERVATION: o\nTHOUGHT: a\nb\n\nc\nd\ne\nf\nACTION: craft(\"stick\")\nACTION: craft(\"x\")<|end_of_text|>"
    assert vab_minecraft_reply(reply) == "OBSERVATION: o\nTHOUGHT: a\nb\nc\nd\nACTION: craft(\"stick\")"


def test_the_parser_sends_the_kept_reply_and_refuses_one_without_action():
    assert vab_minecraft(LONG, []) == [vab_minecraft_reply(LONG)]
    assert vab_minecraft("action: craft(\"stick\")", []) == ['ACTION: craft("stick")']
    assert vab_minecraft("OBSERVATION: trees\nTHOUGHT: chop", []) == []


def test_the_bundled_template_uses_vabs_setting():
    tpl = load_template("vab_minecraft")
    assert tpl.parser("online") is vab_minecraft and tpl.kept_reply == "vab_minecraft"
    assert tpl.defaults == {"am": "all", "om": 1, "regenerate": 0, "cot": True, "images": True}
    for name in ("craft(", "smelt(", "equip(", "teleport_to_spawn()", "look_up(", "execute("):
        assert name in tpl.system
    assert "OBSERVATION:" in tpl.io["online"] and "THOUGHT:" in tpl.io["online"] and "ACTION:" in tpl.io["online"]
    assert load_template("vab_household").kept_reply == "whole"  # other templates keep what they kept


def test_an_unknown_kept_reply_fails_on_load_naming_the_allowed(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("system: s\nio: {online: o}\nfirst: '{observation}'\nnext: '{observation}'\nparser: vab_minecraft\n"
                    "kept_reply: thoughtless\n")
    with pytest.raises(TemplateError, match="kept_reply: unknown kept_reply 'thoughtless'; allowed: "):
        load_template(str(path))
    assert set(KEPT_REPLIES) >= {"whole", "vab_embodied", "vab_minecraft"}
    assert get_kept_reply("vab_embodied")("ACTION: a()\nACTION: b()") == "ACTION: a()"


def obs(t: int, text: str) -> dict[str, Any]:
    return {"env": "minecraft", "episode": "e1", "t": t, "text": text, "template": "vab_minecraft",
            "text_history": True, "frame": np.zeros((8, 8, 3), dtype=np.uint8)}


async def test_the_agent_keeps_past_replies_as_vab_does_and_only_the_newest_picture():
    replies = iter([LONG, 'OBSERVATION: o\nTHOUGHT: t\nACTION: craft("planks", 4)'])
    agent = LLMAgent()
    rt = FakeRuntime(agent, "agent", params={"model": "model"},
                     replies={"chat": lambda body: {"text": next(replies), "usage": {}}})
    await agent.setup()
    await rt.deliver("obs", obs(0, "Your task is to get a leather in your inventory.\nVision Input:"), src="env")
    await rt.deliver("obs", obs(1, "Feedback on the Action: ...\nVision Input:"), src="env")
    first, second = rt.requested("chat")
    assert first["messages"][0]["role"] == "system" and "teleport_to_spawn()" in first["messages"][0]["content"]
    history = second["messages"]
    assert [m["role"] for m in history] == ["system", "user", "assistant", "user"]
    goal = "Your task is to get a leather in your inventory."
    assert history[1]["content"].strip() == f"{goal}\nVision Input: {IMAGE_OMITTED}"
    assert history[2]["content"] == vab_minecraft_reply(LONG)  # not the reply as written
    assert any(part["type"] == "image" for part in history[3]["content"])
    sent = [b for o, b, _ in rt.published if o == "action"]
    assert sent == [vab_minecraft_reply(LONG), 'OBSERVATION: o\nTHOUGHT: t\nACTION: craft("planks", 4)']


def test_the_agent_pack_does_not_import_the_minecraft_pack():
    for path in (ROOT / "nodes" / "agent").rglob("*.py"):
        assert "nodes.game" not in path.read_text(), path
