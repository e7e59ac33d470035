"""VAB's ``look_up(item)`` action: how to get an item, in words, for an agent that does not know
Minecraft's recipes by heart.

It tells what VAB's look-up tells (ingredients and counts, what one craft gives, whether a crafting
table or a furnace and fuel are needed, and for a tag which items count as it, each with its own
way), worded afresh, and adds what VAB leaves out: how a raw item is gathered (which block or mob,
with which tool). An unknown name gets close matches, since agents often misspell or pluralise
("iron_pickaxes", "wood").
"""

from __future__ import annotations

import difflib
from functools import cache

from nodes.game.minecraft import recipes
from nodes.game.minecraft.recipes import CraftingRecipe, bare
from nodes.game.minecraft.sources import all_sources
from nodes.game.minecraft.tasks import load_tasks

#: fuels named in smelting answers (the rest of the table is there, but rarely what one burns)
_TOLD_FUELS = ("coal", "charcoal", "oak_planks", "oak_log", "stick")


class UnknownItem(KeyError):
    """A name that is neither an item nor a tag; ``str()`` is the message for the agent."""

    def __init__(self, name: str, matches: list[str]) -> None:
        super().__init__(name)
        self.name, self.matches = name, matches

    def __str__(self) -> str:
        hint = f" Close matches: {', '.join(self.matches)}." if self.matches else ""
        return f"There is no item or tag called {self.name!r} in Minecraft {recipes.mcdata.VERSION}.{hint}"


def _list(names: list[str], last: str = "and") -> str:
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def _ingredient(ing: recipes.Ingredient) -> str:
    if not ing.is_tag:
        return f"{ing.count} {ing.name}"
    members = recipes.tag_members(ing.name)
    shown = _list(list(members[:6]), "or") + (f" or {len(members) - 6} more" if len(members) > 6 else "")
    return f"{ing.count} {ing.name} (a tag: any of {shown})"


def _craft_text(recipe: CraftingRecipe) -> str:
    where = ("needs a crafting table (the pattern is larger than 2x2)" if recipe.needs_table
             else "fits the inventory's own 2x2 grid, no crafting table needed")
    kind = "shaped" if recipe.shaped else "shapeless"
    text = (f"craft from {_list([_ingredient(i) for i in recipe.ingredients])}; {where}; {kind}; "
            f"one craft gives {recipe.count} {recipe.result}")
    if recipe.leftovers:
        text += f", and gives back {_list([str(i) for i in recipe.leftovers])}"
    return text


def _smelt_text(item: str) -> str | None:
    smelt = recipes.smelting_recipe(item)
    if smelt is None:
        return None
    fuels = "; ".join(f"1 {f} smelts {recipes.burn_ticks(f) / recipes.SMELT_TICKS:g}" for f in _TOLD_FUELS)
    return (f"smelt in a furnace: each {item} takes {_ingredient(smelt.ingredient)} and fuel ({fuels} items); "
            f"a furnace must be in the inventory, and a pickaxe to pick the furnace up again")


def _gather_text(item: str) -> str | None:
    """How the world gives the item: blocks every world generates, things VAB's tasks spawn, and
    the hand-written facts (milk, wool, eggs, stripped logs); not blocks a player placed or mobs no
    task has (iron ingots from zombies)."""
    spawned = _spawned()
    found = [s for s in all_sources(item) if s.natural or s.target in spawned or s.why]
    if not found:
        return None
    parts = []
    for src in found[:4]:
        part = f"'{src.prompt}'"
        if src.tools:
            part += f" holding {_list(list(src.tools[:4]), 'or')}"
        if src.consumes:
            part += f" (uses up a {src.consumes})"
        parts.append(part)
    return f"get it with execute: {'; or '.join(parts)}"


@cache
def _spawned() -> frozenset[str]:
    """What VAB's tasks place or spawn near the agent (their ``init_command``s)."""
    return frozenset(name for task in load_tasks() for name in task.init_command)


def _item_lines(item: str) -> list[str]:
    lines = []
    crafts = recipes.crafting_recipes(item)
    for n, recipe in enumerate(crafts, 1):
        prefix = f"way {n}: " if len(crafts) > 1 else ""
        lines.append(prefix + _craft_text(recipe))
    for text in (_smelt_text(item), _gather_text(item)):
        if text:
            lines.append(text)
    if not lines:
        lines.append("no recipe; it is not crafted or smelted, and no block or mob of these worlds drops it")
    return lines


def describe(item: str) -> str:
    """The look-up text for an item or tag; raises ``UnknownItem`` (with close matches) otherwise."""
    name = bare(item)
    if recipes.is_tag(name):
        members = recipes.tag_members(name)
        head = (f"{name} is a tag: recipes that ask for {name} take any one of these "
                f"{len(members)} items: {_list(list(members), 'or')}.")
        return "\n".join([head, *(f"{m}: {'; '.join(_item_lines(m))}." for m in members)])
    if not recipes.is_item(name):
        raise UnknownItem(item, difflib.get_close_matches(name, recipes.all_names(), n=5, cutoff=0.6))
    lines = _item_lines(name)
    tags = recipes.tags_of(name)
    tail = [f"It belongs to the tag{'s' if len(tags) > 1 else ''} {_list(list(tags))}."] if tags else []
    return "\n".join([f"{name}: {lines[0]}.", *(f"{line}." for line in lines[1:]), *tail])


def look_up(item: str) -> str:
    """VAB's action: never raises, an unknown name gets the message with close matches."""
    try:
        return describe(item)
    except UnknownItem as e:
        return str(e)
