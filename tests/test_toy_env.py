"""The toy environment and judge of docs/nodes.md, played by the scripted agent as real processes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from kernel.testing import Harness

ROOT = Path(__file__).resolve().parents[1]


def test_docs_quote_the_toy_environment_verbatim():
    docs = (ROOT / "docs" / "nodes.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", docs, re.S)
    assert (ROOT / "tests" / "toy_env.py").read_text() in blocks


def test_docs_quote_the_toy_judge_verbatim_and_it_is_short():
    docs = (ROOT / "docs" / "nodes.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", docs, re.S)
    judge = (ROOT / "tests" / "toy_judge.py").read_text()
    assert judge in blocks and len(judge.splitlines()) < 40  # a judge for a new pack is under 40 lines


async def test_the_scripted_agent_finds_every_number_and_the_env_ends_its_episodes():
    async with Harness(quiet=True, episodes=3) as h:
        h.add("env", "tests.toy_env:GuessEnv", params={"size": 16},
              inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
        h.add("agent", "nodes.agent.baseline:ScriptedAgent", params={"env": "env"},
              inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        await h.start()
        status, _ = await h.wait_finished(30)
        metrics = [r["metrics"] for r in h.kernel.book.records.values()]
    assert status == "completed" and len(metrics) == 3
    assert all(m["success"] == 1.0 and 1 <= m["steps"] <= 5 and m["invalid"] == 0 for m in metrics)


async def test_an_impossible_guess_is_an_invalid_step_and_the_time_limit_ends_the_episode():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", "tests.toy_env:GuessEnv", params={"size": 4, "max_steps": 2, "judge": False},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        obs = (await probe.recv("obs")).body
        assert obs["env"] == "guess" and obs["actions"] == ["0", "1", "2", "3"] and "frame" not in obs
        await probe.publish("action", "99", step=0)
        step = (await probe.recv("step")).body
        assert step["valid"] is False and step["action"] is None and not step["done"]
        await probe.recv("obs")
        await probe.publish("action", None, step=1)
        step = (await probe.recv("step")).body
        assert step["valid"] and step["done"] and step["info"]["truncated"] and step["info"]["invalid"] == 1
        await h.wait_finished(10)
        [record] = h.kernel.book.records.values()
    assert record["metrics"] == {"steps": 2, "invalid": 1, "stopped": False, "success": 0.0}


async def test_the_toy_judge_ends_the_episodes_the_env_leaves_to_it():
    async with Harness(quiet=True, episodes=3) as h:
        h.add("env", "tests.toy_env:GuessEnv", params={"size": 16},
              inputs={"action": "agent/action"}, clock={"mode": "lockstep"})
        h.add("agent", "nodes.agent.baseline:ScriptedAgent", params={"env": "env"},
              inputs={"obs": {"from": "env/obs", "policy": "fifo"}})
        h.add("judge", "tests.toy_judge:GuessJudge", inputs={"step": {"from": "env/step", "policy": "block"}})
        await h.start()
        status, _ = await h.wait_finished(30)
        metrics = [r["metrics"] for r in h.kernel.book.records.values()]
        for _ in range(50):  # the summary travels with heartbeats
            summary = h.kernel.summary_sections().get("guess", {})
            if summary.get("episodes") == 3:
                break
            await asyncio.sleep(0.1)
    assert status == "completed" and len(metrics) == 3
    assert all(m["success"] == 1.0 and m["score"] == 100.0 / m["steps"] and m["truncated"] is False for m in metrics)
    assert summary["mean_score"] == sum(m["score"] for m in metrics) / 3
