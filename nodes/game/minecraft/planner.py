"""A recipe-tree planner: the VAB actions that take a starting inventory to a target item.

It is the brain of the scripted gold agent (gather, make tools, mine, smelt, craft the target), so
it plans with the same rules the environment enforces, taken from the same modules: recipes and
their variant choice (``recipes.choose_variant``), furnace fuel (``recipes.choose_fuel``), harvest
tools and drops (``sources``). It plans by playing the actions forward on a copy of the inventory:
every step first secures what it needs (ingredients, a crafting table or furnace, a tool in hand),
then is applied, so a later step never counts on items an earlier one used up. A trip to gather
takes along what the waiting steps will want as well (one ``chop oak_log`` for the planks of the
sticks, the table and the pickaxe), since every ``execute`` costs a round of VAB's hundred.

Where Minecraft offers several ways (white wool from a sheep or from four string; leather from a
cow or from rabbit hides), the planner takes the cheapest by a rough count of actions, looking at
what the inventory already holds and at which blocks and mobs the task's world has (``nearby``: the
task's ``init_command``). ``execute`` is assumed to obtain exactly what it asks for; when the
executor falls short in the real world, the agent plans again from the inventory it then has.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from nodes.game.minecraft import recipes
from nodes.game.minecraft.recipes import CraftingRecipe, bare
from nodes.game.minecraft.sources import TOOL_LADDER, Source, all_sources, sources

ActionKind = Literal["execute", "craft", "smelt", "equip"]
INF = math.inf
#: how often one step may go back for things a sibling step used up before giving up
_MAX_ROUNDS = 12
_MAX_DEPTH = 40


class PlanError(ValueError):
    """No plan: the item cannot be made or found in this world from this inventory."""


@dataclass(frozen=True)
class Action:
    """One of VAB's high-level actions with its arguments, in VAB's order:
    ``execute(prompt, goal_item, num)``, ``craft(item, num)``, ``smelt(item, num)``, ``equip(item)``."""

    kind: ActionKind
    args: tuple[str | int, ...]
    #: smelt only: the fuel the plan expects the furnace to burn (``recipes.choose_fuel``'s pick)
    fuel: str | None = None

    @property
    def item(self) -> str:
        """The item the action is about: what it makes, obtains or puts in hand."""
        return str(self.args[1] if self.kind == "execute" else self.args[0])

    @property
    def count(self) -> int:
        return int(self.args[-1]) if self.kind != "equip" else 1

    def __str__(self) -> str:
        """The call as an agent writes it in VAB's ACTION line: ``craft("stick", 4)``."""
        return f"{self.kind}({', '.join(json.dumps(a) for a in self.args)})"

    @staticmethod
    def execute(prompt: str, goal: str, n: int) -> Action:
        return Action("execute", (prompt, goal, n))

    @staticmethod
    def craft(item: str, n: int) -> Action:
        return Action("craft", (item, n))

    @staticmethod
    def smelt(item: str, n: int, fuel: str) -> Action:
        return Action("smelt", (item, n), fuel)

    @staticmethod
    def equip(item: str) -> Action:
        return Action("equip", (item,))


