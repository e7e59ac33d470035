"""VAB-CSS end to end: ``css.env`` playing instances on a working copy under the run folder and
``judge.css`` scoring them, in real graphs (``launch run`` and the test harness).

The scripted solver replayed through the graph must fix every instance it plays (success 1);
replies the tools cannot use (no Action line, an unknown function, an ``__import__`` argument) are
answered with VAB's failure texts and spend their round, never crash the env or run anything; the
round limit ends the episode; ``description: false`` (VAB's "w/o NL") hides the description."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kernel.testing import Harness
from nodes.browser.css import INSTANCES_PATH, PROJECTS_DIR
from nodes.browser.css.generate import load
from nodes.browser.css.tools import NO_ACTION, exception_text, unknown_function_text
from tests.helpers import ROOT, launch

SCRIPTED_YAML = ROOT / "launch" / "css_scripted.yaml"
ENV = "nodes.browser.css.env:CssEnv"
INSTANCES = load(INSTANCES_PATH)


def registered() -> dict[str, str]:
    """The short node names pyproject.toml registers (a test run need not have re-installed the package)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return project["project"]["entry-points"]["framebus.nodes"]


def tree_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(folder)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def subset(tmp_path: Path, picks: list[int]) -> Path:
    """An instances file holding the shipped instances ``picks``, in that order."""
    body = json.loads(INSTANCES_PATH.read_text())
    body["instances"] = [body["instances"][i] for i in picks]
    path = tmp_path / "instances.json"
    path.write_text(json.dumps(body))
    return path


def ended(run: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines() if line.strip()]
    return sorted(records, key=lambda r: r["episode_id"])


@pytest.mark.timeout(320)  # four episodes in Chromium on a loaded 2-core machine
def test_the_scripted_solver_fixes_one_instance_of_each_project_through_the_graph(tmp_path: Path) -> None:
    picks = [next(i for i, inst in enumerate(INSTANCES) if inst.project == p)
             for p in sorted({inst.project for inst in INSTANCES})]
    shipped = tree_digest(PROJECTS_DIR)
    config = yaml.safe_load(SCRIPTED_YAML.read_text())
    names = registered()
    for node in config["nodes"]:
        node["uses"] = names[node["uses"]]
    next(n for n in config["nodes"] if n["id"] == "env")["params"]["instances"] = str(subset(tmp_path, picks))
    config["run"]["episodes"] = len(picks)
    path = tmp_path / "css_scripted.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    records = ended(out)
    assert len(records) == len(picks) == 4
    for record, i in zip(records, picks, strict=True):
        m = record["metrics"]
        assert record["status"] == "completed", record
        assert (m["instance"], m["success"], m["improve"], m["finished"], m["rounds_used"], m["tool_failures"]) == \
            (INSTANCES[i].id, 1.0, 1.0, True, 4, 0), m
        assert m["final_distance"] < 0.1 <= 0.2 <= m["initial_distance"], m
    summary = json.loads((out / "summary.json").read_text())["css"]
    assert (summary["episodes"], summary["success_rate"], summary["improve_rate"]) == (4, 100.0, 100.0)
    assert summary["paper"]["table4_css_success"]["gpt-4o-2024-05-13"] == 34.5
    assert summary["paper"]["table5_success"]["gpt-4o-2024-05-13"] == {"with_description": 34.5,
                                                                       "without_description": 24.2}
    # The edits went to the working copy; the shipped project is as it was.
    fixed = out / "css" / "env" / "ep00000" / "project" / INSTANCES[picks[0]].file
    assert INSTANCES[picks[0]].original in fixed.read_text()
    assert tree_digest(PROJECTS_DIR) == shipped


