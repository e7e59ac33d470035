"""MageBench WebUI end to end: ``webui.env`` writing a model's reply as a page folder under the run
folder, ``judge.webui`` scoring it with AES, in real graphs (``launch run``) on the test task
tests/data/webui/tea_counter.

The ground truth replayed as a reply must score 100 (global and every online round); invalid
replies (a ``js`` block, no block) are invalid steps with their reason in the next observation and
a regenerate, never a crash; a broken page, a page loading its style sheet from an outside URL and
a page missing an interaction's element are scored with their error class."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from pydantic import Field

from kernel.sdk.media import read_sets
from kernel.sdk.node import Node, NodeParams, service
from kernel.testing import Harness
from nodes.browser.webui.reply import FILES, ReplyError, parse_reply, to_reply
from tests.helpers import ROOT, launch

TASK = ROOT / "tests" / "data" / "webui" / "tea_counter"
GOLD_YAML = ROOT / "launch" / "webui_gold.yaml"
GOLD_FILES = {name: (TASK / name).read_text() for name in FILES}
GOLD = to_reply(GOLD_FILES)
JS_BLOCK = "Here is the page.\n```html\n<h1>Tea Counter</h1>\n```\n```js\nlet cups = 0;\n```\n"
NO_BLOCK = "I would build a heading and two cards."


def registered() -> dict[str, str]:
    """The short node names pyproject.toml registers (a test run need not have re-installed the package)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return project["project"]["entry-points"]["framebus.nodes"]


def gold_config(**env_params: Any) -> dict[str, Any]:
    """launch/webui_gold.yaml on the test task, each short ``uses`` name spelt out as pyproject registers it."""
    config = yaml.safe_load(GOLD_YAML.read_text())
    names = registered()
    for node in config["nodes"]:
        node["uses"] = names[node["uses"]]
    env = next(n for n in config["nodes"] if n["id"] == "env")
    env["params"].update(tasks=str(TASK.parent), **env_params)
    config["run"]["episodes"] = 1  # the one test task (the bundled file plays all 25 shipped tasks)
    return config


def run_graph(tmp_path: Path, config: dict[str, Any], name: str) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / name
    result = launch("run", str(path), "--out", str(out), timeout=200)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    return out, sorted(records, key=lambda r: r["episode_id"])


def replay(config: dict[str, Any], plans: dict[str, list[str]]) -> dict[str, Any]:
    """The graph with the replay agent sending ``plans`` (episode id -> replies) instead of the oracle's."""
    agent = next(n for n in config["nodes"] if n["id"] == "agent")
    agent["uses"] = "nodes.agent.baseline:ReplayAgent"
    agent["params"] = {"episodes": plans}
    agent["inputs"]["obs"]["policy"] = "fifo"
    config["run"]["episodes"] = len(plans)
    return config


# -- the reply parser ------------------------------------------------------------------------------
def test_a_reply_becomes_fixed_files_and_a_bad_label_or_no_block_is_refused_with_a_reason() -> None:
    files = parse_reply("intro\n```html\n<p>a</p>\n```\ntext\n```css\np {}\n```\n```javascript\n1;\n```\n"
                        "```css\np { color: red }\n```")
    assert files == {"index.html": "<p>a</p>\n", "style.css": "p { color: red }\n", "script.js": "1;\n"}
    assert parse_reply(GOLD) == {name: text if text.endswith("\n") else text + "\n" for name, text in GOLD_FILES.items()}
    with pytest.raises(ReplyError, match="labelled 'js'"):
        parse_reply(JS_BLOCK)
    with pytest.raises(ReplyError, match="no label"):
        parse_reply("```\n<p>a</p>\n```")
    with pytest.raises(ReplyError, match="no fenced code block"):
        parse_reply(NO_BLOCK)
    with pytest.raises(ReplyError, match="unclosed"):
        parse_reply("```html\n<p>a</p>\n```\n```css\np {}")
    with pytest.raises(ReplyError, match="labelled '../index.html'"):  # no path can come from a reply
        parse_reply("```../index.html\nx\n```")


def test_pyproject_registers_the_webui_nodes() -> None:
    names = registered()
    assert names["webui.env"] == "nodes.browser.webui.env:WebUIEnv"
    assert names["judge.webui"] == "nodes.judge.webui:WebUIJudge"


def test_validate_refuses_a_task_folder_that_cannot_be_scored_before_anything_starts(tmp_path: Path) -> None:
    broken = tmp_path / "tasks" / "no_annotations"
    broken.mkdir(parents=True)
    (broken / "index.html").write_text("<p>nothing annotated</p>")
    (broken / "task.md").write_text("A paragraph.")
    (broken / "steps.json").write_text("[]")
    config = gold_config()
    next(n for n in config["nodes"] if n["id"] == "env")["params"]["tasks"] = str(broken.parent)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    result = launch("validate", str(path))
    assert result.returncode != 0
    assert f"node 'env': tasks: {broken / 'index.html'}: no element carries data-filter-by" in result.stderr, \
        result.stderr


