"""VAB-Minecraft's partial score (its "step reward") and its test of whether an item is held.

VAB gives each task a table of intermediate items with a weight each (a wooden pickaxe, iron ore,
... on the way to the target) and scores an episode that missed its target by the weights of the
items it obtained. The table VAB's environment reads at run time is its ``step_rewards.json``, keyed
by the target (:func:`vab_weights`), not the task file's own ``step_rewards`` field, which lacks an
item or two for four tasks (milk_bucket, rabbit_stew, cooked_rabbit, gold_ingot). How it counts,
read from its ``evaluate.py`` and ``env.py``, and done the same way here:

* **the weights**: items the task already gives in the initial inventory are dropped and the rest
  scaled up so the total stays the same (:func:`adjusted_step_rewards`); the ``minecraft:`` prefix
  is dropped from every name;
* **when an item counts**: at least one of it in the inventory, looked at after the reset and after
  every action (not inside an ``execute``: what the executor picks up and loses again within one
  call is never seen);
* **once counted, always counted**: an item's weight is kept after it is used up (crafting the
  planks into sticks does not take the planks' weight away), so the score is the sum of the weights
  of every item seen at least once during the episode, never falling;
* **tags** (``planks``, ``stone_tool_materials``, ``logs``): a name that is a tag is held when one
  of its members is; for a count above one VAB wants that many of a *single* member (the largest
  member's count, not the sum over members), and :func:`held` does the same;
* **the inventory** is the 36 main slots (hotbar and backpack), summed per item; armour and the
  off-hand slot are not looked at.

The tag tables belong to the recipe module; here membership comes in as a function
(:data:`Members`: a name -> its member items, or None when the name is no tag), so this module
needs no Minecraft data and its tests pass a small dict.

The episode's score in VAB's summary is 1 for a success and ``max(0, final step reward)`` otherwise
(:func:`partial_score`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping
from functools import cache
from pathlib import Path

__all__ = ["Members", "StepReward", "adjusted_step_rewards", "bare", "held", "holds", "partial_score",
           "step_reward", "vab_weights"]

Members = Callable[[str], Collection[str] | None]
"""Tag membership: a bare name -> the bare (or ``minecraft:``-prefixed) names of its member items,
or None when the name is not a tag."""

PREFIX = "minecraft:"
STEP_REWARDS_FILE = Path(__file__).with_name("data") / "step_rewards.json"


def bare(name: str) -> str:
    """``minecraft:oak_planks`` -> ``oak_planks``: VAB's task file prefixes names, inventories do not."""
    return name[len(PREFIX):] if name.startswith(PREFIX) else name


@cache
def _vab_tables() -> dict[str, dict[str, float]]:
    return json.loads(STEP_REWARDS_FILE.read_text())


def vab_weights(target: str) -> dict[str, float]:
    """The weights VAB's environment uses for a task whose target is ``target`` (before
    :func:`adjusted_step_rewards`); a target its table does not list has none, as in VAB."""
    return dict(_vab_tables().get(PREFIX + bare(target), {}))


def held(inventory: Mapping[str, int], name: str, members: Members) -> int:
    """How many of ``name`` the inventory holds in VAB's sense: for a tag, the count of its best
    represented member; for an item, its count."""
    name = bare(name)
    counts = {bare(k): int(v) for k, v in inventory.items()}
    group = members(name)
    if group is not None:
        return max((counts.get(bare(m), 0) for m in group), default=0)
    return counts.get(name, 0)


def holds(inventory: Mapping[str, int], name: str, count: int, members: Members) -> bool:
    """Whether the inventory holds ``count`` of ``name`` (an item or a tag): VAB's success test."""
    return held(inventory, name, members) >= count


def adjusted_step_rewards(step_rewards: Mapping[str, float],
                          initial_inventory: Mapping[str, int]) -> dict[str, float]:
    """The weights VAB scores with: the task's table without the items it hands out at the start
    (a free item must not score), rescaled so the total is unchanged; names without the prefix.

    Names are matched as written, not through tags and not across the prefix, as VAB matches them:
    four of VAB's tasks list an initial item without ``minecraft:`` (``iron_pickaxe`` for obsidian,
    ``blackstone`` for the three blackstone tasks), so that item keeps its weight and scores at the
    reset, there and here."""
    total = sum(float(v) for v in step_rewards.values())
    kept = {k: float(v) for k, v in step_rewards.items() if k not in initial_inventory}
    kept_total = sum(kept.values())
    if kept_total <= 0:
        return {bare(k): v for k, v in kept.items()}
    return {bare(k): v / kept_total * total for k, v in kept.items()}


class StepReward:
    """The step reward of one episode, fed each inventory as it is seen (after the reset and after
    every action). ``weights`` are the adjusted ones (:func:`adjusted_step_rewards`)."""

    def __init__(self, weights: Mapping[str, float], members: Members) -> None:
        self.weights = {bare(k): float(v) for k, v in weights.items()}
        self.members = members
        self.obtained: set[str] = set()

    def observe(self, inventory: Mapping[str, int]) -> float:
        """Counts the items of ``weights`` the inventory holds (once counted, kept); the reward so far."""
        for name in self.weights:
            if name not in self.obtained and holds(inventory, name, 1, self.members):
                self.obtained.add(name)
        return self.value

    @property
    def value(self) -> float:
        return sum(self.weights[name] for name in self.obtained)


def step_reward(step_rewards: Mapping[str, float], initial_inventory: Mapping[str, int],
                inventories: Iterable[Mapping[str, int]], members: Members) -> float:
    """The step reward at the end of an episode from its task's table and every inventory seen
    (the initial one first)."""
    reward = StepReward(adjusted_step_rewards(step_rewards, initial_inventory), members)
    for inventory in inventories:
        reward.observe(inventory)
    return reward.value


def partial_score(success: bool, final_step_reward: float) -> float:
    """An episode's score in VAB's average: 1 for a success, else the step reward (never below 0)."""
    return 1.0 if success else max(0.0, float(final_step_reward))