async def test_unusable_replies_get_vabs_texts_an_edit_shows_the_page_and_the_round_limit_ends(
        tmp_path: Path) -> None:
    inst = INSTANCES[0]
    bad_arg = "get_selectors_by_html_elements(__import__('os').system('touch PWNED'))"
    async with Harness(episodes=1, run_dir=tmp_path / "run") as h:
        h.add("env", ENV, params={"instances": str(subset(tmp_path, [0])), "rounds": 5, "judge": False},
              inputs={"action": "probe/action"})
        probe = h.probe(inputs={"obs": "env/obs"}, outputs=["action"])
        await h.start()
        first = (await probe.recv("obs")).body
        assert first["env"] == "css" and first["round"] == 0 and first["instance"] == inst.id
        target, current = np.asarray(first["frames"][0]), np.asarray(first["frame"])
        assert target.shape[1] == current.shape[1] == 1280 and not np.array_equal(target, current)
        assert inst.description in first["text"] and "<html" in first["text"].lower()

        await probe.publish("action", "Thought: the story section looks wrong.", step=0)
        obs = (await probe.recv("obs")).body
        assert obs["feedback"] == NO_ACTION and "frame" not in obs and obs["round"] == 1
        await probe.publish("action", "Thought: x\nAction: os.system('touch PWNED')", step=1)
        obs = (await probe.recv("obs")).body
        assert obs["feedback"] == unknown_function_text("os.system")
        await probe.publish("action", f"Thought: x\nAction: {bad_arg}", step=2)
        obs = (await probe.recv("obs")).body
        assert obs["feedback"].startswith(exception_text("get_selectors_by_html_elements",
                                                         "__import__('os').system('touch PWNED')", "X")[:60])
        assert "only literal arguments" in obs["feedback"]

        await probe.publish("action", f"Thought: fix\nAction: edit_rule({inst.selector!r}, {inst.property!r}, "
                            f"{inst.original!r})", step=3)
        obs = (await probe.recv("obs")).body
        assert obs["feedback"].startswith("Done:") and np.array_equal(np.asarray(obs["frame"]), target)
        await probe.publish("action", "Thought: undo\nAction: revert_last_edit()", step=4)  # the 5th round: the end
        await h.wait_finished(60)
    [record] = ended(tmp_path / "run")
    m = record["metrics"]
    assert record["status"] == "completed" and m["steps"] == 5 and m["rounds_used"] == 5, m
    assert (m["success"], m["improve"], m["finished"], m["tool_failures"]) == (0.0, 0.0, False, 3), m
    assert m["final_distance"] == m["initial_distance"] >= 0.2  # the revert undid the fix
    assert not list(tmp_path.rglob("PWNED")) and not Path("PWNED").exists()


async def test_without_the_description_the_agent_sees_only_the_screenshots_and_html(tmp_path: Path) -> None:
    inst = INSTANCES[0]
    async with Harness(episodes=1, run_dir=tmp_path / "run") as h:
        h.add("env", ENV, params={"instances": str(subset(tmp_path, [0])), "description": False, "judge": False},
              inputs={"action": "probe/action"})
        probe = h.probe(inputs={"obs": "env/obs"}, outputs=["action"])
        await h.start()
        first = (await probe.recv("obs")).body
        assert first["description"] is None and inst.description not in first["text"]
        assert "<html" in first["text"].lower() and len(first["frames"]) == 1 and "frame" in first
        await probe.publish("action", "Thought: it looks right.\nI have fixed the css style", step=0)
        await h.wait_finished(60)
    [record] = ended(tmp_path / "run")
    m = record["metrics"]
    assert (m["steps"], m["rounds_used"], m["finished"], m["success"]) == (1, 1, True, 0.0), m


@pytest.mark.timeout(320)
def test_the_llm_agent_with_the_css_template_sends_its_whole_reply_and_sees_the_feedback(tmp_path: Path) -> None:
    from nodes.browser.css.scripted import solve

    inst = INSTANCES[0]
    plan = solve(inst, (PROJECTS_DIR / inst.project / "index.html").read_text(encoding="utf-8"))
    config = yaml.safe_load(SCRIPTED_YAML.read_text())
    names = registered()
    for node in config["nodes"]:
        node["uses"] = names[node["uses"]]
    next(n for n in config["nodes"] if n["id"] == "env")["params"]["instances"] = str(subset(tmp_path, [0]))
    agent = next(n for n in config["nodes"] if n["id"] == "agent")
    agent.update(uses="nodes.agent.llm:LLMAgent", params={"model": "model"})  # the template follows the obs: css
    config["nodes"].append({"id": "model", "uses": "tests.test_webui_env:CannedModel",
                            "params": {"replies": ["I think the section is wrong.", *plan]}})
    config["run"]["episodes"] = 1
    path = tmp_path / "css_llm.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=300)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    [record] = ended(out)
    m = record["metrics"]
    assert (m["success"], m["rounds_used"], m["tool_failures"], m["finished"]) == (1.0, 5, 1, True), m
    asked = [json.loads(line) for line in (out / "canned_model.jsonl").read_text().splitlines()]
    assert len(asked) == 5
    assert "Thought:" in asked[0]["text"] and "revert_last_edit()" in asked[0]["text"]
    assert inst.description in asked[0]["text"] and asked[0]["images"] == 2  # the target and the current page
    assert "The target design:" in asked[0]["text"] and "The current web page:" in asked[0]["text"]
    assert "<html" in asked[0]["text"].lower()  # the text is sent beside the images, not replaced by them
    assert NO_ACTION in asked[1]["text"]
    assert "selector(s) have rules that match" in asked[2]["text"]
    # every observation sends the target; the current page comes first and after the edit: 2, 1, 1, 1, 2
    assert [a["images"] for a in asked] == [2, 3, 4, 5, 7] and asked[4]["text"].count("after your change") == 1
