"""The Minecraft env node's pure parts: which tasks a run plays, the item a craft of a tag makes, and the
calls the random baseline draws from (each must parse as VAB's action grammar reads it)."""

from __future__ import annotations

import pytest

from nodes.game.minecraft import parsing
from nodes.game.minecraft.node import MinecraftParams, candidates, chosen_tasks, concrete
from nodes.game.minecraft.tasks import load_tasks

pytestmark = pytest.mark.unit


def test_vab_plays_the_116_tasks_in_the_files_order_and_names_can_be_chosen() -> None:
    every = chosen_tasks(MinecraftParams())
    assert len(every) == 116 and [t.name for t in every] == [t.name for t in load_tasks()]
    assert [t.name for t in chosen_tasks(MinecraftParams(task="minecraft:cake"))] == ["cake"]
    assert [t.name for t in chosen_tasks(MinecraftParams(task=["sugar", "cake"]))] == ["sugar", "cake"]


def test_an_unknown_task_is_refused_with_close_matches() -> None:
    with pytest.raises(ValueError, match=r"'glass_botle' \(did you mean glass_bottle.*not one of VAB's 116"):
        chosen_tasks(MinecraftParams(task=["sugar", "glass_botle"]))


def test_a_tag_is_crafted_as_the_member_the_inventory_can_make() -> None:
    assert concrete("planks", 4, {"oak_log": 1}) == "oak_planks"
    assert concrete("minecraft:planks", 4, {"spruce_log": 2}) == "spruce_planks"
    assert concrete("planks", 4, {}) == "oak_planks"  # nothing to make it from: the first member, which fails
    assert concrete("stick", 4, {}) == "stick"


def test_every_candidate_call_parses() -> None:
    task = chosen_tasks(MinecraftParams(task="cake"))[0]
    calls = candidates(task, {"oak_log": 3, "bucket": 1})
    assert 'equip("bucket")' in calls and 'look_up("cake")' in calls
    for call in calls:
        parsing.parse_action(call)


def test_a_subgoal_without_a_goal_item_gathers_what_its_object_yields() -> None:
    from nodes.game.minecraft.node import goal_of

    assert goal_of("chop a tree") == "oak_log" and goal_of("collect wood") == "oak_log"
    assert goal_of("mine stone") == "cobblestone"  # what mining stone drops
    assert goal_of("mine iron_ore") == "iron_ore" and goal_of("mine coal_ore") == "coal"
    assert goal_of("kill a sheep") == "mutton" and goal_of("hunt chickens") == "feather"  # a mob's first loot
    assert goal_of("break sand blocks") == "sand" and goal_of("gather eggs") == "egg"
    assert goal_of("dig down") is None and goal_of("look around") is None


def test_a_reply_that_is_one_bare_call_is_its_action_and_prose_is_not() -> None:
    from nodes.game.minecraft.node import bare_call

    assert bare_call(' craft("stick", 4) ') == 'craft("stick", 4)' and bare_call("teleport_to_spawn()")
    assert bare_call("I will craft a stick") is None and bare_call('THOUGHT: x\ncraft("stick")') is None


def test_the_solver_goes_back_to_the_spawn_when_a_failed_execute_left_it_below_ground() -> None:
    """rabbit_stew: mining stone leaves the body down a shaft under the potato row, from which the
    executor cannot reach the carrots; the solver then teleports, as VAB's tip tells an agent."""
    from nodes.game.minecraft.node import solver_reply

    task = chosen_tasks(MinecraftParams(task="rabbit_stew"))[0]
    inventory = {"oak_log": 5, "baked_potato": 1, "bowl": 1, "furnace": 1, "brown_mushroom": 16, "red_mushroom": 16,
                 "crafting_table": 1, "wooden_pickaxe": 1}
    down = {"inventory": inventory, "equipped": "wooden_pickaxe", "position": {"x": 0.5, "y": 62.0, "z": 8.3}}
    up = {**down, "position": {"x": 0.5, "y": 64.94, "z": 8.3}}
    assert solver_reply(task, down, spawn_y=65.0, last_execute_failed=True).endswith("ACTION: teleport_to_spawn()")
    for world, failed in ((down, False), (up, True)):
        assert solver_reply(task, world, spawn_y=65.0, last_execute_failed=failed) == \
            'ACTION: execute("harvest carrots", "carrot", 1)'
