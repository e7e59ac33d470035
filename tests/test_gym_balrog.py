"""gym.env's ``protocol: balrog``: BabyAI-Text's sentences for hand-made MiniGrid views whose wording
is known from BALROG's code, BALROG's progression for Crafter and BabyAI, and one in-process run of
the node with BALROG's action names and the progression in the episode metrics."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from pydantic import ValidationError

from kernel.testing import Harness
from nodes.game.gym import balrog
from nodes.game.gym.node import GymParams
from tests.helpers import launch

ENV = "nodes.game.gym.node:GymEnv"


def view(cells: dict[tuple[int, int], tuple[int, int, int]]) -> np.ndarray:
    """A 7x7 egocentric MiniGrid view (x across, y along the gaze, the agent at (3, 6)), empty but for ``cells``."""
    image = np.zeros((7, 7, 3), dtype=np.uint8)
    image[:, :, 0] = 1  # empty
    for (x, y), cell in cells.items():
        image[x, y] = cell
    return image


WALL, BALL, KEY, DOOR = 2, 6, 5, 4
RED, GREEN, BLUE, PURPLE = 0, 1, 2, 3


def test_babyai_text_reads_as_balrog_writes_it():
    image = view({(3, 3): (WALL, 5, 0), (0, 6): (WALL, 5, 0), (2, 4): (BALL, RED, 0),
                  (5, 6): (DOOR, BLUE, 2), (6, 2): (DOOR, PURPLE, 0)})
    assert balrog.babyai_text("go to the red ball", image, ("yellow", "box")).split("\n") == [
        "mission: go to the red ball",
        "You carry a yellow box",
        "a wall 3 steps forward",
        "a wall 3 steps left",          # the door to the right is the first thing there: no wall that way
        "a red ball 1 step left and 2 steps forward",
        "a locked blue door 2 steps right",
        "a open purple door 3 steps right and 4 steps forward",  # BabyAI-Text's "a open", kept
    ]


def test_a_wall_behind_an_object_is_not_named_and_unseen_cells_do_not_hide_one():
    image = view({(3, 5): (KEY, GREEN, 0), (3, 3): (WALL, 5, 0), (2, 6): (0, 0, 0), (1, 6): (0, 0, 0),
                  (0, 6): (WALL, 5, 0), (4, 6): (WALL, 5, 0)})
    assert balrog.babyai_descriptions(image) == ["a wall 3 steps left", "a wall 1 step right",
                                                 "a green key 1 step forward"]
    assert balrog.babyai_descriptions(view({})) == []
    with pytest.raises(ValueError, match="W x H x 3"):
        balrog.babyai_descriptions(np.zeros((7, 7), dtype=np.uint8))


def test_the_tables_match_minigrid_and_crafter():
    import crafter
    from minigrid.core.actions import Actions
    from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX, STATE_TO_IDX

    assert {n: i for i, n in enumerate(balrog.OBJECTS)} == OBJECT_TO_IDX
    assert {n: i for i, n in enumerate(balrog.COLORS)} == COLOR_TO_IDX
    assert {n: i for i, n in enumerate(balrog.DOOR_STATES)} == STATE_TO_IDX
    assert [a.name for a in sorted(Actions, key=int)][:6] == ["left", "right", "forward", "pickup", "drop", "toggle"]
    assert len(crafter.constants.achievements) == balrog.CRAFTER_ACHIEVEMENTS
    assert [a.replace("_", " ") for a in crafter.constants.actions][1:5] == ["move left", "move right", "move up",
                                                                             "move down"]
    assert len(balrog.CRAFTER_ACTIONS) == len(crafter.constants.actions)


def test_progression_is_balrogs_percent():
    import crafter

    none = {name: 0 for name in crafter.constants.achievements}
    assert balrog.crafter_progression(none) == 0.0
    three = {**none, "collect_wood": 4, "place_table": 1, "wake_up": 1}
    assert balrog.crafter_progression(three) == pytest.approx(100 * 3 / 22)
    assert balrog.crafter_progression({name: 1 for name in none}) == 100.0
    with pytest.raises(ValueError, match="Crafter has 22"):
        balrog.crafter_progression({f"a{i}": 1 for i in range(23)})
    assert balrog.babyai_progression(True) == 100.0 and balrog.babyai_progression(False) == 0.0


def test_the_protocol_is_refused_where_balrog_has_no_rules():
    with pytest.raises(ValidationError, match="params.protocol: balrog applies to"):
        GymParams(id="CartPole-v1", protocol="balrog")
    with pytest.raises(ValidationError, match="leave out params.labels"):
        GymParams(id="BabyAI-GoToRedBall-v0", protocol="balrog", labels=["a"] * 7)
    assert GymParams(id="framebus/Crafter-v1", protocol="balrog").protocol == "balrog"


async def test_babyai_node_speaks_balrog_and_reports_progression():
    async with Harness(quiet=True, episodes=1) as h:
        h.add("env", ENV, params={"id": "BabyAI-GoToRedBall-v0", "seed": 1, "max_steps": 3, "judge": False,
                                  "protocol": "balrog", "images": False},
              inputs={"action": "probe/action"}, clock={"mode": "lockstep"})
        probe = h.probe(inputs={"obs": "env/obs", "step": "env/step"}, outputs=["action"])
        await h.start()
        obs = (await probe.recv("obs")).body
        assert obs["actions"] == list(balrog.BABYAI_ACTIONS)
        assert obs["text"].startswith(f"mission: {obs['goal']}\n") and "image: array" not in obs["text"]
        assert any(line.startswith(("a wall", "a red ball", "a grey")) for line in obs["text"].split("\n")[1:])
        for t, action in enumerate(["turn left", "go forward", "done"]):
            await probe.publish("action", action, step=t)
            step = (await probe.recv("step")).body
            assert step["valid"] == (action != "done")  # MiniGrid's 'done' is not among BALROG's actions
            if not step["done"]:
                await probe.recv("obs")
        await h.wait_finished(20)
        (record,) = h.kernel.book.records.values()
        assert record["metrics"]["progression"] in (0.0, 100.0)
        assert record["metrics"]["progression"] == (100.0 if record["metrics"]["return"] > 0 else 0.0)
        for _ in range(50):  # the node's summary travels with its heartbeats
            section = h.kernel.summary_sections().get("balrog", {})
            if section.get("episodes") == 1:
                break
            await asyncio.sleep(0.1)
        assert section["world"] == "babyai" and section["progression_percent"] == record["metrics"]["progression"]
        assert section["balrog_published"]["GPT-4o"]["llm"] == 77.6  # BALROG's leaderboard row, beside ours


@pytest.mark.parametrize("name", ["babyai_random", "babyai_local", "crafter_balrog_random", "crafter_balrog_local"])
def test_the_balrog_launch_files_validate(name: str) -> None:
    result = launch("validate", f"{name}.yaml", timeout=60)
    assert result.returncode == 0, name + result.stdout + result.stderr


NAMES = ["None", "water", "grass", "stone", "path", "sand", "tree", "lava", "coal", "iron", "diamond", "table",
         "furnace", "player", "cow", "zombie", "skeleton", "arrow", "plant"]


def test_crafter_text_reads_as_balrog_writes_it():
    grass, tree, water, cow, player, stone = (NAMES.index(n) for n in ("grass", "tree", "water", "cow", "player",
                                                                       "stone"))
    semantic = np.full((20, 20), grass, dtype=np.int64)
    semantic[10, 10] = player
    semantic[8, 7] = tree    # 2 west, 3 north: 5 steps
    semantic[12, 7] = tree   # 5 steps too, met later: the first one stays
    semantic[9, 10] = water  # in front (facing west)
    semantic[11, 13] = cow   # 1 east, 3 south
    semantic[10, 14] = stone  # 4 south: below the 7-row view, not seen
    text = balrog.crafter_text(semantic, NAMES, (10, 10), (-1, 0), {"health": 9, "food": 7, "drink": 8, "energy": 9,
                                                                     "wood": 2, "sapling": 0})
    assert text.split("\n") == [
        "You see:", "- grass 1 step to your north", "- tree 5 steps to your north-west",
        "- water 1 step to your west", "- cow 4 steps to your south-east", "",
        "You face water at your front.", "", "Your status:", "- health: 9/9", "- food: 7/9", "- drink: 8/9",
        "- energy: 9/9", "", "Your inventory:", "- wood: 2"]
    asleep = balrog.crafter_text(semantic, NAMES, (10, 10), (0, 1), {}, sleeping=True)
    assert asleep.startswith("You are sleeping, and will not be able take actions until energy is full.\n\n\n\nYou see:")
    assert asleep.endswith("You face grass at your front.\n\nYour status:\n- health: 0/9\n- food: 0/9\n- drink: 0/9\n"
                           "- energy: 0/9\n\nYou have nothing in your inventory.")
    edge = balrog.crafter_text(semantic, NAMES, (0, 0), (-1, 0), {})  # at the map's corner: off-map squares unseen
    assert "You face nothing at your front." in edge and "north" not in edge and "west" not in edge


def test_crafter_env_gives_the_state_the_text_needs():
    from nodes.game.gym import worlds

    env = worlds.CrafterEnv()
    env.reset(seed=3)
    state = env.language_state()
    assert state["names"][:3] == ["None", "water", "grass"] and "zombie" in state["names"]
    assert state["semantic"][state["pos"]] == state["names"].index("player") and state["view"] == (9, 9)
    text = balrog.crafter_text(state["semantic"], state["names"], state["pos"], state["facing"], state["inventory"])
    assert text.startswith("You see:\n- ") and "- health: 9/9" in text


@pytest.mark.timeout(300)
def test_crafter_balrog_random_scores_its_recorded_episode(tmp_path):
    """A random Crafter episode on BALROG's protocol as nodes: the summary's progression is what the
    recorded step stream's last achievements give (unlocked / 22, in percent), and the agent read
    BALROG's Crafter text."""
    import json

    from kernel.tools.record import read_recording

    out = tmp_path / "run"
    result = launch("run", "crafter_balrog_random.yaml", "--episodes", "1", "--set", "env.max_steps=120",
                    "--record", "--out", str(out), timeout=240)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    rec = read_recording(out / "recording.mcap")
    steps = [m.body() for m in rec.messages if m.topic == "env/step"]
    assert 0 < len(steps) <= 120 and steps[-1]["done"]  # 120, or fewer where the player died
    unlocked = sum(1 for n in steps[-1]["info"]["achievements"].values() if n > 0)
    assert summary["metrics"]["progression"] == pytest.approx(100 * unlocked / 22)
    section = summary["balrog"]
    assert section["world"] == "crafter" and section["progression_percent"] == pytest.approx(100 * unlocked / 22)
    assert section["balrog_published"]["GPT-4o"]["llm"] == 33.1
    first = next(m.body() for m in rec.messages if m.topic == "env/obs")
    assert first["text"].startswith("You see") and "Your status:\n- health: 9/9" in first["text"]
