"""VAB's WebArena-Lite setting: the prompt, the launch files' wiring, and the embedded-model launch
file played end to end on the real model and the real local sites (the SoM element list as its
observation). The task file, the evaluators and the local sites have their own tests
(test_webarena_tasks.py, test_shopping_admin.py, test_forge.py)."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from nodes.agent.records import read_records
from nodes.agent.templates import load_template
from tests.helpers import ROOT, launch

LAUNCH = ROOT / "launch"
PRETTY = {"http://onestopmarket.com", "http://luma.com/admin", "http://reddit.com", "http://gitlab.com",
          "http://openstreetmap.org", "http://wikipedia.org", "http://homepage.com"}  # WebArena's URL_MAPPINGS
ACTIONS = ("click [id]", "type [id] [content]", "hover [id]", "press [key_comb]", "scroll [down]", "scroll [up]",
           "new_tab", "tab_focus [tab_index]", "close_tab", "goto [url]", "go_back", "go_forward", "stop [answer]")


def _nodes(name: str) -> dict[str, dict]:
    doc = yaml.safe_load((LAUNCH / name).read_text())
    flat = {}
    for entry in doc["nodes"]:
        for node in entry.get("nodes", [entry]):
            flat[node["id"]] = node
    return flat


def test_the_vab_prompt_lists_the_twelve_actions_the_phrase_and_three_worked_turns():
    tpl = load_template("vab_webarena_som")
    for action in ACTIONS:
        assert f"```{action}```" in tpl.system, action
    assert "In summary, the next action I will perform is" in str(tpl.io)
    assert tpl.icl.count("OBSERVATION:") == 3 and tpl.icl.count("In summary, the next action I will perform is") == 3


def test_the_gpt4o_file_is_vabs_setting_against_webarenas_sites():
    nodes = _nodes("vab_webarena_lite_gpt4o.yaml")
    env, agent = nodes["env"]["params"], nodes["agent"]["params"]
    assert env["tasks"] == ["${VAB_TASKS:-webarena-lite}"] and env["viewport"] == [1280, 720]
    assert env["max_steps"] == "${MAX_STEPS:-20}"  # the paper's 20 rounds; VAB's script runs 30
    assert set(env["hosts"]) == {"__SHOPPING__", "__SHOPPING_ADMIN__", "__REDDIT__", "__GITLAB__", "__MAP__",
                                 "__WIKIPEDIA__", "__HOMEPAGE__"}
    assert all(re.fullmatch(r"\$\{[A-Z_]+:-http://127\.0\.0\.1:\d+(/admin)?\}", v) for v in env["hosts"].values())
    assert set(agent["hosts"]) == PRETTY and agent["icl"] is True and agent["template"] == "vab_webarena_som"
    assert agent["early_stop"]["parse_failures"] == 3 and agent["early_stop"]["repeats"] == 5
    assert nodes["judge"]["params"]["grader"] == "model"  # fuzzy_match graded by the model node


def test_the_local_files_serve_every_placeholder_the_local_tasks_use():
    for name in ("vab_webarena_lite_gold.yaml", "vab_webarena_lite_local.yaml", "vab_webarena_lite_random.yaml"):
        env = _nodes(name)["env"]["params"]
        used = set()
        for task_file in env["tasks"]:
            used |= set(re.findall(r"__[A-Z_]+__", (ROOT / task_file).read_text()))
        assert used <= set(env["site_nodes"]), (name, used - set(env["site_nodes"]))
        assert env["site_nodes"]["__SHOPPING_ADMIN__"] == "shopping/admin"


@pytest.mark.timeout(900)
def test_the_embedded_model_plays_webarena_lite_tasks_on_the_som_element_list(tmp_path, embedded_url):
    text = (LAUNCH / "vab_webarena_lite_local.yaml").read_text()
    serve = "      serve: {kind: vllm-cpu}\n"
    assert text.count(serve) == 1
    path = tmp_path / "vab_local.yaml"  # the one-line swap: the embedded server this session already runs
    path.write_text(text.replace(serve, f"      base_url: {embedded_url}\n"))
    out = tmp_path / "run"
    result = launch("run", str(path), "--episodes", "2", "--set", "env.max_steps=3", "--set",
                    "agent.early_stop.max_steps=3", "--out", str(out), timeout=800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"]["completed"] == 2, summary["episodes"]
    assert summary["metrics"]["agent_model_errors"] == 0 and summary["metrics"]["model_requests"] >= 2
    episodes = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert all(e["metrics"]["success"] in (0.0, 1.0) for e in episodes)  # judged, whatever the model did
    assert {e["metrics"]["site"] for e in episodes} == {"gitlab"}  # the forge's tasks come first
    records = read_records(out / "steps" / "agent.jsonl")
    assert records and all(r["response"] for r in records)
    prompts = json.dumps([r.get("messages") or r.get("prompt") for r in records])
    assert re.search(r"\[\d+\] \[A\] \[", prompts), "the SoM element list is the observation"
    assert "http://gitlab.com" in prompts  # the model sees WebArena's host names


FUZZY_GRAPH = """
name: fuzzy_judge
nodes:
  - id: forge
    uses: browser.site
    params: {site: forge, port: 0, seed: 0}
  - id: env
    uses: browser.env
    params: {tasks: ["TASKS"], site_nodes: {__GITLAB__: forge}, max_steps: 5}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 60.0, default_action: null}
  - id: agent
    uses: agent.scripted
    params: {env: env}
    inputs: {obs: {from: env/obs, policy: latest}}
  - id: model
    uses: model.chat
    params: {base_url: URL, model: smollm2-135m-instruct, api_key_env: none, vision: false}
  - id: judge
    uses: judge.vwa
    params: {sites: [], grader: model}
    inputs: {step: {from: env/step, policy: block, size: 64}}
run: {episodes: 1, seed: 0}
"""


@pytest.mark.timeout(600)
def test_a_fuzzy_match_is_graded_by_the_embedded_model_through_its_node(tmp_path, embedded_url):
    """WebArena's fuzzy_match: the judge asks the model node named in `grader` (here the embedded
    model, at temperature 0) and scores what it says; a 135M model's verdict is not asserted, only
    that the question went to it and the episode was scored on its answer."""
    task = {"task_id": 0, "sites": ["gitlab"], "start_url": "__GITLAB__/explore", "require_login": False,
            "require_reset": False, "storage_state": None, "geolocation": None,
            "intent": "Which project of the a11yproject group is about accessibility?",
            "eval": {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["a11yproject.com"]},
                     "reference_url": "", "program_html": []},
            "gold_actions": ["stop [It is the a11yproject.com project]"]}
    (tmp_path / "tasks.json").write_text(json.dumps([task]))
    path = tmp_path / "fuzzy.yaml"
    path.write_text(FUZZY_GRAPH.replace("TASKS", str(tmp_path / "tasks.json")).replace("URL", embedded_url))
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=500)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"]["completed"] == 1, summary["episodes"]  # scored, not unscored
    [episode] = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    metrics = episode["metrics"]
    assert metrics["success"] in (0.0, 1.0) and metrics["score_string_match"] == metrics["success"]
    assert metrics["graders"] == "text=llm:model", metrics  # the grader named in the results
    assert summary["model"]["requests"] >= 1 and summary["model"]["failures"] == 0
