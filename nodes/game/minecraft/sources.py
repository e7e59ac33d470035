"""Where raw materials come from: which block to break or which mob to kill for an item, what the
player must hold to get the drop, and the verb-object subgoal ("mine iron_ore") that VAB's
``execute`` action hands to the low-level executor.

Drops and harvest tools are minecraft-data's (block and entity loot tables, ``harvestTools``), so the
planner asks for a stone pickaxe before iron ore because Minecraft itself drops nothing otherwise.
Three facts minecraft-data lacks are written here by hand, each with its reason (``SPECIAL``).

Availability is a property of the world, not of Minecraft: ``WORLD_BLOCKS`` are the blocks the
planner assumes every VAB task's world generates near the spawn (trees, stone and the overworld ores,
sand, gravel, dirt and grass); anything else (crops, flowers, obsidian, mobs) is only there when the
task's ``init_command`` spawns it, and callers pass those names as ``nearby``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from nodes.game.minecraft import mcdata
from nodes.game.minecraft.recipes import bare

#: blocks the world generator must provide in every task (plains and oak forest, 1.16.5 ore depths)
WORLD_BLOCKS = frozenset({
    "oak_log", "stone", "dirt", "grass_block", "grass", "sand", "gravel",
    "coal_ore", "iron_ore", "gold_ore", "lapis_ore", "redstone_ore", "diamond_ore",
})

#: cheapest to make first: what the planner crafts when a block needs one tool of a kind
TOOL_LADDER = tuple(f"{tier}_{kind}" for kind in ("pickaxe", "axe", "shovel", "sword", "hoe")
                    for tier in ("wooden", "stone", "iron", "golden", "diamond", "netherite")) + ("shears",)
AXES = tuple(t for t in TOOL_LADDER if t.endswith("_axe"))

#: crops whose grown block the executor harvests (anything else of material "plant" is collected)
CROPS = frozenset({"wheat", "carrots", "potatoes", "beetroots"})
_VERBS = {"rock": "mine", "wood": "chop", "dirt": "dig", "web": "cut", "wool": "break"}


@dataclass(frozen=True)
class Source:
    """One way to get ``item`` from the world with ``execute``."""

    item: str
    verb: str
    target: str  # a block or entity name
    kind: str  # "block" | "entity"
    tools: tuple[str, ...] = ()  # hold any one of these (cheapest first); empty: a bare hand does
    consumes: str | None = None  # an item the action uses up (milking turns a bucket into milk)
    natural: bool = False  # in every task's world; otherwise only when the task spawns ``target``
    why: str = ""  # for hand-written facts: why minecraft-data does not say it

    @property
    def prompt(self) -> str:
        """The verb-object subgoal VAB's ``execute`` takes ("mine iron_ore", "kill cow")."""
        return f"{self.verb} {self.target}"

    def available(self, nearby: Iterable[str] = ()) -> bool:
        return self.natural or self.target in {bare(n) for n in nearby}


def _ladder_order(tools: Iterable[str]) -> tuple[str, ...]:
    rank = {t: i for i, t in enumerate(TOOL_LADDER)}
    return tuple(sorted(tools, key=lambda t: (rank.get(t, len(rank)), t)))


def _block_verb(block: mcdata.Block) -> str:
    if block.name in CROPS:
        return "harvest"
    return _VERBS.get(block.material, "collect")


#: facts of 1.16.5 that minecraft-data's loot tables leave out
SPECIAL: tuple[Source, ...] = (
    Source("milk_bucket", "milk", "cow", "entity", tools=("bucket",), consumes="bucket",
           why="using a bucket on a cow fills it; milk is an interaction, not a loot table"),
    Source("white_wool", "kill", "sheep", "entity",
           why="an unsheared white sheep drops one white wool (loot table entities/sheep/white, "
               "which minecraft-data's entityLoot does not carry; it lists only mutton)"),
    Source("egg", "collect", "egg", "entity",
           why="chickens lay eggs as items on the ground; VAB's init_command 'egg' places them"),
    Source("stripped_oak_log", "strip", "oak_log", "block", tools=AXES, natural=True,
           why="using an axe on a log strips it in place; there is no recipe for stripped logs"),
)


@cache
def _index() -> dict[str, tuple[Source, ...]]:
    data = mcdata.load()
    found: dict[str, list[Source]] = {}
    for block in data.blocks.values():
        for drop in block.drops:
            if drop.silk_touch or drop.chance <= 0 or drop.item not in data.items:
                continue
            src = Source(drop.item, _block_verb(block), block.name, "block",
                         _ladder_order(block.harvest_tools), natural=block.name in WORLD_BLOCKS)
            if src not in found.setdefault(drop.item, []):
                found[drop.item].append(src)
    for entity, drops in data.entity_drops.items():
        for drop in drops:
            if drop.chance <= 0 or drop.item not in data.items:
                continue
            src = Source(drop.item, "kill", entity, "entity")
            if src not in found.setdefault(drop.item, []):
                found[drop.item].append(src)
    for src in SPECIAL:
        found.setdefault(src.item, []).insert(0, src)

    def preference(s: Source) -> tuple[bool, bool, bool, str]:
        # the world's own blocks first; then a block that is the item itself or a hand-written
        # fact before a by-product (oak_sapling from oak_sapling, not from leaves); blocks before
        # mobs (potatoes from the crop, not from zombies); then by name
        return (not s.natural, not (s.target == s.item or s.why), s.kind != "block", s.target)

    return {item: tuple(sorted(srcs, key=preference)) for item, srcs in found.items()}


def all_sources(item: str) -> tuple[Source, ...]:
    """Every block or mob that drops ``item`` in 1.16.5 (without silk touch), preferred first."""
    return _index().get(bare(item), ())


def sources(item: str, nearby: Iterable[str] = ()) -> tuple[Source, ...]:
    """The sources of ``item`` a task's world has: its generated blocks and what it spawns."""
    near = {bare(n) for n in nearby}
    return tuple(s for s in all_sources(item) if s.natural or s.target in near)


def harvest_tools(block: str) -> tuple[str, ...]:
    """The tools that make ``block`` drop anything, cheapest first; empty: a hand does."""
    return _ladder_order(mcdata.load().blocks[bare(block)].harvest_tools)
