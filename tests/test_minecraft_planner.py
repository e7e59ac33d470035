"""The recipe-tree planner: for each of VAB's 116 tasks, its plan played on an inventory by a
checker written here from minecraft-data's JSON (any recipe variant the inventory pays for, a
crafting table for patterns over 2x2, a furnace, a pickaxe and fuel for smelting, the harvest tool
in hand for a block, only blocks the world has) ends holding the target."""

from __future__ import annotations

import json
import math
from collections import Counter
from functools import cache

import pytest

from nodes.game.minecraft import mcdata
from nodes.game.minecraft.planner import Action, PlanError, plan
from nodes.game.minecraft.sources import WORLD_BLOCKS
from nodes.game.minecraft.tasks import Task, load_tasks

pytestmark = pytest.mark.skipif(not mcdata.available(),
                                reason="minecraft-data is not installed (bash setup.sh runs npm ci in nodes/game/minecraft/js)")

TASKS = load_tasks()
DATA = mcdata.PACK_DIR / "data"

#: what the world gives beyond the loot tables: (verb, target) -> (item, tool kind in hand, used up)
SPECIAL = {("milk", "cow"): ("milk_bucket", "bucket", "bucket"), ("kill", "sheep"): ("white_wool", None, None),
           ("collect", "egg"): ("egg", None, None), ("strip", "oak_log"): ("stripped_oak_log", "_axe", None)}


@cache
def _facts():
    base = mcdata.DATA_DIR
    where = json.loads((base / "dataPaths.json").read_text())["pc"]["1.16.5"]
    load = lambda kind: json.loads((base / where[kind] / f"{kind}.json").read_text())  # noqa: E731
    names = {i["id"]: i["name"] for i in load("items")}
    recipes: dict[str, list] = {}
    for key, variants in load("recipes").items():
        for v in variants:
            if "inShape" in v:
                grid = v["inShape"]
                ings = [names[i] for row in grid for i in row if i is not None]
                big = len(grid) > 2 or max(len(r) for r in grid) > 2
                left = [names[i] for row in v.get("outShape", []) for i in row if i is not None]
            else:
                ings, big, left = [names[i] for i in v["ingredients"]], len(v["ingredients"]) > 4, []
            recipes.setdefault(names[int(key)], []).append((Counter(ings), v["result"]["count"], big, Counter(left)))
    blocks = {b["name"]: b for b in load("blocks")}
    tools = {n: {names[int(t)] for t in b.get("harvestTools", {})} for n, b in blocks.items()}
    block_drops = {b["block"]: {d["item"] for d in b["drops"] if not d.get("silkTouch")} for b in load("blockLoot")}
    mob_drops = {e["entity"]: {d["item"] for d in e["drops"]} for e in load("entityLoot")}
    tags = json.loads((DATA / "tags_1.16.5.json").read_text())["tags"]

    def members(tag):
        return [x for m in tags[tag] for x in (members(m[1:]) if m.startswith("#") else [m])]

    smelting = json.loads((DATA / "smelting_1.16.5.json").read_text())
    smelt = {s["result"]: (members(s["ingredient"][1:]) if s["ingredient"].startswith("#") else [s["ingredient"]])
             for s in smelting["smelting"]}
    burn = {}
    for f in smelting["fuels"]:
        for m in members(f["fuel"][1:]) if f["fuel"].startswith("#") else [f["fuel"]]:
            burn[m] = f["burn_ticks"]
    return recipes, tools, block_drops, mob_drops, {t: members(t) for t in tags}, smelt, burn


def play(actions: list[Action], task: Task) -> Counter:
    """Each action against the world's rules; fails the test at the first one that could not run."""
    recipes, tools, block_drops, mob_drops, tags, smelt, burn = _facts()
    inv = Counter(task.inventory())
    hand = None
    for step, a in enumerate(actions):
        where = f"{task.name} step {step} {a}"
        if a.kind == "equip":
            assert inv[a.item] > 0, where
            hand = a.item
        elif a.kind == "craft":
            for ings, count, big, left in recipes[a.item]:
                times = math.ceil(a.count / count)
                if all(inv[k] >= v * times for k, v in ings.items()):
                    break
            else:
                pytest.fail(f"{where}: no recipe variant the inventory {dict(inv)} pays for")
            assert not big or inv["crafting_table"] > 0, f"{where}: needs a crafting table"
            inv.subtract({k: v * times for k, v in ings.items()})
            inv.update({k: v * times for k, v in left.items()})
            inv[a.item] += count * times
        elif a.kind == "smelt":
            assert inv["furnace"] > 0 and any(inv[k] > 0 for k in inv if k.endswith("_pickaxe")), where
            source = next((m for m in smelt[a.item] if inv[m] >= a.count), None)
            assert source, f"{where}: nothing to smelt in {dict(inv)}"
            fuel_need = math.ceil(a.count * 200 / burn[a.fuel])
            assert inv[a.fuel] - (a.count if a.fuel == source else 0) >= fuel_need, f"{where}: fuel"
            inv[source] -= a.count
            inv[a.fuel] -= fuel_need
            inv[a.item] += a.count
        else:
            prompt, goal, n = a.args
            verb, target = prompt.split(" ", 1)
            assert target in WORLD_BLOCKS or target in task.init_command, f"{where}: no {target} in this world"
            if (verb, target) in SPECIAL:
                item, need, used = SPECIAL[(verb, target)]
                assert goal == item and (need is None or (hand or "").endswith(need)), where
                if used:
                    assert inv[used] >= n, where
                    inv[used] -= n
            elif target in block_drops:
                assert goal in block_drops[target], f"{where}: {target} does not drop {goal}"
                assert not tools[target] or hand in tools[target], f"{where}: holding {hand}"
            else:
                assert goal in mob_drops.get(target, ()), f"{where}: {target} does not drop {goal}"
            inv[goal] += n
        assert all(v >= 0 for v in inv.values()), where
        if hand and inv[hand] <= 0:
            hand = None
    return inv


