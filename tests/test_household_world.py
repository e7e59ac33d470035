"""The household's BDDL side: activities load through bddl, bad BDDL is refused with the file and the
form named, scenes list their rooms, ``world.build`` makes every init literal true and is
deterministic per seed, and visibility follows the camera rules."""

from __future__ import annotations

import copy

import pytest

from nodes.game.household import activities, scenes, world
from nodes.game.household.activities import ActivityError
from nodes.game.household.backend import checker
from nodes.game.household.model import Agent, Box, Household, Room, Thing
from nodes.game.household.visibility import fridge_view_visible, visible

VAB = activities.vab_instances()
ACTIVITIES = sorted({a for a, _ in VAB})


def test_vab_instances_are_181_over_45_activities_and_19_scenes():
    assert len(VAB) == 181
    assert len(ACTIVITIES) == 45
    assert len({s for _, s in VAB}) == 19
    assert ("added_kitchen_task", "Rs_int") in VAB or any(a == "added_kitchen_task" for a, _ in VAB)


@pytest.mark.parametrize("activity", ACTIVITIES)
def test_every_vab_activity_loads_through_bddl(activity):
    problem = activities.load(activity)
    assert problem.objects and problem.goal
    assert any(s.startswith("agent.") for _, s in problem.objects)
    assert checker(problem).options  # bddl compiled the goal against the household backend


def test_any_bddl_activity_loads_by_name():
    assert len(activities.bddl_activities()) > 1000
    assert activities.load("picking_up_trash").activity == "picking_up_trash"


def test_added_kitchen_task_numbers_the_hamburgers_first():
    hh = world.build("added_kitchen_task", "Rs_int", 0)
    assert [t.label for t in hh.labelled()][:6] == ["1.hamburger", "2.hamburger", "3.hamburger", "4.hamburger",
                                                    "5.tray", "6.apple"]


def test_unknown_activity_lists_close_names():
    with pytest.raises(ActivityError, match="assembling_gift_baskets"):
        activities.load("assembling_gift_basket")


GOOD = """(define (problem tiny-0)
    (:domain omnigibson)
    (:objects apple.n.01_1 - apple.n.01 floor.n.01_1 - floor.n.01 agent.n.01_1 - agent.n.01)
    (:init (ontop apple.n.01_1 floor.n.01_1) (inroom floor.n.01_1 kitchen) (ontop agent.n.01_1 floor.n.01_1))
    (:goal (and (PRED ?apple.n.01_1)))
)
"""


def test_a_bddl_file_loads_by_path(tmp_path):
    path = tmp_path / "tiny.bddl"
    path.write_text(GOOD.replace("PRED", "cooked"))
    problem = activities.load(str(path))
    assert problem.objects[0] == ("apple.n.01_1", "apple.n.01")
    hh = world.build(problem, "Rs_int", 0)
    assert hh.things["apple.n.01_1"].relation == ("ontop", "floor.n.01_1")


def test_a_syntax_error_is_refused_naming_file_and_line(tmp_path):
    path = tmp_path / "broken.bddl"
    path.write_text(GOOD.replace("PRED", "cooked").replace("(ontop apple.n.01_1 floor.n.01_1)",
                                                           "(ontop apple.n.01_1 floor.n.01_1"))
    with pytest.raises(ActivityError) as err:
        activities.load(str(path))
    assert str(path) in str(err.value) and ":4:" in str(err.value)
    assert "Traceback" not in str(err.value)


def test_an_unknown_predicate_is_refused_naming_file_and_form(tmp_path):
    path = tmp_path / "odd.bddl"
    path.write_text(GOOD.replace("PRED", "roasted"))
    with pytest.raises(ActivityError) as err:
        activities.load(str(path))
    message = str(err.value)
    assert str(path) in message and "(roasted ?apple.n.01_1)" in message and "'roasted'" in message


def test_an_undeclared_object_and_a_wrong_arity_are_refused(tmp_path):
    path = tmp_path / "ghost.bddl"
    path.write_text(GOOD.replace("(PRED ?apple.n.01_1)", "(cooked ?pear.n.01_1)"))
    with pytest.raises(ActivityError, match="pear.n.01_1"):
        activities.load(str(path))
    path.write_text(GOOD.replace("(PRED ?apple.n.01_1)", "(ontop ?apple.n.01_1)"))
    with pytest.raises(ActivityError, match="takes 2 argument"):
        activities.load(str(path))


def test_a_missing_file_and_a_wrong_domain_are_refused(tmp_path):
    with pytest.raises(ActivityError, match="no such BDDL file"):
        activities.load(str(tmp_path / "none.bddl"))
    path = tmp_path / "other.bddl"
    path.write_text(GOOD.replace("PRED", "cooked").replace(":domain omnigibson", ":domain igibson"))
    with pytest.raises(ActivityError, match=str(path)):
        activities.load(str(path))


def test_scenes_list_their_rooms_and_add_missing_room_types():
    # BEHAVIOR's own room instances, as bddl ships them
    assert scenes.room_names("Rs_int") == ["bathroom_0", "bedroom_0", "entryway_0", "kitchen_0", "living_room_0"]
    assert "staircase_0" in scenes.room_names("Merom_1_int") and len(scenes.scene_names()) == 51
    assert "sofa" in scenes.furniture("Rs_int", "living_room_0")
    assert scenes.room_names("Rs_int", ["grocery_store"])[-1] == "grocery_store_0"
    assert scenes.room_names("nowhere_int") == list(scenes.DEFAULT_HOUSE)
    hh = world.build("buy_alcohol", "Rs_int", 0)  # a grocery task in a house
    assert "grocery_store_0" in hh.rooms and hh.agent.room == "grocery_store_0"
    rooms = list(hh.rooms.values())
    assert all(a.x1 == b.x0 for a, b in zip(rooms, rooms[1:]))  # side by side


