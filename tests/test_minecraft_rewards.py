"""VAB-Minecraft's step reward and success test (nodes.game.minecraft.rewards), with a small tag
table in place of the recipe module's."""

from __future__ import annotations

import pytest

from nodes.game.minecraft.rewards import (
    StepReward,
    adjusted_step_rewards,
    bare,
    held,
    holds,
    partial_score,
    step_reward,
)

TAGS = {
    "planks": ["minecraft:oak_planks", "minecraft:birch_planks"],
    "stone_tool_materials": ["cobblestone", "blackstone"],
}


def members(name: str):
    return TAGS.get(name)


def test_bare_drops_the_prefix_only():
    assert bare("minecraft:oak_log") == "oak_log" and bare("oak_log") == "oak_log"


def test_a_tag_is_held_as_its_best_represented_member_not_the_sum():
    inventory = {"oak_planks": 3, "birch_planks": 2, "stick": 4}
    assert held(inventory, "planks", members) == 3
    assert held(inventory, "minecraft:planks", members) == 3
    assert holds(inventory, "planks", 3, members) and not holds(inventory, "planks", 4, members)
    assert held(inventory, "stick", members) == 4 and held(inventory, "minecraft:stick", members) == 4
    assert held({"minecraft:cobblestone": 2}, "stone_tool_materials", members) == 2
    assert held({}, "planks", members) == 0 and not holds({}, "cake", 1, members)


def test_a_tag_name_is_not_an_item_of_its_own():
    assert held({"planks": 5}, "planks", members) == 0


def test_items_given_at_the_start_lose_their_weight_and_the_rest_are_rescaled():
    table = {"minecraft:bucket": 0.2, "minecraft:planks": 0.1, "minecraft:milk_bucket": 0.3}
    weights = adjusted_step_rewards(table, {"minecraft:bucket": 3, "minecraft:oak_log": 64})
    assert set(weights) == {"planks", "milk_bucket"}
    assert sum(weights.values()) == pytest.approx(0.6)
    assert weights["milk_bucket"] == pytest.approx(0.45) and weights["planks"] == pytest.approx(0.15)


def test_an_initial_item_written_without_the_prefix_keeps_its_weight_as_in_vab():
    table = {"minecraft:blackstone": 0.25, "minecraft:polished_blackstone": 0.25}
    assert adjusted_step_rewards(table, {"blackstone": 4}) == {"blackstone": 0.25, "polished_blackstone": 0.25}


def test_no_table_or_nothing_left_gives_no_weights():
    assert adjusted_step_rewards({}, {"minecraft:bucket": 1}) == {}
    assert adjusted_step_rewards({"minecraft:bucket": 0.5}, {"minecraft:bucket": 1}) == {}


def test_an_item_counts_once_seen_and_stays_counted_after_it_is_used_up():
    reward = StepReward({"oak_log": 0.1, "planks": 0.2, "stick": 0.3, "wooden_pickaxe": 0.4}, members)
    assert reward.observe({}) == 0.0
    assert reward.observe({"oak_log": 1}) == pytest.approx(0.1)
    assert reward.observe({"oak_planks": 4}) == pytest.approx(0.3)  # the log became planks: both count
    assert reward.observe({"birch_planks": 2, "stick": 4}) == pytest.approx(0.6)  # a tag counts once
    assert reward.observe({}) == pytest.approx(0.6)  # nothing left: the score does not fall
    assert reward.obtained == {"oak_log", "planks", "stick"}


def test_the_step_reward_of_an_episode_from_the_inventories_seen():
    table = {"minecraft:planks": 0.1, "minecraft:stick": 0.1, "minecraft:stone_tool_materials": 0.2,
             "minecraft:oak_log": 0.6}
    seen = [{"oak_log": 2}, {"oak_planks": 8}, {"oak_planks": 6, "stick": 4}, {"stick": 2, "cobblestone": 3}]
    # oak_log is given at the start: its weight goes to the other three, scaled by 1.0 / 0.4
    assert step_reward(table, {"minecraft:oak_log": 2}, seen, members) == pytest.approx(1.0)
    assert step_reward(table, {"minecraft:oak_log": 2}, seen[:2], members) == pytest.approx(0.25)


def test_the_partial_score_is_one_for_a_success_else_the_step_reward_at_least_zero():
    assert partial_score(True, 0.2) == 1.0
    assert partial_score(False, 0.2) == 0.2
    assert partial_score(False, -0.5) == 0.0


def test_vab_weights_come_from_vabs_run_time_table_keyed_by_the_target() -> None:
    import json
    from pathlib import Path

    from nodes.game.minecraft.rewards import vab_weights

    data = Path(__file__).parents[1] / "nodes" / "game" / "minecraft" / "data"
    tasks = json.loads((data / "minecraft_tasks_v1.3.json").read_text())
    same = differ = 0
    for task in tasks:
        weights = vab_weights(task["task"])
        if weights == task["step_rewards"]:
            same += 1
        else:
            differ += 1
    # the task file's own field is a different, older table; the run-time table is what VAB scores with
    assert differ > 0 and same + differ == 116
    assert "minecraft:bucket" in vab_weights("milk_bucket")  # missing from the task file's field
    assert vab_weights("cooked_rabbit") == {"minecraft:rabbit": 1 / 3} and vab_weights("sand") == {}
    assert vab_weights("minecraft:milk_bucket") == vab_weights("milk_bucket")
    assert vab_weights("no_such_item") == {}
