"""The Minecraft pack's data layer: minecraft-data found and read, recipes with tags folded back as
Minecraft 1.16.5 has them, the pack's own tag and smelting tables, and the look_up text and its
command line. Recipes are checked against minecraft-data's JSON read here on its own, not through
the module under test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodes.game.minecraft import mcdata, recipes
from nodes.game.minecraft.lookup import UnknownItem, describe, look_up
from nodes.game.minecraft.tasks import TASKS_FILE

pytestmark = pytest.mark.skipif(not mcdata.available(),
                                reason="minecraft-data is not installed (bash setup.sh runs npm ci in nodes/game/minecraft/js)")

ROOT = Path(__file__).resolve().parents[1]


def _json(path: Path):
    return json.loads(path.read_text())


def _raw():
    """minecraft-data's 1.16.5 items and recipes, read straight from its files."""
    base = mcdata.DATA_DIR
    where = _json(base / "dataPaths.json")["pc"]["1.16.5"]
    items = _json(base / where["items"] / "items.json")
    names = {i["id"]: i["name"] for i in items}
    ids = {i["name"]: i["id"] for i in items}
    raw = _json(base / where["recipes"] / "recipes.json")
    return names, ids, raw


def _variants(item: str) -> list[tuple[list[list[str | None]] | None, list[str], int]]:
    """Each minecraft-data variant of ``item``: (grid or None, ingredient names, count)."""
    names, ids, raw = _raw()
    out = []
    for v in raw[str(ids[item])]:
        if "inShape" in v:
            grid = [[names[i] if i is not None else None for i in row] for row in v["inShape"]]
            out.append((grid, [s for row in grid for s in row if s], v["result"]["count"]))
        else:
            out.append((None, [names[i] for i in v["ingredients"]], v["result"]["count"]))
    return out


def test_data_comes_from_the_folders_datapaths_names_for_1_16_5():
    data = mcdata.load()
    where = _json(mcdata.DATA_DIR / "dataPaths.json")["pc"]["1.16.5"]
    assert data.paths["recipes"] == mcdata.DATA_DIR / where["recipes"] / "recipes.json"
    assert data.paths["blockLoot"].is_file() and data.paths["entityLoot"].is_file()
    assert data.item("crafting_table").stack_size == 64
    assert {"wooden_pickaxe", "stone_pickaxe"} <= data.blocks["stone"].harvest_tools
    assert "wooden_pickaxe" not in data.blocks["iron_ore"].harvest_tools
    assert data.blocks["obsidian"].harvest_tools == {"diamond_pickaxe", "netherite_pickaxe"}
    assert data.foods["bread"]["foodPoints"] == 5


def test_missing_minecraft_data_says_where_and_what_to_run(tmp_path):
    with pytest.raises(mcdata.McDataMissing) as e:
        mcdata.load(tmp_path / "nowhere")
    assert str(tmp_path / "nowhere" / "dataPaths.json") in str(e.value)
    assert "bash setup.sh" in str(e.value)


def test_crafting_table_and_stick_take_any_planks():
    planks = recipes.tag_members("planks")
    (table,) = recipes.crafting_recipes("crafting_table")
    assert [str(i) for i in table.ingredients] == ["4 planks (tag)"] and table.count == 1
    assert not table.needs_table  # 2x2 fits the inventory grid
    assert {ings[0] for _, ings, _ in _variants("crafting_table")} == set(planks)
    stick_planks, stick_bamboo = recipes.crafting_recipes("stick")
    assert (stick_planks.count, [str(i) for i in stick_planks.ingredients]) == (4, ["2 planks (tag)"])
    assert (stick_bamboo.count, [str(i) for i in stick_bamboo.ingredients]) == (1, ["2 bamboo"])
    assert {c for _, _, c in _variants("stick")} == {4, 1}


def test_pickaxes_need_a_table_and_stone_tools_take_the_stone_tool_tag():
    (wooden,) = recipes.crafting_recipes("wooden_pickaxe")
    assert {(i.name, i.count, i.is_tag) for i in wooden.ingredients} == {("planks", 3, True), ("stick", 2, False)}
    assert wooden.needs_table and wooden.size == (3, 3)
    (stone,) = recipes.crafting_recipes("stone_pickaxe")
    assert {(i.name, i.count, i.is_tag) for i in stone.ingredients} == {
        ("stone_tool_materials", 3, True), ("stick", 2, False)}
    heads = {grid[0][0] for grid, _, _ in _variants("stone_pickaxe")}
    assert heads == set(recipes.tag_members("stone_tool_materials")) == {"cobblestone", "blackstone"}


def test_furnace_torch_bread_and_cake():
    (furnace,) = recipes.crafting_recipes("furnace")
    assert [str(i) for i in furnace.ingredients] == ["8 stone_crafting_materials (tag)"] and furnace.needs_table
    (torch,) = recipes.crafting_recipes("torch")
    assert {str(i) for i in torch.ingredients} == {"1 coals (tag)", "1 stick"} and torch.count == 4
    assert {tuple(ings) for _, ings, _ in _variants("torch")} == {("coal", "stick"), ("charcoal", "stick")}
    (bread,) = recipes.crafting_recipes("bread")
    assert bread.needs_table and bread.size == (3, 1)  # a row of three is wider than 2x2
    (cake,) = recipes.crafting_recipes("cake")
    grid, ings, count = _variants("cake")[0]
    assert {i.name: i.count for i in cake.ingredients} == {n: ings.count(n) for n in set(ings)}
    assert [str(i) for i in cake.leftovers] == ["3 bucket"]  # the milk buckets come back empty
    assert cake.needs_table and count == cake.count == 1


