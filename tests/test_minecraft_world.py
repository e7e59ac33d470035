"""The Minecraft world and body through the real sidecar (flying-squid + mineflayer in Node.js): the same
task and seed give the same world, the executor gathers wood and stone and is refused iron ore without a
stone pickaxe, crafting follows Minecraft's recipes and says what is missing, and the sidecar dies with the
process that owns it. One sidecar serves the module; each episode starts with a reset."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from nodes.game.minecraft.sidecar import JS_DIR, Sidecar, SidecarError
from tests.tiers import uses

HAVE_JS = shutil.which("node") is not None and (JS_DIR / "node_modules" / "flying-squid").is_dir()
needs_js = pytest.mark.skipif(not HAVE_JS, reason="needs node and nodes/game/minecraft/js/node_modules (bash setup.sh)")
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
@uses("process")
def side():
    if not HAVE_JS:
        pytest.skip("needs node and nodes/game/minecraft/js/node_modules (bash setup.sh)")
    sc = Sidecar()
    sc.start()
    yield sc
    sc.close()


@needs_js
def test_same_task_and_seed_give_the_same_world(side):
    first = side.reset("stone_pickaxe", seed=7)
    a = side.blocks(radius=6)
    other = side.blocks  # the next reset lands in a fresh region far away
    side.reset("stone_pickaxe", seed=8)
    b = other(radius=6)
    again = side.reset("stone_pickaxe", seed=7)
    c = side.blocks(radius=6)
    bottom = side.blocks(radius=6, y0=0, y1=0)
    assert a["digest"] == c["digest"] and a["counts"] == c["counts"]
    assert a["digest"] != b["digest"]
    assert first["position"] == again["position"] and first["inventory"] == again["inventory"] == {}
    # the world has what the tasks need within reach of spawn
    for name in ("stone", "dirt", "grass_block", "oak_log", "coal_ore", "iron_ore", "diamond_ore"):
        assert c["counts"].get(name, 0) > 0, name
    assert bottom["counts"] == {"bedrock": 13 * 13}


@needs_js
def test_reset_gives_the_tasks_inventory_and_refuses_unknown_tasks(side):
    obs = side.reset("cake", seed=1)
    assert obs["inventory"] == {"oak_log": 64, "bucket": 3}
    assert obs["equipped"] == "oak_log"
    assert obs["pitch"] == 0 and obs["yaw"] == 180  # facing south, towards the task's field
    assert 0.1 < obs["reset_s"] < 10
    # the task's cow stands near spawn: an empty bucket milks it
    milked = side.execute("milk cow", "milk_bucket", 1)
    assert milked["success"], milked["message"]
    inv = side.observe()["inventory"]
    assert (inv["oak_log"], inv["bucket"], inv["milk_bucket"]) == (64, 2, 1)  # (and eggs it walked over)
    with pytest.raises(SidecarError, match="unknown task"):
        side.reset("no_such_task", seed=1)


@needs_js
def test_the_world_stands_still_between_ops(side):
    side.reset("sugar", seed=1)
    before = side.observe()["tick"]
    time.sleep(1.0)
    assert side.observe()["tick"] == before  # no server tick while the model thinks
    side.execute("chop tree", "oak_log", 1, max_ticks=20)  # one second of game time, whatever it gets
    assert side.observe()["tick"] > before  # ...and the world runs during an action


@needs_js
def test_craft_follows_recipes_and_names_what_is_missing(side):
    side.reset("wooden_pickaxe", seed=2)
    refused = side.craft("wooden_pickaxe", 1)
    assert not refused["success"] and "missing" in refused["message"] and "stick" in refused["message"]
    assert not side.craft("no_such_item")["success"]
    side.give("oak_log", 4)
    assert side.craft("oak_planks", 12)["success"]
    assert side.craft("stick", 4)["success"]
    no_table = side.craft("wooden_pickaxe", 1)
    assert not no_table["success"] and "crafting_table" in no_table["message"]
    assert side.craft("crafting_table", 1)["success"]
    made = side.craft("wooden_pickaxe", 1)
    assert made["success"] and "placed a crafting_table first and took the crafting_table back" in made["message"]
    inv = side.observe()["inventory"]
    # 4 logs → 12 planks (3 logs) → 4 sticks (2 planks) → a table (4 planks) → a pickaxe (3 planks, 2 sticks);
    # the table set down for the 3x3 grid is carried on
    assert inv == {"oak_log": 1, "oak_planks": 3, "stick": 2, "wooden_pickaxe": 1, "crafting_table": 1}
    assert side.blocks(radius=3)["counts"].get("crafting_table", 0) == 0  # nothing left standing in the world
    assert side.equip("wooden_pickaxe")["success"] and side.observe()["equipped"] == "wooden_pickaxe"
    assert not side.equip("diamond")["success"]


@needs_js
def test_executor_chops_wood(side):
    side.reset("wooden_pickaxe", seed=3)
    t0 = time.monotonic()
    done = side.execute("chop tree", "oak_log", 2)
    assert done["success"], done["message"]
    assert side.observe()["inventory"]["oak_log"] >= 2
    assert time.monotonic() - t0 < 120  # the call's budget is 1200 game ticks; the rest is a loaded machine
    refused = side.execute("craft a wooden pickaxe", "wooden_pickaxe", 1)
    assert not refused["success"] and "craft action" in refused["message"]


@needs_js
def test_executor_strips_a_log_with_an_axe_and_not_without(side):
    side.reset("stripped_oak_log", seed=5)
    refused = side.execute("strip oak_log", "stripped_oak_log", 1)
    assert not refused["success"] and "needs an axe" in refused["message"]
    side.give("wooden_axe", 1)
    done = side.execute("strip oak_log", "stripped_oak_log", 1)
    assert done["success"], done["message"]
    assert side.observe()["inventory"].get("stripped_oak_log") == 1


@needs_js
def test_executor_mines_stone_with_a_pickaxe_and_not_iron_without_a_stone_one(side):
    side.reset("stone_pickaxe", seed=4)
    side.give("wooden_pickaxe", 1)
    iron = side.execute("mine iron_ore", "iron_ore", 1)
    assert not iron["success"] and "stone_pickaxe" in iron["message"]
    stone = side.execute("mine stone", "cobblestone", 2, max_ticks=900)
    assert stone["success"], stone["message"]
    assert side.observe()["inventory"]["cobblestone"] >= 2
    # back where the episode began
    assert side.teleport_to_spawn()["success"]
    pos = side.observe()["position"]
    assert abs(pos["x"] - 0.5) < 0.01 and abs(pos["z"] - 0.5) < 0.01


@needs_js
def test_errors_name_what_to_do(tmp_path, monkeypatch):
    (tmp_path / "sidecar.js").write_text("process.stderr.write('boom: the world fell over\\n'); process.exit(3)\n")
    with pytest.raises(SidecarError, match="run bash setup.sh"):
        Sidecar(js_dir=tmp_path).start()
    (tmp_path / "node_modules" / "flying-squid").mkdir(parents=True)
    crashed = Sidecar(js_dir=tmp_path, start_timeout_s=20)
    with pytest.raises(SidecarError, match=r"died \(exit code 3\)[\s\S]*boom: the world fell over"):
        crashed.start()
    crashed.close()
    # killed after it was ready, with a request on its way: the request names the death, the log has no
    # terminal colours, and closing what is left raises nothing
    (tmp_path / "sidecar.js").write_text(
        "process.stderr.write('\\x1b[32mINFO\\x1b[39m: up\\n');"
        "process.stdout.write(JSON.stringify({id: 0, ok: true, result: {}}) + '\\n'); setInterval(() => {}, 1000)\n")
    killed = Sidecar(js_dir=tmp_path, start_timeout_s=20)
    killed.start()
    os.killpg(killed.proc.pid, signal.SIGKILL)
    with pytest.raises(SidecarError, match=r"died \(exit code -9\)[\s\S]*INFO: up") as died:
        killed.request("observe", timeout_s=10)
    assert "\x1b" not in str(died.value)
    killed.close()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SidecarError, match="no `node` on PATH"):
        Sidecar(js_dir=tmp_path).start()


@needs_js
def test_the_sidecar_dies_with_its_owner(tmp_path):
    owner_code = textwrap.dedent("""
        import sys, time
        from nodes.game.minecraft.sidecar import Sidecar
        sc = Sidecar()
        sc.start()
        print(sc.pid, sc.port, flush=True)
        time.sleep(600)
    """)
    owner = subprocess.Popen([sys.executable, "-c", owner_code], cwd=ROOT, stdout=subprocess.PIPE,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert owner.stdout is not None
        node_pid, port = map(int, owner.stdout.readline().split())
        assert Path(f"/proc/{node_pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"node")
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(node_pid):
        time.sleep(0.1)
    assert not _alive(node_pid), f"node {node_pid} outlived its owner"
    orphans = [int(p) for p in os.listdir("/proc") if p.isdigit() and _is_sidecar_on(int(p), port)]
    assert orphans == []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _is_sidecar_on(pid: int, port: int) -> bool:
    """A live process running sidecar.js on ``port``."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(a.endswith(b"sidecar.js") for a in argv) and str(port).encode() in argv and _alive(pid)