@pytest.mark.parametrize("activity", ACTIVITIES)
def test_build_makes_every_init_literal_true(activity):
    problem = activities.load(activity)
    check = checker(problem)
    for scene in ("Rs_int", "grocery_store_cafe"):
        hh = world.build(problem, scene, 5)
        for form in problem.init:
            atom = form if form[0] != "not" else form[1]
            if atom[0] == "inroom" or any(a.startswith("agent.") for a in atom[1:]):
                continue
            assert check.holds(hh, form), (scene, form)


def test_build_is_deterministic_per_seed_and_varies_across_seeds():
    a = world.build("store_beer", "Rs_int", 4)
    b = world.build("store_beer", "Rs_int", 4)
    c = world.build("store_beer", "Rs_int", 5)
    assert a == b
    assert a != c
    assert world.build("store_beer", "Beechwood_0_int", 4) != a


def test_ids_skip_the_agent_and_floors_unless_the_goal_names_a_floor():
    hh = world.build("cook_squash", "Rs_int", 0)
    assert [t.category for t in hh.labelled()] == ["butternut_squash", "countertop", "cookie_sheet", "oven"]
    tiles = world.build("laying_tile_floors", "Rs_int", 0)
    assert [t.category for t in tiles.labelled()][-2:] == ["floor", "floor"]


def test_the_agent_starts_on_its_floor_facing_heading_zero():
    hh = world.build("laying_tile_floors", "Rs_int", 2)
    assert hh.agent.room == hh.things["floor.n.01_1"].room == "corridor_0"
    assert hh.agent.heading == 0 and hh.agent.camera == 1 and hh.agent.holding is None
    assert hh.rooms["corridor_0"].contains(hh.agent.x, hh.agent.y)
    assert hh.in_view <= hh.seen and "floor.n.01_1" in hh.in_view


# ----- visibility on a hand-built household ----------------------------------------------------

def _room_with(*things: Thing, heading: int = 0, camera: int = 1, x: float = 1.0) -> Household:
    rooms = {"kitchen_0": Room("kitchen_0", "kitchen", 0, 0, 6, 4),
             "bedroom_0": Room("bedroom_0", "bedroom", 6, 0, 10, 4)}
    all_things = {t.name: t for t in things}
    all_things["floor"] = Thing("floor", "floor", "kitchen_0", Box(3, 2, -0.02, 6, 4, 0.02))
    return Household("t", "s", 0, rooms, all_things, Agent("kitchen_0", x, 2.0, heading, camera))


def _furniture(name, x, y, h=0.9, openable=False, container=False, room="kitchen_0"):
    return Thing(name, name, room, Box(x, y, 0, 0.8, 0.6, h), id=None, openable=openable, container=container)


def _item(name, on, kind="ontop", x=4.0, y=2.0, z=0.9, room="kitchen_0"):
    return Thing(name, name, room, Box(x, y, z, 0.1, 0.1, 0.1), movable=True, relation=(kind, on))


def test_field_of_view_follows_the_heading_and_stays_in_the_room():
    ahead = _furniture("table", 4, 2)
    behind = _furniture("shelf", 0.4, 2.2)  # behind the agent at x=1.5
    other = _furniture("bed", 8, 2, room="bedroom_0")
    hh = _room_with(ahead, behind, other, x=1.5)
    assert "table" in visible(hh) and "shelf" not in visible(hh) and "bed" not in visible(hh)
    hh.agent.heading = 2
    assert "table" not in visible(hh) and "shelf" in visible(hh)


def test_camera_height_decides_under_and_high_tops():
    table = _furniture("table", 4, 2, h=0.75)
    tall = _furniture("shelf", 4, 3.3, h=1.7)
    under = _item("mouse", "table", "under", z=0.0)
    low = _item("cup", "table", z=0.75)
    high = _item("vase", "shelf", y=3.3, z=1.7)
    hh = _room_with(table, tall, under, low, high)
    assert visible(hh) & {"mouse", "cup", "vase"} == {"cup"}
    hh.agent.camera = 0
    assert visible(hh) & {"mouse", "cup", "vase"} == {"mouse"}
    hh.agent.camera = 2
    assert visible(hh) & {"mouse", "cup", "vase"} == {"cup", "vase"}


def test_closed_containers_hide_their_contents_and_the_fridge_view_shows_them():
    fridge = _furniture("fridge", 4, 2, h=1.8, openable=True, container=True)
    milk = _item("milk", "fridge", "inside", z=0.05)
    hh = _room_with(fridge, milk)
    assert "fridge" in visible(hh) and "milk" not in visible(hh)
    hh.things["fridge"].is_open = True
    assert "milk" in visible(hh)
    assert fridge_view_visible(hh, "fridge") == {"fridge", "milk"}


def test_visibility_does_not_change_the_household():
    hh = world.build("freeze_fruit", "Rs_int", 1)
    before = copy.deepcopy(hh)
    visible(hh)
    assert hh == before
