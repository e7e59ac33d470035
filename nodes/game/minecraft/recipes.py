"""Crafting and smelting recipes of Minecraft 1.16.5, with item tags resolved as Minecraft resolves them.

Crafting comes from minecraft-data, which stores each recipe once per concrete ingredient choice
(a crafting table is eight recipes, one per kind of planks). VAB's agents, its tasks and its step
rewards speak in tags instead ("3 stone_tool_materials"), so the variants are folded back here: an
ingredient becomes a tag exactly when minecraft-data holds the variant for *every* member of the
tag with everything else unchanged; the test suite checks that folding and unfolding gives back
minecraft-data's variants one for one. minecraft-data has no tags and no furnace recipes for
1.16.5, so those two come from this pack's own data files (``data/tags_1.16.5.json``,
``data/smelting_1.16.5.json``), each saying where its facts come from.

Names are bare item names (``oak_planks``); ``minecraft:`` prefixes and a tag's ``#`` are accepted
and dropped on the way in (``bare``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import cache
from itertools import product
from pathlib import Path
from types import MappingProxyType
from typing import Any

from nodes.game.minecraft import mcdata

DATA_DIR = Path(__file__).resolve().parent / "data"
TAGS_FILE = DATA_DIR / "tags_1.16.5.json"
SMELTING_FILE = DATA_DIR / "smelting_1.16.5.json"

#: a furnace finishes one item every 200 game ticks, whatever it smelts
SMELT_TICKS = 200

#: the two tags with the same members (cobblestone, blackstone): Minecraft 1.16.5 gives the stone
#: tools the first and every other recipe (furnace, brewing stand) the second; minecraft-data's
#: expanded variants cannot tell them apart, so the result's kind decides
_TOOL_SUFFIXES = ("_pickaxe", "_axe", "_shovel", "_hoe", "_sword")


def bare(name: str) -> str:
    """``minecraft:oak_log``, ``#minecraft:planks``, `` Oak_Log `` -> ``oak_log`` / ``planks``."""
    name = name.strip().lower().lstrip("#")
    return name.split(":", 1)[1] if name.startswith("minecraft:") else name


def _load_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


# ---- tags ----------------------------------------------------------------------------------------

@cache
def tags() -> Mapping[str, tuple[str, ...]]:
    """Each tag's member items, nested tags expanded, in the data pack's order."""
    raw: dict[str, list[str]] = _load_json(TAGS_FILE)["tags"]

    def expand(tag: str, path: tuple[str, ...]) -> list[str]:
        if tag in path:
            raise ValueError(f"{TAGS_FILE}: tag {tag!r} contains itself (via {' -> '.join(path)})")
        if tag not in raw:
            raise ValueError(f"{TAGS_FILE}: tag {path[-1]!r} names an unknown tag #{tag}")
        out: list[str] = []
        for member in raw[tag]:
            for item in (expand(member[1:], (*path, tag)) if member.startswith("#") else [member]):
                if item not in out:
                    out.append(item)
        return out

    return MappingProxyType({tag: tuple(expand(tag, ())) for tag in raw})


def is_tag(name: str) -> bool:
    return bare(name) in tags()


def tag_members(name: str) -> tuple[str, ...]:
    """A tag's items; raises ``KeyError`` naming the known tags for anything else."""
    try:
        return tags()[bare(name)]
    except KeyError:
        raise KeyError(f"{name!r} is not an item tag this pack knows; known: {', '.join(sorted(tags()))}") from None


def tags_of(item: str) -> tuple[str, ...]:
    """The tags an item belongs to, smallest first (``oak_log`` -> oak_logs, logs_that_burn, logs)."""
    item = bare(item)
    return tuple(sorted((t for t, m in tags().items() if item in m), key=lambda t: (len(tags()[t]), t)))


def options(name: str) -> tuple[str, ...]:
    """The concrete items a name stands for: a tag's members, or the item itself."""
    name = bare(name)
    return tags()[name] if name in tags() else (name,)


def is_item(name: str) -> bool:
    return bare(name) in mcdata.load().items


def known(name: str) -> bool:
    """Whether a name is an item of 1.16.5 or one of the pack's tags."""
    return is_item(name) or is_tag(name)


def goal_count(name: str, inventory: Mapping[str, int]) -> int:
    """How many of ``name`` an inventory holds, counted the way VAB's judge counts: an item by its
    total; a tag by its best single member (VAB's ``monitor_function`` takes the largest count of
    any one member, so 1 oak_planks + 1 birch_planks is 1 planks, not 2)."""
    counts = {bare(k): v for k, v in inventory.items()}
    name = bare(name)
    if name in tags():
        return max((counts.get(m, 0) for m in tags()[name]), default=0)
    return counts.get(name, 0)


