"""minecraft.judge on the in-memory runtime (kernel.testing.FakeRuntime): success from the final
inventory, VAB's step reward as the partial score, the summary with its per-group table and the
paper's column. No processes."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from kernel.testing import FakeRuntime
from nodes.judge import minecraft_paper
from nodes.judge.minecraft import MinecraftJudge, target_of

ROOT = Path(__file__).resolve().parents[1]


def steps(episode: str, inventories: list[dict[str, int]], rewards: list[float], *, task: str = "cake",
          group: str = "food", target: dict[str, Any] | None = None, status: str = "task limit reached",
          reason: str = "round limit") -> list[dict[str, Any]]:
    target = target or {"item": f"minecraft:{task}", "count": 1, "members": None}
    out = []
    for t, (inventory, reward) in enumerate(zip(inventories, rewards)):
        last = t == len(inventories) - 1
        info = {"task": task, "group": group, "target": target, "inventory": inventory, "reward": reward}
        if last:
            info.update(status=status, end_reason=reason)
        out.append({"episode": episode, "t": t, "action": 'craft("x")', "valid": True, "reward": 0.0,
                    "done": last, "truncated": False, "info": info})
    return out


async def judge_all(*episodes: list[dict[str, Any]]) -> tuple[MinecraftJudge, FakeRuntime]:
    judge = MinecraftJudge()
    rt = FakeRuntime(judge, "judge", sources={"step": ["env"]})
    await judge.setup()
    for records in episodes:
        for body in records:
            await rt.deliver("step", body, src="env")
    return judge, rt


async def test_success_is_the_target_in_the_final_inventory_and_scores_one():
    won = steps("e1", [{"bucket": 3}, {"bucket": 2, "milk_bucket": 1}, {"cake": 1}], [0.0, 0.2, 0.7],
                status="completed", reason="target obtained")
    judge, rt = await judge_all(won)
    metrics = rt.ended()[0]["metrics"]
    assert metrics["success"] == 1.0 and metrics["partial_score"] == 1.0 and metrics["step_reward"] == 0.7
    assert metrics["end_status"] == "completed" and metrics["end_reason"] == "target obtained"
    assert metrics["task"] == "cake" and metrics["group"] == "food" and metrics["steps"] == 3


async def test_a_failure_scores_its_step_reward_and_the_summary_is_vabs_average():
    lost = steps("e1", [{"wheat": 1}, {"wheat": 3, "sugar": 1}], [0.05, 0.25])
    won = steps("e2", [{}, {"wooden_pickaxe": 1}], [0.0, 0.3], task="wooden_pickaxe", group="tools",
                status="completed", reason="target obtained")
    stuck = steps("e3", [{}], [0.0], task="stick", group="tools", status="task limit reached", reason="no progress")
    judge, rt = await judge_all(lost, won, stuck)
    assert [e["metrics"]["success"] for e in rt.ended()] == [0.0, 1.0, 0.0]
    assert rt.ended()[0]["metrics"]["partial_score"] == 0.25
    summary = judge.summary()
    assert summary["episodes"] == 3 and summary["successes"] == 1
    assert summary["success_rate"] == pytest.approx(33.33)
    assert summary["average_reward"] == pytest.approx((0.25 + 1.0 + 0.0) / 3, abs=1e-4)
    assert summary["end_status"] == {"task limit reached": 2, "completed": 1}
    assert summary["end_reason"] == {"round limit": 1, "target obtained": 1, "no progress": 1}
    assert summary["per_group"] == {
        "food": {"episodes": 1, "successes": 0, "success_rate": 0.0, "average_reward": 0.25},
        "tools": {"episodes": 2, "successes": 1, "success_rate": 50.0, "average_reward": 0.5}}
    assert summary["paper"]["gpt-4o-2024-05-13"] == 55.2 and "Minecraft" in summary["paper_source"]
    assert rt.summary_sections["minecraft"]["episodes"] == 3


async def test_the_judge_reads_the_inventory_not_the_envs_word():
    claimed = steps("e1", [{"stick": 1}], [0.1], task="cake", status="completed")
    _, rt = await judge_all(claimed)
    assert rt.ended()[0]["metrics"]["success"] == 0.0


async def test_a_tag_target_is_met_by_one_member_held_count_times():
    target = {"item": "minecraft:planks", "count": 2, "members": ["minecraft:oak_planks", "birch_planks"]}
    one_each = steps("e1", [{"oak_planks": 1, "birch_planks": 1}], [0.0], task="planks", target=target)
    two_oak = steps("e2", [{"oak_planks": 2}], [0.0], task="planks", target=target)
    _, rt = await judge_all(one_each, two_oak)
    assert [e["metrics"]["success"] for e in rt.ended()] == [0.0, 1.0]


async def test_a_stopped_episode_without_a_status_is_a_stop():
    records = steps("e1", [{"dirt": 1}], [0.0])
    del records[-1]["info"]["status"]
    records[-1]["info"]["stopped"] = "the agent gave up"
    _, rt = await judge_all(records)
    assert rt.ended()[0]["metrics"]["end_status"] == "stopped"


@pytest.mark.parametrize("change, says", [
    (lambda info: info.pop("inventory"), "lacks inventory"),
    (lambda info: info.update(target={"count": 1}), "info.target must be"),
    (lambda info: info.update(target={"item": "cake", "count": 0}), "info.target.count must be an int >= 1"),
    (lambda info: info.update(inventory=["cake"]), "info.inventory must be a mapping"),
])
async def test_a_step_without_what_the_judge_needs_is_unscored_with_the_reason(change, says):
    records = steps("e1", [{"cake": 1}], [0.0])
    change(records[-1]["info"])
    judge, rt = await judge_all(records)
    ended = rt.ended()[0]
    assert ended["status"] == "unscored" and says in ended["metrics"]["reason"]
    assert judge.summary()["unscored"] == 1 and judge.summary()["episodes"] == 0


def test_target_of_reads_either_name_form():
    assert target_of({"target": {"item": "minecraft:cake", "count": 1}}) == ("cake", 1, None)
    assert target_of({"target": {"item": "wool", "count": 1, "members": ["minecraft:white_wool"]}}) == \
        ("wool", 1, ["white_wool"])


def test_the_paper_column_is_table_4s_and_the_entry_point_is_registered():
    assert len(minecraft_paper.table()) == 18 and minecraft_paper.table()["claude-3.5-sonnet"] == 56.0
    nodes = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["framebus.nodes"]
    assert nodes["minecraft.judge"] == "nodes.judge.minecraft:MinecraftJudge"
