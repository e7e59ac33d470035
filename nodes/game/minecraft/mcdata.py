"""Minecraft 1.16.5's own facts (items, blocks, recipes, foods, drops), read from the ``minecraft-data``
npm package that ``setup.sh`` installs under ``js/node_modules``.

Why this package and not a table of our own: it is the data the JavaScript side (flying-squid,
mineflayer, prismarine-recipe) runs on, so the Python side's recipes, drops and harvest tools are
the same facts the world obeys. ``minecraft-data`` keeps one folder per data kind and version and
reuses older folders where nothing changed (1.16.5's recipes live under ``pc/1.16.2``), so the
folder for each kind is looked up in its ``dataPaths.json`` rather than guessed.

Nothing here starts a process; the JSON is parsed once per process (``load`` is cached).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

#: the one Minecraft version the pack runs (MineRL's, and one that flying-squid, mineflayer and
#: prismarine-viewer all support)
VERSION = "1.16.5"

PACK_DIR = Path(__file__).resolve().parent
NODE_MODULES = PACK_DIR / "js" / "node_modules"
#: where minecraft-data keeps its JSON inside its npm package
DATA_DIR = NODE_MODULES / "minecraft-data" / "minecraft-data" / "data"

#: the data kinds this layer reads; the first group must exist, the loot tables may be absent in
#: other package versions (then drops fall back to the blocks' own ``drops`` lists)
REQUIRED = ("items", "blocks", "recipes", "foods", "entities")
OPTIONAL = ("blockLoot", "entityLoot")


class McDataMissing(FileNotFoundError):
    """minecraft-data (or one of its files for 1.16.5) is not where ``setup.sh`` puts it."""


@dataclass(frozen=True)
class Item:
    id: int
    name: str
    display_name: str
    stack_size: int


@dataclass(frozen=True)
class Drop:
    """One line of a loot table: what can fall out, how likely, and under which condition (a grown
    crop, silk touch or not, a kill by the player), so callers can skip drops that need silk touch."""

    item: str
    chance: float
    min_count: int
    max_count: int
    silk_touch: bool | None = None  # True: only with silk touch; False: only without; None: either
    block_age: int | None = None  # a crop's age the drop needs
    player_kill: bool = False


@dataclass(frozen=True)
class Block:
    id: int
    name: str
    display_name: str
    hardness: float | None
    material: str
    diggable: bool
    #: the tools that make the block drop anything at all; empty: a bare hand does
    harvest_tools: frozenset[str]
    drops: tuple[Drop, ...]


@dataclass(frozen=True)
class McData:
    """The parsed JSON of one Minecraft version, indexed by name."""

    version: str
    root: Path
    items: Mapping[str, Item]
    items_by_id: Mapping[int, Item]
    blocks: Mapping[str, Block]
    #: result item name -> minecraft-data's recipe variants (one per concrete ingredient choice)
    raw_recipes: Mapping[str, tuple[Mapping[str, Any], ...]]
    foods: Mapping[str, Mapping[str, Any]]
    entities: Mapping[str, Mapping[str, Any]]
    #: entity name -> what it drops when killed
    entity_drops: Mapping[str, tuple[Drop, ...]]
    paths: Mapping[str, Path] = field(default_factory=dict)

    def item(self, name: str) -> Item:
        try:
            return self.items[name]
        except KeyError:
            raise KeyError(f"{name!r} is not a Minecraft {self.version} item") from None

    def item_name(self, item_id: int) -> str:
        return self.items_by_id[item_id].name


def _read(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise McDataMissing(f"{path} is missing: minecraft-data is not installed; run bash setup.sh "
                            f"(it runs npm ci in {PACK_DIR / 'js'})") from None
    except json.JSONDecodeError as e:
        raise McDataMissing(f"{path} is not valid JSON ({e}); reinstall with bash setup.sh") from None


def data_paths(root: Path = DATA_DIR, version: str = VERSION) -> dict[str, Path]:
    """Which file holds each data kind for ``version``, as minecraft-data's ``dataPaths.json`` says."""
    index = root / "dataPaths.json"
    table = _read(index)
    try:
        folders = table["pc"][version]
    except KeyError:
        raise McDataMissing(f"{index} has no entry pc -> {version}; the pinned minecraft-data "
                            f"(js/package-lock.json) should have one: run bash setup.sh") from None
    return {kind: root / folders[kind] / f"{kind}.json" for kind in (*REQUIRED, *OPTIONAL) if kind in folders}


def _drop(entry: Mapping[str, Any]) -> Drop:
    lo, hi = (list(entry.get("stackSizeRange") or []) + [None, None])[:2]
    # a few loot lines leave one end open ([0, null] for a mushroom block): read it as the other end
    lo, hi = (lo if lo is not None else hi or 1), (hi if hi is not None else lo or 1)
    silk = True if entry.get("silkTouch") else False if entry.get("noSilkTouch") else None
    return Drop(item=entry["item"], chance=float(entry.get("dropChance", 1)), min_count=int(lo),
                max_count=int(hi), silk_touch=silk, block_age=entry.get("blockAge"),
                player_kill=bool(entry.get("playerKill")))


def _parse(root: Path, version: str) -> McData:
    paths = data_paths(root, version)
    missing = [k for k in REQUIRED if k not in paths]
    if missing:
        raise McDataMissing(f"{root / 'dataPaths.json'} names no {', '.join(missing)} for {version}")
    raw = {kind: _read(path) for kind, path in paths.items()}
    items = {i["name"]: Item(i["id"], i["name"], i["displayName"], i["stackSize"]) for i in raw["items"]}
    by_id = {i.id: i for i in items.values()}
    block_loot = {b["block"]: tuple(_drop(d) for d in b["drops"]) for b in raw.get("blockLoot", [])}
    blocks = {}
    for b in raw["blocks"]:
        drops = block_loot.get(b["name"])
        if drops is None:  # no loot table: the block's own list of dropped item ids
            drops = tuple(Drop(by_id[d].name, 1.0, 1, 1) for d in b.get("drops", []) if d in by_id)
        tools = frozenset(by_id[int(t)].name for t in b.get("harvestTools", {}) if int(t) in by_id)
        blocks[b["name"]] = Block(b["id"], b["name"], b["displayName"], b.get("hardness"),
                                  b.get("material", ""), bool(b.get("diggable", True)), tools, drops)
    recipes = {by_id[int(k)].name: tuple(MappingProxyType(v) for v in vs) for k, vs in raw["recipes"].items()
               if int(k) in by_id}
    entity_drops = {e["entity"]: tuple(_drop(d) for d in e["drops"]) for e in raw.get("entityLoot", [])}
    return McData(
        version=version, root=root,
        items=MappingProxyType(items), items_by_id=MappingProxyType(by_id), blocks=MappingProxyType(blocks),
        raw_recipes=MappingProxyType(recipes),
        foods=MappingProxyType({f["name"]: MappingProxyType(f) for f in raw["foods"]}),
        entities=MappingProxyType({e["name"]: MappingProxyType(e) for e in raw["entities"]}),
        entity_drops=MappingProxyType(entity_drops),
        paths=MappingProxyType(paths),
    )


@cache
def load(root: Path = DATA_DIR, version: str = VERSION) -> McData:
    """minecraft-data's facts for ``version``; parsed once per process and root.

    Raises ``McDataMissing`` naming the missing path when ``setup.sh`` has not installed the
    JavaScript side yet."""
    return _parse(Path(root), version)


def available(root: Path = DATA_DIR) -> bool:
    """Whether minecraft-data is installed (tests that need it skip with a reason otherwise)."""
    return (Path(root) / "dataPaths.json").is_file()
