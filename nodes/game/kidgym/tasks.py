"""The twelve tasks by their paper abbreviations, and how an episode's seed is chosen.

Episodes are a pure function of (task, level, round, layout seed), so every model, agent and re-run
plays the same 100 (or 500) episodes per task and level (spec §7 #17: the released code ignores
``reset(seed)``; the paper says every model saw "the identical set").
"""

from __future__ import annotations

import zlib

from nodes.game.kidgym.arranging import Placement, Sorting
from nodes.game.kidgym.base import Task
from nodes.game.kidgym.collecting import Classification, Counting
from nodes.game.kidgym.mazes import DecodeMaze, Maze, MemoryMaze
from nodes.game.kidgym.pictures import Filling, MemoryFilling, Puzzle
from nodes.game.kidgym.recall import MemoryDecode, Selection

# In the paper's table order (Table 2).
TASKS: dict[str, type[Task]] = {cls.code: cls for cls in (
    Classification, Selection, Sorting, Maze, Filling, Puzzle, Placement, Counting, DecodeMaze, MemoryMaze,
    MemoryDecode, MemoryFilling)}
LEVELS: tuple[int, ...] = (1, 2, 3)

# Capability -> tasks, from the paper's §5 (spec §2.1); this mapping reproduces Table 6.
CAPABILITIES: dict[str, tuple[str, ...]] = {
    "Execution": ("CL",),
    "Memory": ("SE", "MMA", "MDE", "MFI"),
    "Learning": ("SO", "PL", "DMA", "MDE"),
    "Planning": ("MA", "CO", "DMA", "MMA"),
    "Perception Reasoning": ("FI", "PU", "PL", "CO", "MFI"),
}
MEMORY_TASKS: frozenset[str] = frozenset(code for code, cls in TASKS.items() if cls.memory)


def episode_seed(task: str, level: int, round_: int, layout_seed: int = 0) -> int:
    """The seed of one episode; independent of which other tasks or how many rounds a run plays."""
    return zlib.crc32(f"kidgym/{task}/L{level}/round{round_}/layout{layout_seed}".encode())


def make_task(task: str, level: int, seed: int | str = 0) -> Task:
    """One episode of ``task`` (an abbreviation such as "CL") at ``level``."""
    try:
        cls = TASKS[task.upper()]
    except KeyError:
        raise ValueError(f"unknown KidGym task {task!r}; the tasks are {', '.join(TASKS)}") from None
    return cls(int(level), seed)


class Manifest:
    """Which episode is which: index i of a run plays cell ``i % cells`` in round ``i // cells``.

    Rounds go across all cells before the next round starts, so a short run (``--episodes 36``)
    still covers every task and level once, and a longer one adds whole rounds."""

    def __init__(self, tasks: list[str], levels: list[int], rounds: int = 100, layout_seed: int = 0) -> None:
        self.cells = [(t, lv) for t in tasks for lv in levels]
        self.rounds = rounds
        self.layout_seed = layout_seed

    @property
    def size(self) -> int:
        return len(self.cells) * self.rounds

    def episode(self, index: int) -> tuple[str, int, int, int]:
        """(task, level, round, seed) of the episode with this index."""
        task, level = self.cells[index % len(self.cells)]
        round_ = index // len(self.cells)
        return task, level, round_, episode_seed(task, level, round_, self.layout_seed)