class _Planner:
    """One planning run: the inventory and hand as the plan leaves them, the actions so far, and
    the needs of the steps under way (for gathering in one trip what several steps want)."""

    def __init__(self, inventory: Mapping[str, int], nearby: Iterable[str], equipped: str | None) -> None:
        self.inv: Counter[str] = Counter({bare(k): int(v) for k, v in inventory.items() if v > 0})
        self.nearby = frozenset(bare(n) for n in nearby)
        self.equipped = bare(equipped) if equipped else None
        self.actions: list[Action] = []
        self.roots: list[str] = []  # the items whose costs the table covers (and their needs)
        self._deps: dict[str, tuple[str, ...]] = {}
        #: the needs of the steps under way, each with the item it is getting now (``secure``)
        self.frames: list[tuple[Mapping[str, int], list[str]]] = []
        self._costs: tuple[frozenset[str], dict[str, float], dict[str, float]] | None = None

    # ---- costs: a rough count of actions, to choose between ways -----------------------------

    def deps(self, item: str) -> tuple[str, ...]:
        """Everything one of ``item``'s ways can need (ingredients, tools, table, furnace)."""
        if item not in self._deps:
            found: list[str] = []
            for src in sources(item, self.nearby):
                found += [*src.tools, *([src.consumes] if src.consumes else [])]
            for recipe in recipes.crafting_recipes(item):
                found += [m for i in recipe.ingredients for m in i.options]
                found += ["crafting_table"] if recipe.needs_table else []
            smelt = recipes.smelting_recipe(item)
            if smelt is not None:
                found += [*smelt.ingredient.options, "furnace", *_PICKAXES]
            self._deps[item] = tuple(dict.fromkeys(found))
        return self._deps[item]

    def costs(self) -> Mapping[str, float]:
        """About how many actions one more of each item takes, 0 for what the inventory holds.

        A shortest-path fixpoint over the recipe graph (Bellman-Ford on an and-or graph): every way
        adds at least a fraction of an action, so going round a circle (bone meal to bone block and
        back) never gets cheaper and the iteration settles. Kept until the set of held kinds
        changes, since only "held or not" enters it."""
        held = frozenset(k for k, v in self.inv.items() if v > 0)
        if self._costs is not None and self._costs[0] == held:
            return self._costs[1]
        order: list[str] = []  # dependencies before dependants, so most settle in one sweep
        seen: set[str] = set()
        stack: list[tuple[str, bool]] = [(r, False) for r in self.roots]
        while stack:
            item, done = stack.pop()
            if done:
                order.append(item)
                continue
            if item in seen:
                continue
            seen.add(item)
            stack.append((item, True))
            stack += [(d, False) for d in self.deps(item) if d not in seen]
        table = {item: 0.0 if item in held else INF for item in order}

        def tools(names: Iterable[str]) -> float:
            names = tuple(names)
            if not names or any(t in held for t in names):
                return 0.0
            return min(table.get(t, INF) for t in names)

        def value(item: str) -> float:
            best = INF
            for src in sources(item, self.nearby):
                best = min(best, 1 + tools(src.tools) + (table[src.consumes] if src.consumes else 0))
            for recipe in recipes.crafting_recipes(item):
                parts = sum(i.count * min(table[m] for m in i.options) for i in recipe.ingredients)
                table_cost = table["crafting_table"] if recipe.needs_table else 0
                best = min(best, (1 + parts + table_cost) / recipe.count)
            smelt = recipes.smelting_recipe(item)
            if smelt is not None:
                ing = min(table[m] for m in smelt.ingredient.options)
                best = min(best, 1.5 + ing + table["furnace"] + tools(_PICKAXES))
            return best

        for _ in range(len(order) + 1):
            changed = False
            for item in order:
                if item in held:
                    continue
                new = value(item)
                if new < table[item] - 1e-9:
                    table[item] = new
                    changed = True
            if not changed:
                break
        # what one more costs once the held ones are used up (4 blackstone held do not make 8)
        more = {item: value(item) if item in held else table[item] for item in order}
        self._costs = (held, table, more)
        return table

    def unit_cost(self, item: str, more: bool = False) -> float:
        """About how many actions one more ``item`` takes: 0 while some are held, unless ``more``
        asks for the price past what is held."""
        self.costs()
        if item not in self._costs[1]:  # type: ignore[index]  # a root the planner had not met yet
            self.roots.append(item)
            self._costs = None
            self.costs()
        return self._costs[2 if more else 1][item]  # type: ignore[index]

    def tool_cost(self, tools: Iterable[str]) -> float:
        tools = tuple(tools)
        if not tools or any(self.inv[t] > 0 for t in tools):
            return 0.0
        return min(self.unit_cost(t) for t in tools)

    def shortfall_cost(self, item: str, need: int) -> float:
        short = need - self.inv[item]
        return 0.0 if short <= 0 else short * self.unit_cost(item, more=True)

    # ---- choices ---------------------------------------------------------------------------

    def pick_member(self, options: tuple[str, ...], need: int) -> str:
        """Which item of a tag to use: one the inventory holds enough of, else the one held most,
        else the cheapest to get (VAB's crafting takes a tag's items from one member)."""
        if len(options) == 1:
            return options[0]
        enough = [m for m in options if self.inv[m] >= need]
        if enough:
            return enough[0]
        return min(options, key=lambda m: (self.shortfall_cost(m, need), -self.inv[m], options.index(m)))

    def ways(self, item: str, short: int) -> list[tuple[float, int, object]]:
        """Each way to get ``short`` more ``item`` with its cost, cheapest first."""
        found: list[tuple[float, int, object]] = []
        for src in sources(item, self.nearby):
            cost = 1 + self.tool_cost(src.tools)
            if src.consumes:
                cost += self.shortfall_cost(src.consumes, short)
            found.append((cost, len(found), src))
        for recipe in recipes.crafting_recipes(item):
            times = math.ceil(short / recipe.count)
            concrete = recipe.with_choice({i.name: self.pick_member(i.options, i.count * times)
                                           for i in recipe.ingredients if i.is_tag})
            cost = 1 + sum(self.shortfall_cost(i.name, i.count * times) for i in concrete.ingredients)
            if recipe.needs_table:
                cost += self.shortfall_cost("crafting_table", 1)
            found.append((cost, len(found), concrete))
        smelt = recipes.smelting_recipe(item)
        if smelt is not None:
            member = self.pick_member(smelt.ingredient.options, short)
            cost = (1.5 + self.shortfall_cost(member, short) + self.shortfall_cost("furnace", 1)
                    + (0 if self.held_pickaxe() else min(self.unit_cost(p) for p in _PICKAXES)))
            found.append((cost, len(found), ("smelt", member)))
        return sorted((w for w in found if w[0] < INF), key=lambda w: (w[0], w[1]))

    def held_pickaxe(self) -> str | None:
        return next((p for p in _PICKAXES if self.inv[p] > 0), None)

    # ---- obtaining ---------------------------------------------------------------------------

    def obtain(self, item: str, n: int, stack: tuple[str, ...]) -> None:
        """Add actions until the inventory holds ``n`` of ``item``."""
        if self.inv[item] >= n:
            return
        if item in stack or len(stack) > _MAX_DEPTH:
            raise PlanError(f"{item}: needs itself ({' <- '.join((*stack, item))})")
        here = (*stack, item)
        ways = self.ways(item, n - self.inv[item])
        if not ways:
            raise PlanError(self.why_not(item, here))
        way = ways[0][2]
        if isinstance(way, Source):
            self.gather(way, n, here)
        elif isinstance(way, CraftingRecipe):
            self.craft(way, n, here)
        else:
            self.smelt(item, way[1], n, here)  # type: ignore[index]
        if self.inv[item] < n:
            raise PlanError(f"{item}: the plan reached {self.inv[item]} of {n} ({' <- '.join(here)})")

    def why_not(self, item: str, here: tuple[str, ...]) -> str:
        chain = " <- ".join(reversed(here))
        if not (recipes.crafting_recipes(item) or recipes.smelting_recipe(item)):
            near = ", ".join(sorted(self.nearby)) or "nothing"
            return (f"{chain}: no recipe, and no block or mob of this world drops it "
                    f"(the world has its generated blocks and, spawned for the task: {near})")
        blocked: set[str] = set()
        for recipe in recipes.crafting_recipes(item):
            blocked |= {i.name for i in recipe.ingredients
                        if all(self.unit_cost(m, more=True) == INF for m in i.options)}
        smelt = recipes.smelting_recipe(item)
        if smelt is not None and all(self.unit_cost(m, more=True) == INF for m in smelt.ingredient.options):
            blocked.add(smelt.ingredient.name)
        return (f"{chain}: every recipe needs something neither this world nor the inventory gives: "
                f"{', '.join(sorted(blocked)) or 'a tool or station that cannot be made'}")

    def secure(self, needs: Mapping[str, int], stack: tuple[str, ...]) -> None:
        """Get every item of ``needs`` at once: getting one can use up another (sticks eat planks),
        so it goes round until all are there together."""
        frame: tuple[Mapping[str, int], list[str]] = (needs, [""])
        self.frames.append(frame)
        try:
            for _ in range(_MAX_ROUNDS):
                missing = [(k, v) for k, v in needs.items() if self.inv[k] < v]
                if not missing:
                    return
                for k, v in missing:
                    frame[1][0] = k
                    self.obtain(k, v, stack)
            raise PlanError(f"{stack[-1]}: could not hold {dict(needs)} at the same time")
        finally:
            self.frames.pop()

    def pending(self, raw: str) -> int:
        """How many more ``raw`` the steps waiting on the current one will want: gathered in the
        same trip, three logs are one ``execute``, not three (each costs a round and a walk)."""
        wants: dict[str, int] = {}  # a furnace two waiting steps both need is one furnace
        for needs, (active,) in self.frames:
            for k, v in needs.items():
                if k != active:
                    wants[k] = max(wants.get(k, 0), v)
        extra = 0
        for k, v in wants.items():
            if k == raw:
                extra += v  # held ones count too: the step under way may use them up
            elif self.inv[k] < v:
                extra += self.demand(k, v - self.inv[k], raw, 0)
        return extra

    def demand(self, item: str, qty: int, raw: str, depth: int) -> int:
        """About how many ``raw`` making ``qty`` more ``item`` the planned way uses."""
        if item == raw:
            return qty
        if qty <= 0 or depth > 6:
            return 0
        ways = self.ways(item, qty)
        if not ways:
            return 0
        way = ways[0][2]
        if isinstance(way, CraftingRecipe):
            times = math.ceil(qty / way.count)
            return sum(self.demand(i.name, max(0, i.count * times - self.inv[i.name]), raw, depth + 1)
                       for i in way.ingredients)
        if isinstance(way, tuple):  # smelting: the ingredient, one per item
            return self.demand(way[1], max(0, qty - self.inv[way[1]]), raw, depth + 1)
        return 0

    def gather(self, src: Source, n: int, stack: tuple[str, ...]) -> None:
        tool = self.tool_for(src, stack)
        needs = {tool: 1} if tool else {}
        if src.consumes:  # milking: the bucket in hand is also what turns into milk
            needs[src.consumes] = max(needs.get(src.consumes, 0), n - self.inv[src.item])
        self.secure(needs, stack)
        short = n - self.inv[src.item]
        if short <= 0:
            return
        if not src.consumes:  # what a bucket does not limit, take for the waiting steps too
            short += self.pending(src.item)
        if tool and self.equipped != tool:
            self.emit(Action.equip(tool))
        self.emit(Action.execute(src.prompt, src.item, short))

    def tool_for(self, src: Source, stack: tuple[str, ...]) -> str | None:
        """The tool to hold for ``src``: the one in hand if it serves, else one the inventory has,
        else the cheapest to make (which is then made)."""
        if not src.tools:
            return None
        if self.equipped in src.tools and self.inv[self.equipped] > 0:
            return self.equipped
        held = [t for t in src.tools if self.inv[t] > 0]
        if held:
            return held[0]
        tool = min(src.tools, key=lambda t: (self.unit_cost(t), src.tools.index(t)))
        self.obtain(tool, 1, stack)
        return tool

    def craft(self, recipe: CraftingRecipe, n: int, stack: tuple[str, ...]) -> None:
        short = n - self.inv[recipe.result]
        times = math.ceil(short / recipe.count)
        needs = {i.name: i.count * times for i in recipe.ingredients}
        if recipe.needs_table:
            needs["crafting_table"] = needs.get("crafting_table", 0) + 1
        self.secure(needs, stack)
        self.emit(Action.craft(recipe.result, n - self.inv[recipe.result]))

    def smelt(self, item: str, member: str, n: int, stack: tuple[str, ...]) -> None:
        short = n - self.inv[item]
        self.secure({member: short, "furnace": 1}, stack)
        pickaxe = self.held_pickaxe()
        if pickaxe is None:  # the furnace is placed and mined back, which takes a pickaxe
            pickaxe = min(_PICKAXES, key=lambda p: (self.unit_cost(p), _PICKAXES.index(p)))
        # the ingredient first: held materials go to the main line before tools and the furnace
        # are built from what is left (4 given blackstone make the bricks, not a stone pickaxe)
        needs = {member: short, "furnace": 1}
        needs[pickaxe] = needs.get(pickaxe, 0) + 1
        self.secure(needs, stack)
        if recipes.choose_fuel(self.inv, short, member) is None:
            fuel = self.pick_fuel(short, member)
            needs[fuel] = needs.get(fuel, 0) + recipes.fuel_needed(fuel, short)
            self.secure(needs, stack)
        fuel = recipes.choose_fuel(self.inv, short, member)
        if fuel is None:
            raise PlanError(f"{item}: no fuel for smelting {short} ({' <- '.join(stack)})")
        self.emit(Action.smelt(item, short, fuel))

    def pick_fuel(self, n: int, ingredient: str) -> str:
        """What to gather as fuel: the everyday fuel that costs least for ``n`` items."""

        def cost(fuel: str) -> float:
            need = recipes.fuel_needed(fuel, n) + (n if fuel == ingredient else 0)
            return self.shortfall_cost(fuel, need)

        return min(recipes.EVERYDAY_FUELS, key=lambda f: (cost(f), recipes.EVERYDAY_FUELS.index(f)))

    # ---- applying ------------------------------------------------------------------------------

    def emit(self, action: Action) -> None:
        apply(action, self.inv, self)
        self.actions.append(action)


