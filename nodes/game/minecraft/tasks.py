"""VAB-Minecraft's 116 test tasks (``data/minecraft_tasks_v1.3.json``, from the VAB repository) as
typed, frozen records.

The file is read strictly: every key the world, the agent and the judge rely on is checked here
once, and a bad file is refused with its path, the task's index and the key, rather than surfacing
later as a ``KeyError`` deep inside an episode. Item names lose their ``minecraft:`` prefix (the file
itself is not consistent: two tasks give ``iron_pickaxe`` and ``blackstone`` without it). Names are
not checked against minecraft-data here so that the judge and launch tooling can read tasks where
the JavaScript side is not installed; the tests check them.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nodes.game.minecraft.recipes import bare

TASKS_FILE = Path(__file__).resolve().parent / "data" / "minecraft_tasks_v1.3.json"
TASK_COUNT = 116


class TaskFileError(ValueError):
    """A tasks file that does not have VAB's layout; the message names the file, task and key."""


@dataclass(frozen=True)
class Task:
    index: int  # position in the file, 0-based: the task's id in launch files and results
    name: str  # VAB's "task" (unique; equals the target's name)
    group: str  # VAB's category: food, furniture, weapon, block, redstone, material, armor, ...
    target: str  # the item (or tag: planks, wool, logs_that_burn, ...) to end up holding
    count: int
    biome: str
    mobs: tuple[str, ...]
    #: what the agent starts with, item -> count, in the file's order
    init_inventory: tuple[tuple[str, int], ...]
    #: what the world spawns around the agent: mobs (cow, spider), plants (sugar_cane, wheat),
    #: blocks (obsidian, blackstone), water, and "egg" for eggs lying on the ground
    init_command: tuple[str, ...]
    #: VAB's partial credit: intermediate item (or tag) -> reward when first held
    step_rewards: tuple[tuple[str, float], ...]

    def inventory(self) -> dict[str, int]:
        return dict(self.init_inventory)

    def rewards(self) -> dict[str, float]:
        return dict(self.step_rewards)


def _fail(path: Path, index: int | None, key: str, problem: str) -> TaskFileError:
    where = f"task {index}" if index is not None else "top level"
    return TaskFileError(f"{path}: {where}: key {key!r}: {problem}")


def _text(path: Path, i: int, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(path, i, key, f"expected a non-empty string, got {value!r}")
    return value


def _names(path: Path, i: int, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _fail(path, i, key, f"expected a list of names, got {value!r}")
    return tuple(bare(v) for v in value)


def _counts(path: Path, i: int, key: str, value: Any, kind: type) -> tuple[tuple[str, Any], ...]:
    if not isinstance(value, Mapping):
        raise _fail(path, i, key, f"expected an object of item name -> {kind.__name__}, got {value!r}")
    out: list[tuple[str, Any]] = []
    for name, n in value.items():
        ok = (isinstance(n, int) and not isinstance(n, bool) and n >= 1) if kind is int else \
            (isinstance(n, (int, float)) and not isinstance(n, bool) and n >= 0)
        if not isinstance(name, str) or not name.strip() or not ok:
            want = "a count >= 1" if kind is int else "a reward >= 0"
            raise _fail(path, i, f"{key}.{name}", f"expected {want}, got {n!r}")
        out.append((bare(name), kind(n)))
    return tuple(out)


def _task(path: Path, i: int, raw: Any) -> Task:
    if not isinstance(raw, Mapping):
        raise _fail(path, i, "(task)", f"expected an object, got {type(raw).__name__}")
    for key in ("group", "task", "step_rewards", "env", "task_obj", "init_command"):
        if key not in raw:
            raise _fail(path, i, key, "missing")
    env = raw["env"]
    if not isinstance(env, Mapping):
        raise _fail(path, i, "env", f"expected an object, got {env!r}")
    for key in ("biome", "mobs", "init_inventory"):
        if key not in env:
            raise _fail(path, i, f"env.{key}", "missing")
    goal = _counts(path, i, "task_obj", raw["task_obj"], int)
    if len(goal) != 1:
        raise _fail(path, i, "task_obj", f"expected exactly one target item, got {len(goal)}")
    (target, count), = goal
    return Task(
        index=i, name=_text(path, i, "task", raw["task"]), group=_text(path, i, "group", raw["group"]),
        target=target, count=count, biome=_text(path, i, "env.biome", env["biome"]),
        mobs=_names(path, i, "env.mobs", env["mobs"]),
        init_inventory=_counts(path, i, "env.init_inventory", env["init_inventory"], int),
        init_command=_names(path, i, "init_command", raw["init_command"]),
        step_rewards=_counts(path, i, "step_rewards", raw["step_rewards"], float),
    )


def load_tasks(path: str | Path | None = None) -> tuple[Task, ...]:
    """The tasks of a VAB-Minecraft task file (by default the pack's 116)."""
    path = Path(path) if path is not None else TASKS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskFileError(f"{path}: no such tasks file") from None
    except json.JSONDecodeError as e:
        raise TaskFileError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(raw, list):
        raise _fail(path, None, "(file)", f"expected a list of tasks, got {type(raw).__name__}")
    tasks = tuple(_task(path, i, t) for i, t in enumerate(raw))
    seen: dict[str, int] = {}
    for t in tasks:
        if t.name in seen:
            raise _fail(path, t.index, "task", f"{t.name!r} repeats task {seen[t.name]}")
        seen[t.name] = t.index
    return tasks


def task_by_name(name: str, path: str | Path | None = None) -> Task:
    """One task by VAB's name (``"cake"``); the error lists close names."""
    tasks = load_tasks(path)
    for t in tasks:
        if t.name == bare(name):
            return t
    close = difflib.get_close_matches(bare(name), [t.name for t in tasks], n=5)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise KeyError(f"no VAB-Minecraft task {name!r} in {path or TASKS_FILE}{hint}")