# ---- crafting ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ingredient:
    """``count`` of one item, or of any members of a tag (Minecraft takes each slot's item from
    the tag on its own, so the members can be mixed; VAB's crafting takes all from one member)."""

    name: str
    count: int
    is_tag: bool = False

    @property
    def options(self) -> tuple[str, ...]:
        return tags()[self.name] if self.is_tag else (self.name,)

    def __str__(self) -> str:
        return f"{self.count} {self.name}" + (" (tag)" if self.is_tag else "")


Grid = tuple[tuple[str | None, ...], ...]  # rows of slots: an item, "#tag", or None for empty


@dataclass(frozen=True)
class CraftingRecipe:
    result: str
    count: int  # items one craft gives
    ingredients: tuple[Ingredient, ...]  # totals per distinct item or tag, in grid order
    shape: Grid | None = None  # None: shapeless
    #: what stays in the grid afterwards, where it stays (cake leaves its three milk buckets empty)
    out_shape: Grid | None = None

    @property
    def leftovers(self) -> tuple[Ingredient, ...]:
        totals: dict[str, int] = {}
        for s in (s for row in self.out_shape or () for s in row if s):
            totals[s] = totals.get(s, 0) + 1
        return tuple(Ingredient(s, n) for s, n in totals.items())

    @property
    def shaped(self) -> bool:
        return self.shape is not None

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) of the pattern; a shapeless recipe counts its items."""
        if self.shape is None:
            return (sum(i.count for i in self.ingredients), 1)
        return (max(len(r) for r in self.shape), len(self.shape))

    @property
    def needs_table(self) -> bool:
        """A player's own 2x2 grid holds a pattern up to 2x2 or up to 4 shapeless items; anything
        larger needs a crafting table (VAB's ``crafting_type`` draws the same line)."""
        if self.shape is None:
            return sum(i.count for i in self.ingredients) > 4
        width, height = self.size
        return width > 2 or height > 2

    def with_choice(self, choice: Mapping[str, str]) -> CraftingRecipe:
        """The recipe with tags replaced by the chosen members (``{"planks": "oak_planks"}``), as
        one of minecraft-data's concrete variants; tags without a choice stay."""
        def sub(slot: str | None) -> str | None:
            return choice.get(slot[1:], slot) if slot and slot.startswith("#") else slot

        ings = tuple(Ingredient(choice[i.name], i.count) if i.is_tag and i.name in choice else i
                     for i in self.ingredients)
        shape = None if self.shape is None else tuple(tuple(sub(s) for s in row) for row in self.shape)
        return replace(self, ingredients=ings, shape=shape)

    def variants(self) -> Iterator[CraftingRecipe]:
        """Every concrete recipe this one stands for (one per combination of tag members)."""
        tagged = [i.name for i in self.ingredients if i.is_tag]
        for picks in product(*(tags()[t] for t in tagged)):
            yield self.with_choice(dict(zip(tagged, picks)))


# a variant as minecraft-data gives it, by names: ("shaped", rows, out rows, count) or
# ("shapeless", sorted names, None, count)
_Key = tuple[str, tuple[Any, ...], Any, int]


def _variant_key(raw: Mapping[str, Any], names: mcdata.McData) -> _Key:
    def name(i: Any) -> str | None:
        if i is None:
            return None
        return names.item_name(i if isinstance(i, int) else int(i["id"]))

    count = int(raw["result"].get("count", 1))
    if "inShape" in raw:
        rows = tuple(tuple(name(i) for i in row) for row in raw["inShape"])
        out = tuple(tuple(name(i) for i in row) for row in raw["outShape"]) if raw.get("outShape") else None
        return ("shaped", rows, out, count)
    return ("shapeless", tuple(sorted(name(i) or "" for i in raw["ingredients"])), None, count)


def _substitute(key: _Key, old: str, new: str) -> _Key:
    kind, body, out, count = key
    if kind == "shaped":
        return (kind, tuple(tuple(new if s == old else s for s in row) for row in body), out, count)
    return (kind, tuple(sorted(new if s == old else s for s in body)), out, count)


def _names_in(key: _Key) -> list[str]:
    kind, body, _, _ = key
    slots = [s for row in body for s in row] if kind == "shaped" else list(body)
    seen: list[str] = []
    for s in slots:
        if s and s not in seen:
            seen.append(s)
    return seen


def _tag_for(result: str, item: str, key: _Key, known_keys: set[_Key]) -> str | None:
    """The largest tag holding ``item`` whose every member gives a variant minecraft-data has."""
    candidates = [t for t in tags_of(item) if all(_substitute(key, item, m) in known_keys for m in tags()[t])]
    if not candidates:
        return None
    biggest = max(len(tags()[t]) for t in candidates)
    ties = [t for t in candidates if len(tags()[t]) == biggest]
    if {"stone_tool_materials", "stone_crafting_materials"} <= set(ties):
        return "stone_tool_materials" if result.endswith(_TOOL_SUFFIXES) else "stone_crafting_materials"
    return sorted(ties)[0]


def _fold(result: str, key: _Key, known_keys: set[_Key]) -> CraftingRecipe:
    kind, body, out, count = key
    as_tag = {n: t for n in _names_in(key) if (t := _tag_for(result, n, key, known_keys))}

    def slot(s: str | None) -> str | None:
        return f"#{as_tag[s]}" if s in as_tag else s

    if kind == "shaped":
        shape: Grid | None = tuple(tuple(slot(s) for s in row) for row in body)
        slots = [s for row in shape for s in row if s]
    else:
        shape = None
        slots = [slot(s) for s in body if s]
    totals: dict[str, int] = {}
    for s in slots:
        totals[s] = totals.get(s, 0) + 1
    ings = tuple(Ingredient(s.lstrip("#"), n, s.startswith("#")) for s, n in totals.items())
    return CraftingRecipe(result, count, ings, shape, out)


@cache
def _all_crafting() -> Mapping[str, tuple[CraftingRecipe, ...]]:
    data = mcdata.load()
    out: dict[str, tuple[CraftingRecipe, ...]] = {}
    for result, raws in data.raw_recipes.items():
        keys = [_variant_key(r, data) for r in raws]
        known_keys = set(keys)
        folded: list[CraftingRecipe] = []
        for key in keys:
            recipe = _fold(result, key, known_keys)
            if recipe not in folded:
                folded.append(recipe)
        out[result] = tuple(folded)
    return MappingProxyType(out)


@cache
def _all_concrete() -> Mapping[str, tuple[CraftingRecipe, ...]]:
    data = mcdata.load()
    out = {}
    for result, raws in data.raw_recipes.items():
        out[result] = tuple(_fold(result, _variant_key(r, data), set()) for r in raws)  # no tags fold
    return MappingProxyType(out)


def concrete_recipes(item: str) -> tuple[CraftingRecipe, ...]:
    """minecraft-data's variants of ``item`` as recipes without tags, in minecraft-data's order."""
    return _all_concrete().get(bare(item), ())


def choose_variant(item: str, n: int, inventory: Mapping[str, int]) -> CraftingRecipe | None:
    """The concrete recipe ``craft(item, n)`` uses: the first of minecraft-data's variants whose
    ingredients the inventory holds for all ``ceil(n / count)`` crafts (VAB's crafting, too, takes
    the first recipe it can pay for in full). A tag name crafts its first member that can be made.
    Whether a crafting table is at hand is the caller's check (``needs_table``)."""
    counts = {bare(k): v for k, v in inventory.items()}
    for name in options(item):
        for recipe in concrete_recipes(name):
            times = math.ceil(n / recipe.count)
            if all(counts.get(i.name, 0) >= i.count * times for i in recipe.ingredients):
                return recipe
    return None


def crafting_recipes(item: str) -> tuple[CraftingRecipe, ...]:
    """The ways to craft ``item`` (empty for things that are only mined, smelted or dropped)."""
    return _all_crafting().get(bare(item), ())


def raw_variants(item: str) -> tuple[_Key, ...]:
    """minecraft-data's own variants of ``item``'s recipes, by name (what the folding must give back)."""
    data = mcdata.load()
    return tuple(_variant_key(r, data) for r in data.raw_recipes.get(bare(item), ()))


def variant_key(recipe: CraftingRecipe) -> _Key:
    """A concrete recipe in ``raw_variants``' form."""
    if any(i.is_tag for i in recipe.ingredients):
        raise ValueError(f"{recipe.result}: choose the tags' members first (CraftingRecipe.variants)")
    if recipe.shape is not None:
        return ("shaped", recipe.shape, recipe.out_shape, recipe.count)
    body = tuple(sorted(i.name for i in recipe.ingredients for _ in range(i.count)))
    return ("shapeless", body, None, recipe.count)


# ---- smelting and fuel ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SmeltingRecipe:
    result: str
    ingredient: Ingredient  # one item (or tag member) per result item
    experience: float
    cooking_ticks: int
    count: int = 1


@dataclass(frozen=True)
class Fuel:
    name: str
    burn_ticks: int
    is_tag: bool = False

    @property
    def items_per_fuel(self) -> float:
        """How many items one piece smelts (coal: 8, planks: 1.5)."""
        return self.burn_ticks / SMELT_TICKS

    @property
    def options(self) -> tuple[str, ...]:
        return tags()[self.name] if self.is_tag else (self.name,)


@cache
def _smelting() -> tuple[Mapping[str, SmeltingRecipe], tuple[Fuel, ...]]:
    raw = _load_json(SMELTING_FILE)
    recipes = {}
    for entry in raw["smelting"]:
        ing = entry["ingredient"]
        recipes[entry["result"]] = SmeltingRecipe(
            entry["result"], Ingredient(ing.lstrip("#"), 1, ing.startswith("#")),
            float(entry["experience"]), int(entry["cooking_ticks"]))
    fuels = tuple(Fuel(f["fuel"].lstrip("#"), int(f["burn_ticks"]), f["fuel"].startswith("#"))
                  for f in raw["fuels"])
    return MappingProxyType(recipes), fuels


def smelting_recipe(item: str) -> SmeltingRecipe | None:
    """How a furnace makes ``item`` (1.16.5 has at most one furnace recipe per result)."""
    return _smelting()[0].get(bare(item))


def smelting_recipes() -> Mapping[str, SmeltingRecipe]:
    return _smelting()[0]


def fuels() -> tuple[Fuel, ...]:
    """Furnace fuels, longest-burning first."""
    return _smelting()[1]


def burn_ticks(item: str) -> int | None:
    """How long one ``item`` burns in a furnace, or None when it is no fuel."""
    item = bare(item)
    for fuel in fuels():
        if item in fuel.options:
            return fuel.burn_ticks
    return None


#: the fuels ``choose_fuel`` burns, in its order: VAB's smelting looks for coals, then planks, then
#: logs; rarer fuels (blaze rods, coal blocks, kelp blocks, tools) are ingredients of other things
#: and are never burnt unasked
EVERYDAY_FUELS = ("coal", "charcoal", "oak_planks", "spruce_planks", "birch_planks", "jungle_planks",
                  "acacia_planks", "dark_oak_planks", "oak_log", "birch_log", "spruce_log", "jungle_log",
                  "acacia_log", "dark_oak_log", "oak_wood", "birch_wood", "spruce_wood", "jungle_wood",
                  "acacia_wood", "dark_oak_wood", "stripped_oak_log", "stripped_birch_log",
                  "stripped_spruce_log", "stripped_jungle_log", "stripped_acacia_log",
                  "stripped_dark_oak_log")


def choose_fuel(inventory: Mapping[str, int], n: int, ingredient: str | None = None) -> str | None:
    """The fuel ``smelt(..., n)`` burns: the first everyday fuel the inventory holds enough of for
    all ``n`` items (one kind, not a mix), counting the ingredient's own items as spoken for."""
    counts = {bare(k): v for k, v in inventory.items()}
    for fuel in EVERYDAY_FUELS:
        spare = counts.get(fuel, 0) - (n if fuel == ingredient else 0)
        if spare >= fuel_needed(fuel, n):
            return fuel
    return None


def smelt_ingredient(item: str, n: int, inventory: Mapping[str, int]) -> str | None:
    """The item ``smelt(item, n)`` puts in the furnace: the recipe's item, or the first member of its
    tag the inventory holds ``n`` of; None when there is no recipe or not enough."""
    recipe = smelting_recipe(item)
    if recipe is None:
        return None
    counts = {bare(k): v for k, v in inventory.items()}
    return next((m for m in recipe.ingredient.options if counts.get(m, 0) >= n), None)


def fuel_needed(item: str, n: int) -> int:
    """How many ``item`` a furnace burns to smelt ``n`` items (Minecraft's rule: each piece burns
    for its burn time, an item takes 200 ticks; a started piece is used up)."""
    ticks = burn_ticks(item)
    if ticks is None:
        raise ValueError(f"{item!r} is no furnace fuel; fuels: {', '.join(f.name for f in fuels())}")
    return math.ceil(n * SMELT_TICKS / ticks)


# ---- all names -----------------------------------------------------------------------------------

def all_names() -> tuple[str, ...]:
    """Every item and tag name, for suggestions."""
    return (*mcdata.load().items, *tags())
