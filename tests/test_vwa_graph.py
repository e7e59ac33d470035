"""VisualWebArena end to end as a graph: real site nodes (uvicorn, SQLite), the browser env on a real
Chromium playing the seven hand-written tasks of nodes/browser/vwa/data/smoke_tasks.json (raw
SoM ids in their gold actions; the generated local_tasks.json is played by tests/test_vwa_gold.py), and the VWA judge scoring each
final page through the env's page.* services. The gold actions must score 1 on every task; the
same graph with each sequence perturbed (a wrong answer, a wrong link, a comment never sent, a
listing whose photo shows another colour) must score 0 on every task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.helpers import ROOT, launch

GOLD = ROOT / "launch" / "vwa_gold.yaml"
SMOKE = ROOT / "nodes/browser/vwa/data/smoke_tasks.json"
TASKS = json.loads(SMOKE.read_text())

# task id -> a sequence that stays on the gold path but goes wrong once
PERTURBED: dict[int, list[str]] = {
    0: ["type [5] [Quiet vase]", "stop [$45]"],  # wrong price
    1: ["click [8]", "stop"],  # Appliances, not Bicycles
    2: ["type [8] [Is this still available?] [0]", "stop"],  # typed, never sent
    3: ["click [35]", "stop [1993]"],  # the year of their work, not of their birth
    4: ["type [3] [cartographer]", "stop"],  # left on the search results
    5: ["click [8]", "stop"],  # memes, not pics
    6: ["click [15]", "stop [yellow]"],  # the camera's photo is red: the answer matches, the page does not
}


def run_graph(tmp_path: Path, config: dict[str, Any], name: str) -> dict[int, dict[str, Any]]:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / name
    result = launch("run", str(path), "--out", str(out), timeout=150)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert len(records) == len(TASKS)
    assert all(r["status"] == "completed" for r in records), records
    return {int(r["metrics"]["task_id"]): r["metrics"] for r in records}


def _config() -> dict[str, Any]:
    config = yaml.safe_load(GOLD.read_text())
    env = next(n for n in config["nodes"] if n["id"] == "env")
    env["params"]["tasks"] = [str(SMOKE)]
    config["run"]["episodes"] = len(TASKS)
    return config


def test_gold_actions_score_one(tmp_path: Path) -> None:
    gold = run_graph(tmp_path, _config(), "gold")
    assert sorted(gold) == [t["task_id"] for t in TASKS]
    kinds = set()
    for task in TASKS:
        m = gold[task["task_id"]]
        assert m["success"] == 1.0, (task["task_id"], m)
        assert m["failed_checks"] == []
        assert m["evaluators"] == ",".join(task["eval"]["eval_types"])
        assert m["site"] == ",".join(task["sites"]) and m["overall_difficulty"] == task["overall_difficulty"]
        assert m["steps"] == len(task["gold_actions"])
        for kind in task["eval"]["eval_types"]:
            assert m[f"score_{kind}"] == 1.0
            kinds.add(kind)
    assert {"string_match", "url_match", "program_html", "page_image_query"} <= kinds
    assert gold[6]["graders"] == "vision=oracle:image-attributes"  # no vision model wired: the oracle, named


def test_perturbed_actions_score_zero(tmp_path: Path) -> None:
    config = _config()
    agent = next(n for n in config["nodes"] if n["id"] == "agent")
    agent["uses"] = "nodes.agent.baseline:ReplayAgent"
    agent["params"] = {"episodes": {f"ep{i:05d}": PERTURBED[t["task_id"]] for i, t in enumerate(TASKS)}}
    agent["inputs"]["obs"]["policy"] = "fifo"
    wrong = run_graph(tmp_path, config, "perturbed")
    assert sorted(wrong) == [t["task_id"] for t in TASKS]
    for task in TASKS:
        m = wrong[task["task_id"]]
        assert m["success"] == 0.0, (task["task_id"], m)
        assert m["failed_checks"], m
    assert wrong[6]["score_string_match"] == 1.0 and wrong[6]["score_page_image_query"] == 0.0


def test_validate_refuses_an_unreadable_task_file_before_anything_starts(tmp_path):
    broken = tmp_path / "tasks.json"
    broken.write_text('[{"task_id": 1, "sites": ')
    result = launch("validate", "vwa_gold.yaml", "--set", f"env.tasks=[{broken}]")
    assert result.returncode != 0
    assert f"node 'env': tasks: {broken}: line 1 column" in result.stderr, result.stderr