def held(task: Task, inv: Counter) -> int:
    """VAB's count: an item's total, a tag's best single member."""
    _, _, _, _, tags, _, _ = _facts()
    return max((inv[m] for m in tags[task.target]), default=0) if task.target in tags else inv[task.target]


@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_every_task_has_a_plan_that_ends_with_the_target(task):
    actions = plan(task.target, task.count, task.inventory(), task.init_command)
    assert actions, task.name
    inv = play(actions, task)
    assert held(task, inv) >= task.count, (task.name, dict(inv))
    assert len(actions) <= 60, f"{task.name}: {len(actions)} actions leave little of VAB's 100 rounds"


def test_the_checker_refuses_a_broken_plan():
    task = next(t for t in TASKS if t.name == "iron_ore")
    actions = plan(task.target, task.count, task.inventory(), task.init_command)
    no_stone_pickaxe = [a for a in actions if a != Action.equip("stone_pickaxe")]
    with pytest.raises(AssertionError, match="holding wooden_pickaxe"):
        play(no_stone_pickaxe, task)
    no_table = [a for a in actions if a != Action.craft("crafting_table", 1)]
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        play(no_table, task)


def _task(name: str) -> Task:
    return next(t for t in TASKS if t.name == name)


def test_plans_use_what_the_inventory_already_holds():
    steps = [str(a) for a in plan("iron_sword", 1, {"oak_log": 64})]
    assert not any("chop" in s for s in steps)  # 64 logs given: no tree to fell
    obsidian = _task("obsidian")
    steps = plan(obsidian.target, 1, obsidian.inventory(), obsidian.init_command)
    assert not any(a.item in ("wooden_pickaxe", "stone_pickaxe", "iron_pickaxe") and a.kind == "craft" for a in steps)
    assert plan("stick", 3, {"stick": 5}) == []
    assert plan("planks", 1, {"birch_planks": 1}) == []


def test_the_right_pickaxe_is_in_hand_before_mining():
    def tool_before(actions, prompt):
        i = next(i for i, a in enumerate(actions) if a.kind == "execute" and a.args[0] == prompt)
        return next(a.item for a in reversed(actions[:i]) if a.kind == "equip")

    assert tool_before(plan("cobblestone"), "mine stone") == "wooden_pickaxe"
    assert tool_before(plan("iron_ore"), "mine iron_ore") == "stone_pickaxe"
    assert tool_before(plan("diamond"), "mine diamond_ore") == "iron_pickaxe"
    assert tool_before(plan("obsidian", 1, {}, ["obsidian"]), "mine obsidian") == "diamond_pickaxe"
    assert str(plan("iron_ore")[-1]) == 'execute("mine iron_ore", "iron_ore", 1)'


def test_one_trip_gathers_what_the_waiting_steps_want():
    steps = [str(a) for a in plan("stone")]
    assert [s for s in steps if s.startswith("execute")] == [
        'execute("chop oak_log", "oak_log", 3)', 'execute("mine stone", "cobblestone", 9)']
    assert steps[-1] == 'smelt("stone", 1)'


def test_smelting_brings_furnace_fuel_and_ingredient():
    actions = plan("iron_ingot", 3, {"oak_log": 10, "cobblestone": 20, "stone_pickaxe": 1})
    kinds = [a.kind for a in actions]
    assert kinds.count("smelt") == 1 and actions[-1].kind == "smelt" and actions[-1].fuel
    assert "furnace" in [a.item for a in actions if a.kind == "craft"]


def test_an_item_the_world_cannot_give_is_refused_with_its_name():
    with pytest.raises(PlanError, match="nether_star"):
        plan("beacon", 1, {})
    with pytest.raises(PlanError, match="neither"):
        plan("iron_pickax", 1, {})
