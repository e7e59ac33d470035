"""VAB-Minecraft's task file read into typed records, and a wrong file refused with its path, the
task's index and the key."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from nodes.game.minecraft import mcdata, recipes
from nodes.game.minecraft.tasks import TASKS_FILE, Task, TaskFileError, load_tasks, task_by_name


def test_the_116_tasks_load_typed_and_frozen():
    tasks = load_tasks()
    assert len(tasks) == 116 and all(isinstance(t, Task) for t in tasks)
    assert [t.index for t in tasks] == list(range(116))
    cake = task_by_name("cake")
    assert (cake.group, cake.target, cake.count, cake.biome) == ("food", "cake", 1, "plains")
    assert cake.inventory() == {"oak_log": 64, "bucket": 3}
    assert cake.init_command == ("cow", "water", "sugar_cane", "chicken", "egg", "wheat")
    assert cake.rewards()["milk_bucket"] == pytest.approx(0.1440088952110755)
    with pytest.raises(AttributeError):
        cake.count = 2  # type: ignore[misc]
    assert hash(cake) == hash(task_by_name("cake"))
    assert Counter(t.group for t in tasks)["furniture"] == 32
    assert task_by_name("obsidian").inventory()["iron_pickaxe"] == 2  # the file's unprefixed name
    with pytest.raises(KeyError, match="cake"):
        task_by_name("cakes")


@pytest.mark.skipif(not mcdata.available(), reason="minecraft-data is not installed (bash setup.sh)")
def test_every_name_in_the_tasks_is_an_item_or_a_tag():
    for t in load_tasks():
        for name in (t.target, *t.inventory(), *t.rewards()):
            assert recipes.known(name), (t.index, name)


def _write(tmp_path, tasks):
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(tasks))
    return path


def test_a_wrong_file_is_refused_naming_file_task_and_key(tmp_path):
    good = json.loads(TASKS_FILE.read_text())[:3]
    broken = json.loads(json.dumps(good))
    del broken[2]["env"]["init_inventory"]
    with pytest.raises(TaskFileError) as e:
        load_tasks(_write(tmp_path, broken))
    assert str(tmp_path / "tasks.json") in str(e.value) and "task 2" in str(e.value)
    assert "env.init_inventory" in str(e.value)

    broken = json.loads(json.dumps(good))
    broken[1]["task_obj"] = {"minecraft:cake": 0}
    with pytest.raises(TaskFileError, match=r"task 1: key 'task_obj.minecraft:cake'"):
        load_tasks(_write(tmp_path, broken))

    broken = json.loads(json.dumps(good))
    broken[0]["task_obj"]["minecraft:bread"] = 1
    with pytest.raises(TaskFileError, match="task 0: key 'task_obj': expected exactly one"):
        load_tasks(_write(tmp_path, broken))

    with pytest.raises(TaskFileError, match="top level"):
        load_tasks(_write(tmp_path, {"tasks": good}))
    with pytest.raises(TaskFileError, match="no such tasks file"):
        load_tasks(tmp_path / "absent.json")
    assert len(load_tasks(_write(tmp_path, good))) == 3
