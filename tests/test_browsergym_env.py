"""browsergym.env end to end: BrowserGym's own environment hosted in a node on Debian's Chromium,
MiniWoB++'s pages served by the miniwob pack's site node, in real graphs (``launch run``); and the
cross-check of its path against framebus's own browser node on the same MiniWoB task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import ROOT, launch

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")


def _run(tmp_path: Path, name: str, env: dict[str, Any], agent: dict[str, Any] | None, episodes: int) -> list[dict]:
    config = yaml.safe_load((ROOT / "launch" / name).read_text())
    nodes = {n["id"]: n for n in config["nodes"]}
    nodes["env"]["params"].update(env)
    if agent is not None:
        nodes["agent"].clear()
        nodes["agent"].update({"id": "agent", **agent, "inputs": {"obs": {"from": "env/obs", "policy": "latest"}}})
    config["run"]["episodes"] = episodes
    path = tmp_path / name
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    out = tmp_path / path.stem
    result = launch("run", str(path), "--out", str(out), timeout=240)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    return sorted(records, key=lambda r: r["episode_id"])


@pytest.mark.timeout(300)
def test_a_random_agent_plays_a_browsergym_task_to_its_end(tmp_path: Path) -> None:
    records = _run(tmp_path, "browsergym_random.yaml", {"task": "miniwob.click-test", "max_steps": 4}, None, 3)
    assert [r["status"] for r in records] == ["completed"] * 3
    for record in records:
        m = record["metrics"]
        assert m["reward"] in (0.0, 1.0) and m["success"] == m["reward"] and 1 <= m["steps"] <= 4, m
        assert m["steps"] == 4 or m["reward"] == 1.0  # the page ended it, or the step cap did


@pytest.mark.timeout(400)
def test_the_same_policy_on_the_same_task_scores_the_same_through_browsergym_and_framebus(tmp_path: Path) -> None:
    """click-button, four seeds, the same policy (click the button the goal names) through both
    paths: BrowserGym's reward (its page's raw reward, as a success) and framebus's (the page's raw
    reward) agree, and both are successes."""
    clicker = {"uses": "tests.nodes_buttons:NamedButtonClicker"}
    theirs = _run(tmp_path, "browsergym_random.yaml", {"task": "miniwob.click-button", "max_steps": 3},
                  {**clicker, "params": {"language": "browsergym"}}, 4)
    ours = _run(tmp_path, "miniwob_random.yaml", {"task": "click-button", "seeds": 4, "max_steps": 3},
                {**clicker, "params": {"language": "framebus"}}, 4)
    assert [r["metrics"]["reward"] for r in theirs] == [r["metrics"]["reward"] for r in ours] == [1.0] * 4
    assert all(r["metrics"]["steps"] == 1 for r in theirs + ours)  # one click, and the page ended it
