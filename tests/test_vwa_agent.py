"""The VisualWebArena agent setting: the fenced-action parser, pretty host names both ways, VWA's
early stops, and the LLM agent playing recorded browser observations through the bus.

The observations in tests/data/vwa_agent_obs.json were recorded from the browser environment on the
local classifieds site (served at http://127.0.0.1:19980). The model is a node whose replies each
test chooses (the real model is exercised in test_llm_agent.py), so the agent's own logic is
checked exactly: the prompt it builds, the one retry, what it sends and when it stops.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import http.server
import io
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from kernel.sdk.node import Node, service
from kernel.testing import Harness
from nodes.agent.parsers import get_parser
from nodes.agent.records import read_records
from nodes.agent.templates import load_template
from nodes.agent.webactions import GRAMMAR_NAMES, HostMap, canonical_action, fenced_action
from nodes.agent.webepisode import EarlyStopLimits, WebEpisode, browser_template, load_image

DATA = Path(__file__).parent / "data" / "vwa_agent_obs.json"
LOCAL = "http://127.0.0.1:19980"  # where the recorded site was served
HOSTS = {"http://classifieds.com": LOCAL, "http://reddit.com": "http://127.0.0.1:19999",
         "http://homepage.com": "http://127.0.0.1:14399"}
SUMMARY = "In summary, the next action I will perform is"


def recorded(kind: str) -> dict[str, Any]:
    return copy.deepcopy(json.loads(DATA.read_text())[kind])


def say(action: str, thought: str = "Let me look at the page.") -> str:
    return f"{thought} {SUMMARY} ```{action}```"


# -- the parser ----------------------------------------------------------------------------------
@pytest.mark.parametrize("reply, expected", [
    (say("click [12]"), "click [12]"),
    (say("type [3] [red shoes]"), "type [3] [red shoes] [1]"),  # Enter by default, written out
    (say("type [3] [red shoes] [0]"), "type [3] [red shoes] [0]"),
    (say("type [3] [a] [b] [2]"), "type [3] [a] [b] [2] [1]"),  # a last bracket other than 0/1 is text
    (say("hover [7]"), "hover [7]"),
    (say("press [Ctrl+v]"), "press [Ctrl+v]"),
    (say("scroll [down]"), "scroll [down]"),
    (say("scroll up"), "scroll [up]"),  # VWA's scroll regex makes the brackets optional
    (say("new_tab"), "new_tab"),
    (say("tab_focus [1]"), "tab_focus [1]"),
    (say("close_tab"), "close_tab"),
    (say("goto [http://classifieds.com/index.php?page=item&id=3]"), "goto [http://classifieds.com/index.php?page=item&id=3]"),
    (say("go_back"), "go_back"),
    (say("go_forward"), "go_forward"),
    (say("stop [$279.49]"), "stop [$279.49]"),
    (say("stop [N/A]"), "stop [N/A]"),
    (say("stop"), "stop"),
    (say("stop []"), "stop"),  # an unreadable answer is the empty answer, as in VWA
    (say("click[12]"), "click [12]"),  # the space before a bracket is optional
    (say("click [12] on the red bike"), "click [12]"),  # text after the arguments is ignored
])
def test_every_action_kind_is_read_and_written_one_way(reply, expected):
    assert fenced_action(reply, GRAMMAR_NAMES) == [expected]


@pytest.mark.parametrize("reply", [
    "click [12]",  # not fenced
    "In summary, the next action I will perform is `click [12]`",  # one backtick is not a fence
    say("Click [12]"),  # names are case-sensitive, as in VWA
    say("click [twelve]"),
    say("click []"),
    say("tab_close"),  # Table 1's spelling; the prompt and the grammar say close_tab
    say("scroll [left]"),
    say("type [3]"),
    say("goto []"),
    say("jump [3]"),
    say(""),
    "I am not sure what to do next.",
    "In summary, the next action I will perform is ```click [12]",  # never closed
])
def test_replies_without_a_readable_action_give_nothing(reply):
    assert fenced_action(reply, GRAMMAR_NAMES) == []


def test_the_action_is_the_last_fenced_block_after_the_summary_phrase():
    reply = ("I could ```click [3]``` or ```scroll [down]```. in summary, the next action i will perform is\n"
             "```\ngo_back\n```")
    assert fenced_action(reply, GRAMMAR_NAMES) == ["go_back"]  # the phrase in any case; a block on its own lines
    two_after = f"{SUMMARY} ```click [3]```, no wait: ```click [4]```"
    assert fenced_action(two_after, GRAMMAR_NAMES) == ["click [4]"]
    no_phrase = "First ```click [3]``` then maybe ```hover [5]```"
    assert fenced_action(no_phrase, GRAMMAR_NAMES) == ["hover [5]"]  # no phrase: the reply's last block
    phrase_then_nothing = f"```click [8]``` {SUMMARY} clicking the button."
    assert fenced_action(phrase_then_nothing, GRAMMAR_NAMES) == ["click [8]"]
    tagged = f"{SUMMARY}\n```text\ntype [5] [bike] [0]\n```"
    assert fenced_action(tagged, GRAMMAR_NAMES) == ["type [5] [bike] [0]"]  # a language tag is not the action


def test_only_the_environments_actions_are_accepted_and_the_parser_is_registered():
    assert fenced_action(say("goto [http://x.com]"), ["click", "stop"]) == []
    assert fenced_action(say("click [2]"), ["click", "stop"]) == ["click [2]"]
    assert get_parser("fenced_action") is fenced_action
    assert canonical_action("  stop [done]  ") == "stop [done]" and canonical_action("") is None


# -- pretty host names ---------------------------------------------------------------------------
def test_host_names_are_mapped_both_ways_and_only_whole_hosts():
    hosts = HostMap({"http://classifieds.com": "http://127.0.0.1:9980/", "http://reddit.com": "http://127.0.0.1:9999"})
    page = ("see http://127.0.0.1:9980/index.php?page=item&id=3, http://localhost:9999/f/pics and "
            "http://127.0.0.1:99800/ and http://127.0.0.1:9980.")
    assert hosts.to_pretty(page) == ("see http://classifieds.com/index.php?page=item&id=3, http://reddit.com/f/pics "
                                     "and http://127.0.0.1:99800/ and http://classifieds.com.")
    action = "goto [http://reddit.com/f/pics?sort=new] not http://reddit.community or http://reddit.com.au"
    assert hosts.to_local(action) == ("goto [http://127.0.0.1:9999/f/pics?sort=new] not http://reddit.community "
                                      "or http://reddit.com.au")
    assert hosts.to_local(hosts.to_pretty("http://127.0.0.1:9980/a")) == "http://127.0.0.1:9980/a"
    assert not HostMap({}) and HostMap({}).to_pretty(page) == page


@pytest.mark.parametrize("hosts, message", [
    ({"classifieds.com": "http://127.0.0.1:9980"}, "pretty name 'classifieds.com' is not a base URL"),
    ({"http://a.com": "ftp://127.0.0.1"}, "local base URL for http://a.com 'ftp://127.0.0.1' is not a base URL"),
    ({"http://a.com": "http://127.0.0.1:1", "http://b.com": "http://127.0.0.1:1/"}, "both map to http://127.0.0.1:1"),
])
def test_a_bad_host_map_is_refused_with_the_entry_named(hosts, message):
    with pytest.raises(ValueError, match=message):
        HostMap(hosts)


def test_the_agent_params_check_the_host_map():
    from nodes.agent.llm import LLMAgent

    with pytest.raises(ValueError, match="both map to"):
        LLMAgent.parse_params({"hosts": {"http://a.com": "http://127.0.0.1:1", "http://b.com": "http://127.0.0.1:1"}})
    params = LLMAgent.parse_params({"hosts": HOSTS, "early_stop": {"max_steps": 10}})
    assert params.early_stop.max_steps == 10 and params.early_stop.repeats == 5


# -- early stops ---------------------------------------------------------------------------------
def episode(**limits: int) -> WebEpisode:
    return WebEpisode(HostMap(HOSTS), EarlyStopLimits(**limits))


def play(web: WebEpisode, actions: list[str | None]) -> list[str | None]:
    """The early-stop verdict before each action, then after the last one."""
    verdicts = []
    for action in actions:
        verdicts.append(web.early_stop())
        web.took(action, "reply")
    return [*verdicts, web.early_stop()]


def test_early_stop_after_max_steps():
    verdicts = play(episode(max_steps=30), [f"click [{i}]" for i in range(30)])
    assert verdicts[:30] == [None] * 30 and verdicts[30] == "reached the step limit (30 actions)"


def test_early_stop_after_three_unreadable_replies_in_a_row():
    assert play(episode(), [None, None, "click [1]", None, None])[-1] is None  # interrupted: not in a row
    verdicts = play(episode(), [None, None, None])
    assert verdicts[:3] == [None, None, None] and verdicts[3] == "3 replies in a row had no readable action"


def test_early_stop_after_the_same_action_five_times_in_a_row():
    assert play(episode(), ["click [1]"] * 4 + ["click [2]", "click [1]"])[-1] is None
    verdicts = play(episode(), ["scroll [down]"] * 5)
    assert verdicts[:5] == [None] * 5 and verdicts[5] == "the same action 5 times in a row: scroll [down]"
    # written differently, read the same: scroll down == scroll [down]
    web = episode()
    for reply in ["scroll down", "scroll [down]"] * 3:
        web.took(canonical_action(reply), reply)
    assert web.early_stop() is not None


def test_early_stop_after_the_same_type_action_five_times_anywhere():
    typing = "type [3] [bike] [1]"
    actions = [typing, "click [1]", typing, "go_back", typing, "scroll [down]", typing]
    assert play(episode(), actions)[-1] is None  # four so far
    assert play(episode(), [*actions, "click [2]", typing])[-1] == f"the same typing action 5 times: {typing}"
    assert play(episode(), [typing] * 4 + ["type [3] [bike] [0]"])[-1] is None  # another Enter flag: another action


def test_an_unreadable_reply_is_sent_as_no_action_and_explained_next_time():
    web = episode()
    assert web.took(None, "I think I should click the bike") is None
    assert 'Your reply "I think I should click the bike" held no action' in web.previous
    sent = web.took("goto [http://classifieds.com/index.php?page=item&id=38]", "...")
    assert sent == f"goto [{LOCAL}/index.php?page=item&id=38]"  # the browser gets the local site
    assert web.previous == "goto [http://classifieds.com/index.php?page=item&id=38]"  # the model its own words


# -- the prompt ----------------------------------------------------------------------------------
FRAME = np.full((6, 8, 3), 200, np.uint8)


def test_each_observation_setting_has_its_template():
    som, axtree = recorded("som"), recorded("axtree")
    assert browser_template({**som, "frame": FRAME}) == "browser_som"
    assert browser_template({**axtree, "frame": FRAME}) == "browser_mm_axtree"
    assert browser_template(axtree) == "browser_axtree"
    for name in ("browser_som", "browser_axtree", "browser_mm_axtree"):
        tpl = load_template(name)
        assert tpl.parsers == {"online": "fenced_action"} and tpl.defaults["am"] == 0
        assert tpl.defaults["regenerate"] == 1  # VWA's max_retry
        assert "```close_tab```" in tpl.system and "http://homepage.com/password.html" in tpl.system
        assert SUMMARY in tpl.io["online"]


def test_the_observation_is_shown_with_pretty_hosts_and_the_previous_action():
    obs = recorded("som")
    assert LOCAL in obs["text"] and LOCAL in obs["url"]
    web = episode()
    shown = web.shown(obs)
    assert LOCAL not in shown["text"] and "url: http://classifieds.com/images/38.png" in shown["text"]
    assert shown["url"] == "http://classifieds.com/index.php?page=search&sPattern=bike"
    assert shown["previous_action"] == "None"
    web.took("click [99]", "...")
    failed = web.shown({**obs, "last_action_error": f"goto {LOCAL}/x refused: outside the sites"})
    assert failed["previous_action"] == ("click [99]\n(this action failed: goto http://classifieds.com/x refused: "
                                         "outside the sites)")


def test_the_observation_text_is_cut_at_a_line_end_when_asked():
    obs = recorded("axtree")
    full = episode().shown(obs)["text"]
    web = WebEpisode(HostMap(HOSTS), EarlyStopLimits(), max_text_chars=500)
    cut = web.shown(obs)["text"]
    assert len(cut) <= 500 and full.startswith(cut) and full[len(cut)] == "\n"
    assert WebEpisode(HostMap({}), EarlyStopLimits(), max_text_chars=5).shown({"text": "abcdefgh"})["text"] == "abcde"
    assert load_template("browser_som").defaults["max_text_chars"] == 15360  # VWA: 3840 tokens


# -- the agent on the bus ------------------------------------------------------------------------
class ScriptedModel(Node):
    """Stands in for the model node: each reply is chosen by the test; an exception is raised as
    the model's failure."""

    inputs = ()
    outputs = ()

    def __init__(self, replies: list[str | Exception]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    @service("chat")
    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        reply = self.replies.pop(0) if self.replies else "nothing useful"
        if isinstance(reply, Exception):
            raise reply
        return {"text": reply, "usage": {"prompt_tokens": 10, "completion_tokens": 2}, "latency_s": 0.01,
                "cost_usd": 0.0}


async def drive(tmp_path: Path, observations: list[dict[str, Any]], replies: list[str | Exception],
                **params: Any) -> tuple[list[Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Publish each observation to a real agent process and collect what it sends, what it asked
    the model and its step records."""
    model = ScriptedModel(replies)
    sent = []
    async with Harness(quiet=True, run_dir=tmp_path) as h:
        h.add("agent", "nodes.agent.llm:LLMAgent", params={"hosts": HOSTS, **params},
              inputs={"obs": {"from": "probe/obs", "policy": "fifo"}})
        h.local("model", model)
        probe = h.probe(inputs={"action": "agent/action"}, outputs=["obs"])
        await h.start()
        for t, obs in enumerate(observations):
            await probe.publish("obs", {**obs, "episode": "ep00001", "t": t}, step=t)
            sent.append((await asyncio.wait_for(probe.recv("action"), 30)).body)
    return sent, model.requests, read_records(tmp_path / "steps" / "agent.jsonl")


def png(color: tuple[int, int, int], path: Path | None = None) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (5, 4), color).save(buf, format="PNG")
    if path is not None:
        path.write_bytes(buf.getvalue())
    return buf.getvalue()


async def test_som_step_prompt_retry_and_actions_mapped_back(tmp_path):
    goal = tmp_path / "goal.png"
    png((255, 0, 0), goal)
    first = {**recorded("som"), "frame": FRAME, "goal_images": [str(goal)]}
    second = {**first, "last_action_error": "element [14] is not on the current page"}
    replies = ["I will click the road bike: ```click 14```",  # unreadable: one retry
               say("click [14]", "The red road bike is listing 14."),
               say("goto [http://classifieds.com/index.php?page=item&id=38]")]
    sent, requests, records = await drive(tmp_path / "run", [first, second], replies)
    assert sent == ["click [14]", f"goto [{LOCAL}/index.php?page=item&id=38]"]
    assert len(requests) == 3 and records[0]["attempts"] == 2 and records[0]["valid"]

    messages = requests[0]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]  # no history: the previous action only
    system = messages[0]["content"]
    assert "[id] [tag] [text]" in system and SUMMARY in system and "step by step" in system
    text, label1, screenshot, label2, image = messages[1]["content"]
    assert text["type"] == "text" and text["text"].startswith("OBSERVATION:\n[1] [A] [Classifieds]\n")
    assert LOCAL not in text["text"] and "url: http://classifieds.com/images/38.png" in text["text"]
    assert text["text"].endswith("URL: http://classifieds.com/index.php?page=search&sPattern=bike\n"
                                 "OBJECTIVE: What is the price of the cheapest red bike?\nPREVIOUS ACTION: None\n")
    assert label1 == {"type": "text", "text": "IMAGES: (1) current page screenshot"}
    assert label2 == {"type": "text", "text": "(2) input image 1"}
    assert np.array_equal(np.asarray(screenshot["image"]), FRAME)
    assert np.asarray(image["image"]).shape == (4, 5, 3) and tuple(np.asarray(image["image"])[0, 0]) == (255, 0, 0)

    retry = requests[1]["messages"]
    assert len(retry) == 4 and retry[0] == messages[0]  # the same system prompt and turn, then the retry
    assert retry[2] == {"role": "assistant", "content": replies[0]}
    assert retry[3]["role"] == "user" and "I could not find an action" in retry[3]["content"]

    later = requests[2]["messages"]
    assert len(later) == 2 and later[1]["content"][0]["text"].endswith(
        "PREVIOUS ACTION: click [14]\n(this action failed: element [14] is not on the current page)\n")


async def test_unreadable_replies_stop_the_episode_early(tmp_path):
    obs = recorded("axtree")  # no frame: the accessibility-tree setting, text only
    sent, requests, records = await drive(tmp_path / "run", [obs] * 4, ["I do not know."] * 6)
    assert sent == [None, None, None, "stop [Early stop: 3 replies in a row had no readable action]"]
    assert len(requests) == 6  # each unreadable reply got its one retry; the early stop asked nothing
    first = requests[0]["messages"]
    assert "accessibility tree" in first[0]["content"] and isinstance(first[1]["content"], str)
    assert first[1]["content"].startswith("OBSERVATION:\nTab 0 (current): Search results - Classifieds\n")
    assert "http://classifieds.com/index.php?page=item&id=40" in first[1]["content"]
    assert 'PREVIOUS ACTION: Your reply "I do not know." held no action' in requests[2]["messages"][1]["content"]
    assert records[-1]["early_stop"] == "3 replies in a row had no readable action"


async def test_step_limit_and_model_failure_become_stop_actions(tmp_path):
    obs = recorded("axtree")
    sent, requests, _ = await drive(tmp_path / "a", [obs] * 3, [say("scroll [down]"), say("scroll [up]")],
                                    early_stop={"max_steps": 2})
    assert sent == ["scroll [down]", "scroll [up]", "stop [Early stop: reached the step limit (2 actions)]"]
    sent, _, records = await drive(tmp_path / "b", [obs], [RuntimeError("the model is out of memory")])
    assert len(sent) == 1 and sent[0].startswith("stop [ERROR: ") and "out of memory" in sent[0]
    assert records[0]["error"] and records[0]["sent"] == sent[0]


class _ImageHandler(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        pass


def test_input_images_load_from_paths_data_urls_and_pretty_urls(tmp_path):
    blue = png((0, 0, 255), tmp_path / "blue.png")
    assert tuple(load_image(str(tmp_path / "blue.png"), HostMap({}))[0, 0]) == (0, 0, 255)
    data_url = "data:image/png;base64," + base64.b64encode(blue).decode()
    assert load_image(data_url, HostMap({})).shape == (4, 5, 3)
    _ImageHandler.body = png((0, 255, 0))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ImageHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hosts = HostMap({"http://classifieds.com": f"http://127.0.0.1:{server.server_address[1]}"})
        assert tuple(load_image("http://classifieds.com/images/3.png", hosts)[0, 0]) == (0, 255, 0)
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(FileNotFoundError, match="no image file"):
        load_image(str(tmp_path / "missing.png"), HostMap({}))
    with pytest.raises(ValueError, match="base64"):
        load_image("data:image/png,xyz", HostMap({}))


async def test_an_input_image_that_cannot_be_loaded_ends_the_episode_with_an_error(tmp_path):
    obs = {**recorded("som"), "frame": FRAME, "goal_images": [str(tmp_path / "missing.png")]}
    sent, requests, _ = await drive(tmp_path / "run", [obs], [say("click [1]")])
    assert requests == [] and sent[0].startswith("stop [ERROR: input image 1 (") and "no image file" in sent[0]


@pytest.mark.timeout(900)
async def test_the_accessibility_tree_prompt_goes_through_the_embedded_model(tmp_path, embedded_url):
    """The real model (SmolLM2-135M; it will rarely act well): the VWA prompt, the tree cut, fits it and its
    reply goes through the parser, giving a readable action or none, never an error."""
    sent = []
    async with Harness(quiet=True, run_dir=tmp_path) as h:
        h.add("model", "nodes.model.client:ChatModel", params={
            "base_url": embedded_url, "model": "smollm2-135m-instruct", "api_key_env": "none", "vision": False,
            "sampling": {"temperature": 0, "max_tokens": 32}})
        # its context is 2048 tokens: the tree is cut as VWA cuts it for short-context models
        h.add("agent", "nodes.agent.llm:LLMAgent", params={"hosts": HOSTS, "model": "model", "max_text_chars": 2000,
                                                             "regenerate": 0},  # one call: ~15 s on 2 cores
              inputs={"obs": {"from": "probe/obs", "policy": "fifo"}})
        probe = h.probe(inputs={"action": "agent/action"}, outputs=["obs"])
        await h.start()
        await probe.publish("obs", {**recorded("axtree"), "episode": "ep00001", "t": 0}, step=0)
        sent.append((await asyncio.wait_for(probe.recv("action"), 600)).body)
    record = read_records(tmp_path / "steps" / "agent.jsonl")[0]
    assert record["error"] is None and record["response"] and record["attempts"] == 1
    assert record["usage"]["prompt_tokens"] > 1000  # the system prompt and the tree's first 2000 characters
    if record["valid"]:
        assert sent[0] == HostMap(HOSTS).to_local(record["action"]) and canonical_action(sent[0]) == sent[0]
    else:
        assert sent[0] is None