# -- graphs ----------------------------------------------------------------------------------------
def test_gold_run_scores_100_with_the_page_written_under_the_run_folder(tmp_path: Path) -> None:
    out, records = run_graph(tmp_path, gold_config(), "gold")
    assert [r["status"] for r in records] == ["completed"]
    m = records[0]["metrics"]
    assert m["aes"] == 100.0 and m["task"] == "tea_counter" and m["mode"] == "global", m
    assert all(m[f"errors_{kind}"] == 0 for kind in ("parse", "render", "interaction", "match", "attribute"))
    assert m["invalid"] == 0 and m["steps"] == 1 and "success" not in m
    page = out / "webui" / "env" / "ep00000" / "round_0"
    assert {p.name for p in page.iterdir()} == {"index.html", "style.css", "script.js", "_images"}
    assert (page / "index.html").read_text() == parse_reply(GOLD)["index.html"]
    summary = json.loads((out / "summary.json").read_text())["webui"]
    assert summary["mean_aes"] == 100.0 and summary["episodes"] == 1
    assert summary["paper_table"]["GPT-4o"] == {"global": 34.28, "online": 35.5}
    assert "Table 1" in summary["paper_source"]


def test_invalid_replies_regenerate_and_broken_pages_are_scored_with_their_error_class(tmp_path: Path) -> None:
    gold_html = GOLD_FILES["index.html"]
    broken = to_reply({"index.html": '<h1 id="title">Tea Counter</h1\n<div class="card"><img src="_images/cup.svg"'})
    outside = to_reply({**GOLD_FILES, "index.html": gold_html.replace(
        'href="style.css"', 'href="https://cdn.example.com/style.css"')})
    no_add = to_reply({**GOLD_FILES, "index.html": gold_html.replace('id="add" ', "")})
    plans = {"ep00000": [NO_BLOCK, JS_BLOCK, GOLD],  # two invalid replies, then the page: 100
             "ep00001": [broken],
             "ep00002": [outside],
             "ep00003": [no_add],
             "ep00004": [JS_BLOCK, NO_BLOCK, JS_BLOCK]}  # retries (2) spent: no page, a parse error
    _, records = run_graph(tmp_path, replay(gold_config(), plans), "faults")
    assert [r["status"] for r in records] == ["completed"] * 5, records
    regen, broken_m, outside_m, no_add_m, spent = (r["metrics"] for r in records)
    assert regen["aes"] == 100.0 and regen["invalid"] == 2 and regen["steps"] == 3, regen

    assert broken_m["errors_match"] > 0 and broken_m["aes"] < 50.0, broken_m
    assert broken_m["errors_parse"] == broken_m["errors_render"] == 0

    assert any(r.startswith("https://cdn.example.com/style.css") for r in outside_m["refused"]), outside_m
    assert outside_m["errors_attribute"] > 0 and outside_m["aes"] < 100.0, outside_m

    assert no_add_m["errors_interaction"] == 1 and no_add_m["aes"] < 100.0, no_add_m
    assert any("#add" in msg for msg in no_add_m["messages"]), no_add_m

    assert spent["errors_parse"] == 1 and spent["aes"] == 0.0 and spent["invalid"] == 3, spent


def test_online_scores_every_round_and_revisions_override_only_the_files_they_name(tmp_path: Path) -> None:
    broken = to_reply({"index.html": "<h1>Tea</h1>"})
    no_style = to_reply({"style.css": "/* nothing */\n"})
    plans = {"ep00000": [broken, GOLD, no_style],
             "ep00001": [GOLD]}  # then the replay agent stops the episode: the rounds left have no page
    config = replay(gold_config(mode="online", rounds=2), plans)
    out, records = run_graph(tmp_path, config, "online")
    assert [r["status"] for r in records] == ["completed", "completed"], records
    stopped = records[1]["metrics"]
    assert stopped["stopped"] and stopped["aes_round_0"] == 100.0, stopped
    assert stopped["aes_round_1"] == stopped["aes_round_2"] == stopped["aes"] == 0.0 and stopped["errors_parse"] == 1
    m = records[0]["metrics"]
    assert m["mode"] == "online" and m["steps"] == 3, m
    assert m["aes_round_0"] < 50.0 and m["aes_round_1"] == 100.0 and m["aes_round_2"] < 100.0, m
    assert m["aes"] == m["aes_round_2"]
    rounds = out / "webui" / "env" / "ep00000"
    assert (rounds / "round_2" / "index.html").read_text() == (rounds / "round_1" / "index.html").read_text()
    assert (rounds / "round_2" / "style.css").read_text() == "/* nothing */\n"
    sets = {(s["episode"], s["row"]): s for s in read_sets(out)}
    evolved = [p["label"] for p in sets[("ep00000", "rounds")]["pictures"]]  # the report's row of rounds
    assert evolved == ["target (ground truth)", f"round 0: AES {m['aes_round_0']:.1f}", "round 1: AES 100.0",
                       f"round 2: AES {m['aes_round_2']:.1f}"], evolved
    cut = sets[("ep00001", "rounds")]
    assert [p["label"] for p in cut["pictures"]] == ["target (ground truth)", "round 0: AES 100.0"], cut
    assert "round 1 (AES 0.0): the episode ended before this round" in cut["caption"], cut