def test_folding_tags_gives_back_every_minecraft_data_variant():
    names, ids, raw = _raw()
    checked = 0
    for key in raw:
        item = names[int(key)]
        ours = {recipes.variant_key(v) for r in recipes.crafting_recipes(item) for v in r.variants()}
        assert ours == set(recipes.raw_variants(item)), item
        assert len(ours) == len(raw[key]), item
        checked += 1
    assert checked == len(raw) > 500


def test_every_tag_used_by_vab_tasks_resolves_to_items():
    text = TASKS_FILE.read_text()
    tasks = json.loads(text)
    names = set()
    for t in tasks:
        names |= {*t["step_rewards"], *t["task_obj"], *t["env"]["init_inventory"]}
    data = mcdata.load()
    non_items = {recipes.bare(n) for n in names if recipes.bare(n) not in data.items}
    assert non_items == {"gold_ores", "logs_that_burn", "oak_logs", "planks", "stone_crafting_materials",
                         "stone_tool_materials", "wooden_slabs", "wool"}
    for tag in non_items | {"logs", "coals", "sand"}:
        members = recipes.tag_members(tag)
        assert members and all(m in data.items for m in members), tag
    assert len(recipes.tag_members("logs")) == 32  # six woods and two nether stems, four forms each
    assert "crimson_stem" not in recipes.tag_members("logs_that_burn")
    assert recipes.tags_of("oak_log") == ("oak_logs", "logs_that_burn", "logs")


def test_smelting_table_iron_ingot_and_fuel():
    data = mcdata.load()
    iron = recipes.smelting_recipe("iron_ingot")
    assert (iron.ingredient.name, iron.ingredient.is_tag, iron.cooking_ticks) == ("iron_ore", False, 200)
    assert recipes.smelting_recipe("glass").ingredient.options == ("sand", "red_sand")
    assert recipes.smelting_recipe("charcoal").ingredient.name == "logs_that_burn"
    for r in recipes.smelting_recipes().values():
        assert r.result in data.items and all(m in data.items for m in r.ingredient.options), r
    for f in recipes.fuels():
        assert all(m in data.items for m in f.options), f
    assert recipes.fuel_needed("coal", 8) == 1 and recipes.fuel_needed("coal", 9) == 2
    assert recipes.fuel_needed("oak_planks", 3) == 2 and recipes.burn_ticks("crimson_planks") is None
    assert recipes.choose_fuel({"oak_log": 2}, 2, ingredient="oak_log") is None  # logs to burn and to smelt
    assert recipes.choose_fuel({"oak_log": 4, "coal": 1}, 3) == "coal"


def test_goal_count_counts_a_tag_by_its_best_member_like_vab():
    assert recipes.goal_count("minecraft:planks", {"oak_planks": 1, "birch_planks": 1}) == 1
    assert recipes.goal_count("planks", {"minecraft:oak_planks": 3}) == 3
    assert recipes.goal_count("stick", {"oak_planks": 3}) == 0


def test_choose_variant_is_the_first_one_the_inventory_pays_for():
    assert recipes.choose_variant("stick", 4, {"bamboo": 2, "oak_planks": 2}).ingredients[0].name == "oak_planks"
    assert recipes.choose_variant("stick", 8, {"bamboo": 16, "oak_planks": 2}).ingredients[0].name == "bamboo"
    assert recipes.choose_variant("stick", 1, {"oak_log": 5}) is None


def test_look_up_tells_ingredients_tables_furnaces_and_tags():
    pick = look_up("stone_pickaxe")
    for part in ("3 stone_tool_materials", "cobblestone", "blackstone", "2 stick", "crafting table",
                 "1 stone_pickaxe"):
        assert part in pick
    assert "no crafting table needed" in look_up("minecraft:crafting_table")
    iron = look_up("iron_ingot")
    assert "furnace" in iron and "1 iron_ore" in iron and "1 coal smelts 8" in iron
    ore = look_up("iron_ore")
    assert "'mine iron_ore'" in ore and "stone_pickaxe" in ore and "wooden_pickaxe" not in ore
    planks = look_up("planks")
    assert planks.startswith("planks is a tag")
    assert all(m in planks for m in recipes.tag_members("planks"))
    assert "'kill sheep'" in look_up("white_wool") and "4 string" in look_up("white_wool")
    assert "'milk cow' holding bucket" in look_up("milk_bucket")


def test_look_up_of_an_unknown_name_offers_close_matches():
    text = look_up("iron_pickax")
    assert "'iron_pickax'" in text and "iron_pickaxe" in text
    with pytest.raises(UnknownItem) as e:
        describe("woodd_planks")
    assert "oak_planks" in e.value.matches or "planks" in e.value.matches


def test_command_line_prints_look_up_and_exits_2_for_an_unknown_item():
    run = [sys.executable, "-m", "nodes.game.minecraft", "look_up"]
    ok = subprocess.run([*run, "torch"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout.strip() == describe("torch")
    bad = subprocess.run([*run, "torchh"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stdout == ""
    assert "torchh" in bad.stderr and "torch" in bad.stderr.split("Close matches:")[1]
