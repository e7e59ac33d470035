"""MiniHack as BALROG plays it, on the same NLE language view as NetHack.

BALROG plays eight MiniHack tasks with its NetHack wrapper, a smaller action list (the names
below that the task's own action set has), ``north`` as the default action, MiniHack's
``max_episode_steps`` of 100 with a -0.01 step penalty, and success as its metric: the episode's
last step earned a reward of at least 1 (reaching the goal). The Boxoban tasks need level files
that MiniHack downloads; they are refused here with that reason.
"""

from __future__ import annotations

BALROG_TASKS = ("MiniHack-MazeWalk-9x9-v0", "MiniHack-MazeWalk-15x15-v0", "MiniHack-Corridor-R3-v0",
                "MiniHack-CorridorBattle-Dark-v0", "MiniHack-Quest-Easy-v0", "MiniHack-Quest-Medium-v0",
                "MiniHack-Boxoban-Hard-v0", "MiniHack-Boxoban-Medium-v0")

ACTION_NAMES = frozenset({
    "north", "east", "south", "west", "northeast", "southeast", "southwest", "northwest",
    "far north", "far east", "far south", "far west", "far northeast", "far southeast", "far southwest",
    "far northwest", "up", "down", "wait", "more", "apply", "close", "open", "eat", "force", "kick", "loot",
    "pickup", "pray", "puton", "quaff", "search", "zap"})
"""BALROG's MiniHack action names; a task offers those its own action set has."""

DEFAULT_ACTION = "north"
MAX_EPISODE_STEPS = 100
MAKE_KWARGS = {"penalty_step": -0.01, "penalty_time": 0.0, "penalty_mode": "constant", "autopickup": False}
"""BALROG's ``minihack_kwargs`` besides the character and the step cap."""


def is_minihack(task: str) -> bool:
    return task.startswith("MiniHack-")


def goal(task: str) -> str:
    """The task's goal in words, by its family (as BALROG picks its instruction)."""
    low = task.lower()
    if "corridor" in low:
        return "Explore the level and reach the staircase down (>)."
    if "quest" in low:
        return "Explore the level, fight the monsters on the way, get through rooms and mazes, and reach the " \
               "staircase down (>)."
    if "boxoban" in low:
        return "Push every boulder onto a fountain by walking into it (nothing may be behind it)."
    return "Find your way through the maze to the staircase down (>)."


def success(last_reward: float) -> bool:
    """BALROG's MiniHack progression: 1 when the last step earned at least 1 (the goal reached)."""
    return float(last_reward) >= 1.0