def test_online_gold_scores_100_in_every_round(tmp_path: Path) -> None:
    _, gold = run_graph(tmp_path, gold_config(mode="online", rounds=2), "online_gold")
    g = gold[0]["metrics"]
    assert (g["aes"], g["aes_round_0"], g["aes_round_1"], g["aes_round_2"]) == (100.0, 100.0, 100.0, 100.0), g


async def test_the_agent_sees_the_reason_of_an_invalid_reply_and_online_its_rendered_page(tmp_path: Path) -> None:
    async with Harness(episodes=1, run_dir=tmp_path / "run") as h:
        h.add("env", "nodes.browser.webui.env:WebUIEnv", params={"tasks": str(TASK), "mode": "online", "rounds": 1,
                                                                  "judge": False},
              inputs={"action": "probe/action"})
        probe = h.probe(inputs={"obs": "env/obs"}, outputs=["action"])
        await h.start()
        first = (await probe.recv("obs")).body
        assert first["env"] == "webui" and first["round"] == 0 and first["reply_error"] == ""
        assert "Tea Counter" in first["text"] and first.get("frame") is None
        await probe.publish("action", JS_BLOCK, step=0)
        again = (await probe.recv("obs")).body
        assert again["t"] == 1 and again["round"] == 0 and "labelled 'js'" in again["reply_error"]
        await probe.publish("action", GOLD, step=1)
        seen = (await probe.recv("obs")).body
        assert seen["round"] == 1 and seen["reply_error"] == ""
        frame = np.asarray(seen["frame"])
        assert frame.shape == (1080, 1920, 3) and frame.std() > 0  # the page as loaded, not a blank
        assert seen["files"]["index.html"] == parse_reply(GOLD)["index.html"]
        assert "## Your current code" in seen["text"]
        await probe.publish("action", NO_BLOCK, step=2)
        last = (await probe.recv("obs")).body
        assert "no fenced code block" in last["reply_error"]
        await probe.publish("action", GOLD, step=3)
        await h.wait_finished(60)
    ended = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert [(r["status"], r["metrics"]["steps"], r["metrics"]["invalid"]) for r in ended] == [("completed", 4, 2)]
    assert (tmp_path / "run" / "webui" / "env" / "ep00000" / "round_1" / "index.html").is_file()


# -- the LLM agent on WebUI ------------------------------------------------------------------------
class CannedModelParams(NodeParams):
    replies: list[str] = Field(default_factory=list, description="the replies, in order (then empty ones)")


class CannedModel(Node):
    """A model node whose ``chat`` answers the canned replies in order and writes what it was asked
    (the text parts and the number of images of each request) to RUN/canned_model.jsonl."""

    Params = CannedModelParams
    params: CannedModelParams

    async def setup(self) -> None:
        self.calls = 0

    @service("chat")
    def chat(self, body: Any) -> dict[str, Any]:
        texts: list[str] = []
        images = 0
        for message in body["messages"]:
            content = message["content"]
            for part in [content] if isinstance(content, str) else content:
                if isinstance(part, str):
                    texts.append(part)
                elif part.get("type") == "text":
                    texts.append(part["text"])
                else:
                    images += 1
        assert self.run_dir is not None
        with (self.run_dir / "canned_model.jsonl").open("a") as fh:
            fh.write(json.dumps({"text": "\n".join(texts), "images": images}) + "\n")
        reply = self.params.replies[self.calls] if self.calls < len(self.params.replies) else ""
        self.calls += 1
        return {"text": reply, "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


def test_the_llm_agent_sends_its_whole_reply_and_online_revisions_after_regenerate(tmp_path: Path) -> None:
    # a js block in the analysis would make the whole reply invalid: only what follows "# Regenerate" is sent
    quoting = f"# Analyze\nThe page matches; my old ```js\nlet cups;\n``` is gone.\n# Regenerate\n{GOLD}"
    config = gold_config(mode="online", rounds=1)
    agent = next(n for n in config["nodes"] if n["id"] == "agent")
    agent.update(uses="nodes.agent.llm:LLMAgent", params={"model": "model"})
    config["nodes"].append({"id": "model", "uses": "tests.test_webui_env:CannedModel",
                            "params": {"replies": [JS_BLOCK, GOLD, quoting]}})
    out, records = run_graph(tmp_path, config, "llm")
    m = records[0]["metrics"]
    assert (m["aes_round_0"], m["aes_round_1"], m["invalid"], m["steps"]) == (100.0, 100.0, 1, 3), m
    asked = [json.loads(line) for line in (out / "canned_model.jsonl").read_text().splitlines()]
    assert len(asked) == 3
    assert "labelled exactly html, css or" in asked[0]["text"] and "Tea Counter" in asked[0]["text"]
    assert asked[0]["images"] == 0  # the test task's only picture is an SVG resource, not a screenshot
    assert "labelled 'js'" in asked[1]["text"]
    assert asked[2]["images"] == 1 and "# Regenerate" in asked[2]["text"] and "## Your current code" in asked[2]["text"]
