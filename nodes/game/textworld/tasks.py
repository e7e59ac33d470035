"""BALROG's three TextWorld tasks: the tw-make challenge and settings behind each, and help text.

BALROG plays pre-generated games (downloaded); framebus generates its own with the same generator,
TextWorld's challenges, at the difficulty BALROG's docs give: Treasure Hunter at level 30 (20
rooms, locked doors and containers, a 20-step quest), The Cooking Game with 5 ingredients to
gather, 12 rooms and every option on (open, cook, cut, drop), Coin Collector at level 120 (a
20-room path with distractor rooms, 40 rooms). BALROG removes the walkthrough from the objective of
Treasure Hunter and Coin Collector; so does ``games.make_game``. Every task is capped at 80 steps
(BALROG's ``max_episode_steps`` for TextWorld).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_STEPS = 80
DEFAULT_ACTION = "help"
"""What BALROG plays when the agent gives no command at all."""


@dataclass(frozen=True)
class Task:
    name: str
    challenge: str
    settings: dict[str, Any]
    hide_walkthrough: bool
    help: str


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("treasure_hunter", "tw-treasure_hunter", {"level": 30}, True,
         "You are in a maze of rooms and must find one object, named in the goal. Commands: look, goal, "
         "inventory, go north/south/east/west, open X, take X, take X from Y, drop X, put X on Y, insert X "
         "into Y, unlock X with Y. Doors and containers may be locked: a key unlocks the lock whose "
         "adjective it shares; unlocked things still have to be opened. Keys may be in other rooms or "
         "inside containers."),
    Task("the_cooking_game", "tw-cooking",
         {"recipe": 5, "take": 5, "go": 12, "open": True, "cook": True, "cut": True, "drop": True,
          "recipe_seed": 0, "split": None}, False,
         "Find the cookbook in the kitchen and read it (examine cookbook), gather the ingredients it "
         "lists, cut them (slice/chop/dice X with knife, holding both) and cook them (cook X with stove "
         "to fry, oven to roast, BBQ to grill, holding X) exactly as it says, then 'prepare meal' in the "
         "kitchen and 'eat meal'. Cooking something the wrong way loses the game. Other commands: look, "
         "goal, inventory, go <dir>, open X, take X, take X from Y, drop X, examine X, put X on Y, "
         "insert X into Y."),
    Task("coin_collector", "tw-coin_collector", {"level": 120}, True,
         "You are in a maze of rooms and must find the coin. Move with go north/south/east/west through "
         "the exits you are told about, and 'take coin' once you see it."),
)}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"textworld task {name!r} is unknown; allowed: {', '.join(TASKS)}") from None


def progression(score: float, max_score: float, won: bool) -> float:
    """BALROG's TextWorld metric for an ended game: the score fraction, 1 for a won game."""
    frac = float(score) / float(max_score) if max_score else 0.0
    return max(frac, 1.0 if won else 0.0)