_PICKAXES = tuple(t for t in TOOL_LADDER if t.endswith("_pickaxe"))


class _Hand(Protocol):
    equipped: str | None


def apply(action: Action, inventory: Counter[str], hand: _Hand) -> None:
    """Play one action on an inventory by the rules the environment enforces (ingredients, table,
    furnace, fuel and pickaxe, tool in hand); raises ``PlanError`` when the action would fail.
    ``execute`` is taken to obtain exactly what it asks for."""
    item, n = action.item, action.count
    if action.kind == "equip":
        if inventory[item] <= 0:
            raise PlanError(f"{action}: no {item} in the inventory")
        hand.equipped = item
        return
    if action.kind == "craft":
        recipe = recipes.choose_variant(item, n, inventory)
        if recipe is None:
            raise PlanError(f"{action}: not enough ingredients")
        if recipe.needs_table and inventory["crafting_table"] <= 0:
            raise PlanError(f"{action}: needs a crafting table")
        times = math.ceil(n / recipe.count)
        for i in recipe.ingredients:
            inventory[i.name] -= i.count * times
        for i in recipe.leftovers:
            inventory[i.name] += i.count * times
        inventory[recipe.result] += recipe.count * times
    elif action.kind == "smelt":
        member = recipes.smelt_ingredient(item, n, inventory)
        if member is None:
            raise PlanError(f"{action}: not enough to smelt")
        if inventory["furnace"] <= 0 or not any(inventory[p] > 0 for p in _PICKAXES):
            raise PlanError(f"{action}: needs a furnace and a pickaxe to take it back")
        fuel = recipes.choose_fuel(inventory, n, member)
        if fuel is None:
            raise PlanError(f"{action}: not enough fuel")
        inventory[member] -= n
        inventory[fuel] -= recipes.fuel_needed(fuel, n)
        inventory[item] += n
    elif action.kind == "execute":
        src = next((s for s in all_sources(item) if s.prompt == action.args[0]), None)
        if src is None:
            raise PlanError(f"{action}: no such way to get {item}")
        if src.tools and hand.equipped not in src.tools:
            raise PlanError(f"{action}: needs one of {', '.join(src.tools)} in hand")
        if src.consumes:
            if inventory[src.consumes] < n:
                raise PlanError(f"{action}: needs {n} {src.consumes}")
            inventory[src.consumes] -= n
        inventory[item] += n
    for k in [k for k, v in inventory.items() if v <= 0]:
        del inventory[k]
    if hand.equipped and inventory[hand.equipped] <= 0:
        hand.equipped = None


def plan(target: str, count: int = 1, inventory: Mapping[str, int] | None = None,
         nearby: Iterable[str] = (), equipped: str | None = None) -> list[Action]:
    """The actions that end with ``count`` of ``target`` (an item, or a tag counted VAB's way: one
    member held ``count`` times) in the inventory, starting from ``inventory``.

    ``nearby``: what the task spawns around the agent (its ``init_command``), beyond the blocks every
    world has (``sources.WORLD_BLOCKS``). Raises ``PlanError`` saying which item cannot be had."""
    target = bare(target)
    if not recipes.known(target):
        raise PlanError(f"{target!r} is neither a Minecraft {recipes.mcdata.VERSION} item nor a known tag")
    planner = _Planner(inventory or {}, nearby, equipped)
    planner.roots.extend(recipes.options(target))
    if recipes.goal_count(target, planner.inv) >= count:
        return []
    member = planner.pick_member(recipes.options(target), count)
    planner.obtain(member, count, ())
    return planner.actions
