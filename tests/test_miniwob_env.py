"""MiniWoB++ end to end: the site node serving the installed package's pages, ``miniwob.env``
playing them in Chromium through the browser node, in real graphs (``launch run``).

The scripted solver, reading each page's DOM, must succeed on every instance of a handful of tasks
that span its kinds (checkboxes, a form, a drop-down list, a drag, a button sequence, arithmetic),
and a seed must replay its instance; the random web agent must play every task the package ships
to an end (the page's, or a small step cap), each with a reward in [-1, 1] read from the page."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from nodes.browser.miniwob.tasks import all_tasks
from tests.helpers import ROOT, launch

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")


def registered() -> dict[str, str]:
    """The short node names pyproject.toml registers (a test run need not have re-installed the package)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return project["project"]["entry-points"]["framebus.nodes"]


def run_launch(tmp_path: Path, name: str, env_params: dict[str, Any], episodes: int, timeout: float) -> list[dict]:
    config = yaml.safe_load((ROOT / "launch" / name).read_text())
    names = registered()
    for node in config["nodes"]:
        node["uses"] = names[node["uses"]]
    next(n for n in config["nodes"] if n["id"] == "env")["params"].update(env_params)
    config["run"]["episodes"] = episodes
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / "run"
    result = launch("run", str(path), "--out", str(out), timeout=timeout)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    return sorted(records, key=lambda r: r["episode_id"])


@pytest.mark.timeout(240)
def test_the_scripted_solver_succeeds_and_a_seed_replays_its_instance(tmp_path: Path) -> None:
    tasks = ["click-checkboxes", "login-user", "choose-list", "drag-box", "click-button-sequence",
             "simple-arithmetic", "click-checkboxes"]
    records = run_launch(tmp_path, "miniwob_scripted.yaml", {"task": tasks, "seeds": 2}, 2 * len(tasks), 220)
    assert len(records) == 2 * len(tasks)
    played = [(r["metrics"]["task"], r["metrics"]["seed"]) for r in records]
    assert played == [(t, s) for t in tasks for s in (0, 1)]
    for record in records:
        m = record["metrics"]
        assert record["status"] == "completed", record
        assert (m["reward"], m["raw_reward"], m["success"], m["timed_out"]) == (1.0, 1.0, 1.0, 0.0), m
        assert 0 < m["env_reward"] <= 1.0 and m["utterance"], m  # MiniWoB's time-scaled reward, and the goal
    first, again = records[0]["metrics"], records[-2]["metrics"]  # click-checkboxes seed 0, played twice
    assert first["utterance"] == again["utterance"]
    assert records[1]["metrics"]["utterance"] != first["utterance"]  # seed 1 is another instance


@pytest.mark.timeout(600)
def test_the_random_agent_plays_every_task_to_an_end(tmp_path: Path) -> None:
    names = [t.name for t in all_tasks()]
    records = run_launch(tmp_path, "miniwob_random.yaml", {"task": "all", "max_steps": 2}, len(names), 580)
    assert [r["metrics"]["task"] for r in records] == names
    for record in records:
        m = record["metrics"]
        assert record["status"] == "completed", record
        assert 1 <= m["steps"] <= 2 and -1.0 <= m["reward"] <= 1.0 and m["utterance"], m