@needs_js
def test_block_drops_follow_harvest_tools_and_mob_loot():
    """plugins/drops.js and plugins/mobs.js on minecraft-data's 1.16.5 facts, in node without a server."""
    script = textwrap.dedent("""
        const reg = require('prismarine-registry')('1.16.5')
        const Block = require('prismarine-block')(reg)
        const Item = require('prismarine-item')(reg)
        const { dropsFor } = require('./plugins/drops')
        const { lootFor } = require('./plugins/mobs')
        const { seeded } = require('./plugins/rng')
        const rng = seeded(1)
        const dig = (block, tool) => dropsFor(reg, Block.fromStateId(reg.blocksByName[block].defaultState, 0),
                                              tool ? new Item(reg.itemsByName[tool].id, 1) : null, rng)
        const ripeWheat = Block.fromStateId(reg.blocksByName.wheat.minStateId + 7, 0)
        console.log(JSON.stringify({
          iron_wooden: dig('iron_ore', 'wooden_pickaxe'), iron_stone: dig('iron_ore', 'stone_pickaxe'),
          stone_hand: dig('stone'), stone_wooden: dig('stone', 'wooden_pickaxe'),
          coal: dig('coal_ore', 'wooden_pickaxe'), log_hand: dig('oak_log'), sand: dig('sand'),
          diamond_stone: dig('diamond_ore', 'stone_pickaxe'), diamond_iron: dig('diamond_ore', 'iron_pickaxe'),
          wheat: dropsFor(reg, ripeWheat, null, rng).map(([n]) => n),
          cow: lootFor(reg, 'cow', rng).map(([n]) => n), sheep: lootFor(reg, 'sheep', rng).map(([n]) => n),
        }))
    """)
    out = subprocess.run(["node", "-e", script], cwd=JS_DIR, capture_output=True, text=True, timeout=30, check=True)
    got = json.loads(out.stdout)
    assert got["iron_wooden"] == [] and got["iron_stone"] == [["iron_ore", 1]]
    assert got["stone_hand"] == [] and got["stone_wooden"] == [["cobblestone", 1]]
    assert got["coal"][0][0] == "coal" and got["log_hand"] == [["oak_log", 1]] and got["sand"] == [["sand", 1]]
    assert got["diamond_stone"] == [] and got["diamond_iron"][0][0] == "diamond"
    assert "wheat" in got["wheat"] and "wheat_seeds" in got["wheat"]
    assert sorted(got["cow"]) == ["beef", "leather"] and sorted(got["sheep"]) == ["mutton", "white_wool"]
