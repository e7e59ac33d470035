"""household.env and household.judge on the in-memory runtime (kernel.testing.FakeRuntime), VAB's end
rules (guards), the goal text, and the agent pack's VAB setting (parser, text history). No processes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kernel.testing import FakeRuntime
from nodes.agent.memory import IMAGE_OMITTED, ChatMemory, Turn
from nodes.agent.parsers import vab_embodied
from nodes.agent.templates import load_template
from nodes.game.household import activities, world
from nodes.game.household.goaltext import goal_text
from nodes.game.household.guards import Guard
from nodes.game.household.node import HouseholdEnv, HouseholdParams, instances
from nodes.judge.household import HouseholdJudge

COOK = "cook_squash"  # a short chore: find the squash, walk up, cook it


async def play(script: list[Any], *, episodes: int = 1, judge: bool = False, **params: Any) -> tuple[HouseholdEnv,
                                                                                                     FakeRuntime]:
    env = HouseholdEnv()
    rt = FakeRuntime(env, "env", params={"activity": COOK, **params}, actions=script, episodes=episodes,
                     readers={"step": ["judge"] if judge else []})
    await rt.play(teardown=False)
    return env, rt


def oracle(env: HouseholdEnv):
    return lambda obs: env.oracle({"episode": obs["episode"]})


async def test_first_turn_carries_the_goal_the_rooms_and_vabs_fields_and_a_1280x720_picture():
    env, rt = await play(["ACTION: done()"], frames=True)
    obs = rt.bodies("obs")[0]
    assert obs["env"] == "household" and obs["template"] == "vab_household" and obs["text_history"] is True
    text = obs["text"]
    assert text.startswith("Your task: ") and "is cooked." in text
    assert f"The rooms you can reach: {', '.join(obs['rooms'])}." in text
    assert "Action Feedback: No action yet.\nAt Hand Object: None.\nCurrent Room: " in text
    assert text.endswith("Vision Input:")
    assert obs["frame"].shape == (720, 1280, 3) and obs["frame"].dtype == np.uint8
    assert "move_to_room(" + next(r for r in obs["rooms"] if r != obs["room"]) + ")" in obs["actions"]


async def test_without_frames_the_labels_in_view_are_given_in_words():
    env, rt = await play(["ACTION: done()"])
    obs = rt.bodies("obs")[0]
    assert "frame" not in obs
    assert "(no picture; the labelled objects in view are: " in obs["text"]


async def test_the_solver_through_the_oracle_completes_the_chore_and_the_judge_scores_it():
    env = HouseholdEnv()
    rt = FakeRuntime(env, "env", params={"activity": COOK}, actions=[oracle(env)] * 100, episodes=1,
                     readers={"step": ["judge"]})
    await rt.play(teardown=False)
    steps = rt.bodies("step")
    last = steps[-1]
    assert last["done"] and last["info"]["success"] and last["info"]["status"] == "completed"
    assert last["info"]["goal_fraction"] == 1.0
    assert sum(s["reward"] for s in steps) == pytest.approx(1.0 - last["info"]["initial_fraction"])
    judge = HouseholdJudge()
    jrt = FakeRuntime(judge, "judge", sources={"step": ["env"]})
    await judge.setup()
    for body in steps:
        await jrt.deliver("step", body, src="env")
    ended = jrt.ended()[0]
    assert ended["metrics"]["success"] == 1.0 and ended["metrics"]["end_status"] == "completed"
    summary = judge.summary()
    assert summary["success_rate"] == 100.0 and summary["per_activity"] == {COOK: {"episodes": 1, "successes": 1}}
    assert summary["paper"] and "OmniGibson" in summary["paper_source"]


async def test_done_before_the_goal_is_a_failure_with_vabs_status():
    env, rt = await play(["THOUGHT: finished?\nACTION: done()"])
    last = rt.bodies("step")[-1]
    assert last["done"] and not last["info"]["success"] and last["info"]["status"] == "task failed"
    assert len(rt.bodies("step")) == 1


async def test_a_failed_action_changes_nothing_and_the_next_turn_says_why():
    env, rt = await play(["ACTION: grasp(99)", "ACTION: done()"])
    first, second = rt.bodies("obs")[:2]
    assert second["room"] == first["room"] and second["holding"] is None
    assert "Action Feedback: The last action was `grasp(99)`: There is no object number 99" in second["text"]
    assert "Your task" not in second["text"]  # the goal comes on the first turn only
    assert rt.bodies("step")[0]["info"]["action_ok"] is False


async def test_the_same_failing_action_a_fourth_time_ends_the_episode_before_it_is_carried_out():
    env, rt = await play(["ACTION: grasp(99)"] * 10)
    steps = rt.bodies("step")
    assert len(steps) == 4 and steps[-1]["info"]["status"] == "task limit reached"
    assert steps[-1]["info"]["applied"] is False and not steps[-1]["truncated"]


async def test_turning_the_same_way_six_times_is_the_task_limit():
    env, rt = await play(["ACTION: turn_left()"] * 10)
    assert len(rt.bodies("step")) == 6 and rt.bodies("step")[-1]["info"]["status"] == "task limit reached"


async def test_replies_without_an_action_end_as_agent_invalid_action():
    env, rt = await play([f"I am not sure what to do ({i})." for i in range(20)])
    steps = rt.bodies("step")
    assert len(steps) == 9 and steps[-1]["info"]["status"] == "agent invalid action"
    assert "No ACTION line" in steps[0]["info"]["feedback"]


async def test_the_round_limit_truncates():
    env, rt = await play(["ACTION: turn_left()", "ACTION: turn_right()"] * 5, rounds=3)
    last = rt.bodies("step")[-1]
    assert len(rt.bodies("step")) == 3 and last["truncated"] and last["info"]["status"] == "task limit reached"


async def test_a_household_rebuilds_identically_for_the_same_episode():
    _, a = await play(["ACTION: done()"], frames=True, activity="vab")
    _, b = await play(["ACTION: done()"], frames=True, activity="vab")
    oa, ob = a.bodies("obs")[0], b.bodies("obs")[0]
    assert oa["text"] == ob["text"] and np.array_equal(oa["frame"], ob["frame"])
    _, c = await play(["ACTION: done()"], frames=True, activity="vab", layout_seed=1)
    assert not np.array_equal(oa["frame"], c.bodies("obs")[0]["frame"])


def test_episodes_cycle_through_vabs_181_instances_or_the_named_activities():
    assert len(instances(HouseholdParams())) == 181
    assert instances(HouseholdParams(activity="bag_groceries")) == [("bag_groceries", "Rs_int")]
    assert instances(HouseholdParams(activity=["cook_squash"], scene="Merom_1_int")) == [("cook_squash", "Merom_1_int")]


def test_an_unknown_activity_is_refused_before_the_run_with_suggestions():
    found = HouseholdEnv.preflight(HouseholdParams(activity="cook_squah"))
    assert len(found) == 1 and "cook_squah" in found[0] and "cook_squash" in found[0]
    found = HouseholdEnv.preflight(HouseholdParams(activity="cook_squash", scene="Rs_intt"))
    assert found == ["household.env: scene: 'Rs_intt' is not one of BEHAVIOR's 51 scenes; did you mean Rs_int?"]


# -- VAB's end rules -------------------------------------------------------------------------------------------
def test_reward_stagnation_after_30_actions_is_the_task_limit():
    g = Guard(initial=0.0)
    status = "running"
    for i in range(30):
        assert g.before(f"move({i})") == "running"
        status = g.after(True, 0.0, False, False)
    assert status == "task limit reached"


def test_rising_reward_keeps_an_episode_going_past_40_actions():
    g = Guard(initial=0.0)
    for i in range(45):
        g.before(f"move({i})")
        assert g.after(True, (i + 1) / 100, False, False) == "running"


# -- the goal text ----------------------------------------------------------------------------------------------
def test_the_goal_text_names_the_objects_by_identifier_and_covers_every_condition():
    problem = activities.load("boxing_food_after_dinner")
    hh = world.build(problem, "Merom_1_int", 0)
    text = goal_text(problem, hh)
    kabobs = ", ".join(t.label for t in hh.labelled() if t.category == "kabob")
    fridge = next(t.label for t in hh.labelled() if t.category == "electric_refrigerator")
    assert f"Each kabob ({kabobs}) is inside" in text
    assert f"{fridge} is closed." in text and text.count(".") >= len(problem.goal)


def test_pairs_are_said_one_to_one():
    problem = activities.load("packing_meal_for_delivery")
    text = goal_text(problem, world.build(problem, "Beechwood_0_int", 0))
    assert "is inside its own sack, one hamburger per sack" in text


# -- the agent pack's VAB setting -------------------------------------------------------------------------------
def test_the_reply_is_cut_at_a_second_action_or_observation():
    reply = "OBSERVATION: a squash.\nTHOUGHT: cook it.\nACTION: cook(1)\nOBSERVATION: it is cooked\nACTION: done()"
    assert vab_embodied(reply, []) == ["OBSERVATION: a squash.\nTHOUGHT: cook it.\nACTION: cook(1)"]
    assert vab_embodied("ACTION: move(2)<|end_of_text|>ACTION: done()", []) == ["ACTION: move(2)"]
    assert vab_embodied("THOUGHT: nothing to do", []) == []


def test_earlier_turns_keep_their_words_and_lose_their_pictures():
    memory = ChatMemory(images=True, am=-1, om=1)
    pic = np.zeros((4, 4, 3), dtype=np.uint8)
    for i in range(2):
        memory.add(Turn(prompt="{observation}", text=f"Current Room: kitchen_{i}.\nVision Input:", frames=[pic],
                        keep_text=True, text_history=True))
        memory.turns[-1].reply = f"ACTION: turn_left() {i}"
    messages = memory.messages([{"role": "system", "content": "s"}], [])
    users = [m for m in messages if m["role"] == "user"]
    assert users[0]["content"] == f"Current Room: kitchen_0.\nVision Input: {IMAGE_OMITTED}"
    assert isinstance(users[1]["content"], list) and any(p.get("type") == "image" for p in users[1]["content"])


def test_the_bundled_template_uses_the_vab_parser_and_keeps_every_turn():
    tpl = load_template("vab_household")
    assert tpl.parser("online") is vab_embodied
    assert tpl.defaults["am"] == "all" and tpl.defaults["om"] == 1
