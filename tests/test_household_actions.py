"""The household's 20 actions and done(): how ACTION text is read, each action's preconditions and
effects, the feedback when one fails, and that a failed action changes nothing. All on a small
household built by hand from the model."""

from __future__ import annotations

import copy

import pytest

from nodes.game.household.actions import apply
from nodes.game.household.backend import inside, nextto, ontop, under
from nodes.game.household.model import Agent, Box, Household, Room, Thing
from nodes.game.household.parsing import ParseError, parse
from nodes.game.household.visibility import observe

FOOD = frozenset({"cooked", "burnt", "frozen", "hot"})


def make() -> Household:
    rooms = {"kitchen_0": Room("kitchen_0", "kitchen", 0, 0, 6, 4),
             "living_room_0": Room("living_room_0", "living_room", 6, 0, 10, 4)}

    def thing(name, cat, room, box, ident, **kw):
        return Thing(name, cat, room, box, id=ident, **kw)

    items = [
        thing("floor_k", "floor", "kitchen_0", Box(3, 2, -0.02, 6, 4, 0.02), None),
        thing("floor_l", "floor", "living_room_0", Box(8, 2, -0.02, 4, 4, 0.02), None),
        thing("counter", "countertop", "kitchen_0", Box(3, 0.35, 0, 1.6, 0.6, 0.9), 1),
        thing("apple", "apple", "kitchen_0", Box(3, 0.35, 0.9, 0.1, 0.1, 0.1), 2, movable=True,
              capabilities=FOOD, relation=("ontop", "counter")),
        thing("fridge", "electric_refrigerator", "kitchen_0", Box(5.6, 2, 0, 0.75, 0.85, 1.8), 3,
              openable=True, container=True, capabilities=frozenset({"open"})),
        thing("milk", "carton_of_milk", "kitchen_0", Box(5.6, 2, 0.05, 0.1, 0.1, 0.25), 4, movable=True,
              relation=("inside", "fridge")),
        thing("tray", "tray", "kitchen_0", Box(1, 3.6, 0.75, 0.45, 0.35, 0.03), 5, movable=True, container=True,
              relation=("ontop", "table")),
        thing("cup", "cup", "kitchen_0", Box(1, 3.6, 0.78, 0.08, 0.08, 0.1), 6, movable=True,
              relation=("ontop", "tray")),
        thing("table", "table", "kitchen_0", Box(1, 3.6, 0, 1.4, 0.8, 0.75), 7),
        thing("basket", "wicker_basket", "kitchen_0", Box(2.2, 2.6, 0, 0.15, 0.15, 0.08), 8, movable=True,
              container=True, relation=("ontop", "floor_k")),
        thing("sofa", "sofa", "living_room_0", Box(8, 3.5, 0, 2, 0.9, 0.85), 9),
        thing("lamp", "lamp", "kitchen_0", Box(3.6, 0.35, 0.9, 0.15, 0.15, 0.4), 10, movable=True,
              capabilities=frozenset({"toggled_on"}), relation=("ontop", "counter")),
        thing("piano", "piano", "kitchen_0", Box(0.8, 1.5, 0, 1.5, 1.2, 1.2), 11, movable=True, heavy=True,
              relation=("ontop", "floor_k")),
    ]
    hh = Household("hand", "test", 0, rooms, {t.name: t for t in items}, Agent("kitchen_0", 3.0, 1.3, 3, 1))
    observe(hh)
    return hh


def run(hh: Household, *actions: str):
    """Apply actions that must all succeed; the last result."""
    results = [apply(hh, a) for a in actions]
    assert all(r.ok for r in results), [(r.action, r.feedback) for r in results]
    return results[-1]


# ----- reading the action ---------------------------------------------------------------------

@pytest.mark.parametrize("text, func, args", [
    ("ACTION: grasp(2)", "grasp", ("2",)),
    ("OBSERVATION: x\nTHOUGHT: y\nACTION: grasp(2.apple) then move(3)", "grasp", ("2.apple",)),
    ("put_inside('2', \"3\")", "put_inside", ("2", "3")),
    ("grasp(obj=2)", "grasp", ("2",)),
    ("`turn_left()`", "turn_left", ()),
    ("move_to_room(_kitchen_0_)", "move_to_room", ("kitchen_0",)),
])
def test_the_first_call_is_read_leniently(text, func, args):
    call = parse(text)
    assert (call.func, call.args) == (func, args)


def test_text_without_a_call_is_refused_with_the_expected_form():
    with pytest.raises(ParseError, match=r"function_name\(arguments\)"):
        parse("I will pick up the apple")
    result = apply(make(), "")
    assert not result.ok and "ACTION" in result.feedback


@pytest.mark.parametrize("text, hint", [("pick_up(2)", "grasp"), ("mvoe(2)", "move"), ("move_to(2.apple)", "move?"),
                                        ("move_to(kitchen_0)", "move_to_room"), ("put_in(2, 3)", "put_inside"),
                                        ("tunr_left()", "turn_left")])
def test_an_unknown_function_gets_a_did_you_mean(text, hint):
    result = apply(make(), text)
    assert not result.ok and "not one of the available actions" in result.feedback and hint in result.feedback


def test_identifiers_must_exist_and_match_their_names():
    hh = make()
    assert "no object number 99" in apply(hh, "grasp(99)").feedback
    assert "2.apple, not 'banana'" in apply(hh, "grasp(2.banana)").feedback
    assert "number shown" in apply(hh, "grasp(apple)").feedback
    assert apply(hh, "grasp(2.apple)").ok
    hh = make()
    assert apply(hh, "grasp(2_apple)").ok


def test_argument_counts_are_checked():
    hh = make()
    assert "takes no arguments" in apply(hh, "turn_left(2)").feedback
    assert "takes 2 arguments" in apply(hh, "put_on_top(2)").feedback
    assert "takes 1 argument" in apply(hh, "grasp()").feedback


# ----- failures change nothing ----------------------------------------------------------------

FAILING = ["grasp(99)", "grasp(1)", "grasp(11)", "grasp(6)", "put_on_top(2, 1)", "open(2)", "cook(1)",
           "toggle_on(2)", "move(9)", "move_to_room(attic_0)", "get_fridge_view()", "lower_camera()",
           "put_inside(4, 3)", "freeze(4)", "nonsense", "burn(7)"]


@pytest.mark.parametrize("action", FAILING)
def test_a_failed_action_changes_nothing(action):
    hh = make()
    apply(hh, "lower_camera()")  # camera at the lowest, so lower_camera fails
    before = copy.deepcopy(hh)
    result = apply(hh, action)
    assert not result.ok and result.feedback
    assert hh == before


def test_failures_while_holding_change_nothing():
    hh = make()
    run(hh, "grasp(2)")
    for action in ("grasp(10)", "put_inside(2, 3)", "put_on_top(2, 7)", "put_under(2, 8)", "put_next_to(2, 99)",
                   "put_on_top(10, 1)", "put_inside(2, 1)"):
        before = copy.deepcopy(hh)
        result = apply(hh, action)
        assert not result.ok, action
        assert hh == before, action


# ----- each action ----------------------------------------------------------------------------

def test_turns_and_camera_moves():
    hh = make()
    assert run(hh, "turn_left()").ok and hh.agent.heading == 0
    assert run(hh, "turn_right()", "turn_right()").ok and hh.agent.heading == 2
    assert run(hh, "raise_camera()").ok and hh.agent.camera == 2
    assert "higher" in apply(hh, "raise_camera()").feedback
    assert run(hh, "lower_camera()", "lower_camera()").ok and hh.agent.camera == 0
    assert "lower" in apply(hh, "lower_camera()").feedback


def test_grasp_needs_reach_a_free_hand_and_a_movable_light_thing():
    hh = make()
    assert "fixed in place" in apply(hh, "grasp(1)").feedback
    hh.agent.x, hh.agent.y = 1.0, 2.9  # next to the piano and the table
    observe(hh)
    assert "too heavy" in apply(hh, "grasp(11)").feedback
    hh = make()
    hh.agent.y = 2.2  # 1.55 m from the countertop: seen, but out of reach
    assert "out of reach" in apply(hh, "grasp(2)").feedback
    result = run(hh, "move(2)", "grasp(2)")
    assert result.ok and hh.agent.holding == "apple" and hh.things["apple"].relation is None
    assert "hand is full" in apply(hh, "grasp(10)").feedback


def test_what_rests_on_a_grasped_thing_travels_with_it():
    hh = make()
    run(hh, "turn_left()", "turn_left()", "move(5)", "grasp(5)")
    assert hh.things["cup"].relation == ("ontop", "tray")
    run(hh, "move_to_room(living_room_0)")
    assert hh.things["cup"].room == hh.things["tray"].room == "living_room_0"
    assert hh.things["tray"].box.x == pytest.approx(hh.agent.x)
    assert abs(hh.things["cup"].box.x - hh.things["tray"].box.x) < 0.3


def test_move_needs_the_thing_seen_and_in_this_room():
    hh = make()
    assert "has not been seen" in apply(hh, "move(9)").feedback
    hh.seen.add("sofa")
    assert "not in this room" in apply(hh, "move(9)").feedback
    result = run(hh, "move(1)")
    assert result.ok and hh.agent.heading == 3  # facing the countertop below it
    assert hh.things["counter"].box.y < hh.agent.y <= 1.2 + 0.65


def test_things_out_of_view_and_far_cannot_be_acted_on():
    hh = make()
    hh.agent.x, hh.agent.y, hh.agent.heading = 4.5, 3.5, 0
    observe(hh)
    assert "counter" not in hh.in_view
    assert "not in view" in apply(hh, "open(1)").feedback
    hh.agent.x, hh.agent.y = 3.4, 2.4  # within 2.4 m, still not looking: allowed to try (VAB's rule)
    assert "out of reach" in apply(hh, "toggle_on(10)").feedback


def test_put_inside_needs_an_open_container_with_room():
    hh = make()
    run(hh, "move(2)", "grasp(2)", "turn_left()", "move(3)")
    assert "closed; open it first" in apply(hh, "put_inside(2, 3)").feedback
    result = run(hh, "open(3)", "put_inside(2, 3)")
    assert result.ok and inside(hh, "apple", "fridge") and hh.agent.holding is None
    assert "cannot hold things" in (run(hh, "grasp(4)"), apply(hh, "put_inside(4, 1)"))[1].feedback
    hh.seen.add("basket")  # as if it had been looked at earlier
    run(hh, "move(8)")
    assert "full" in apply(hh, "put_inside(4, 8)").feedback  # the milk carton does not fit the small basket
    assert not inside(hh, "milk", "basket")


def test_a_closed_container_shuts_its_contents_away():
    hh = make()
    run(hh, "turn_left()", "move(3)")
    assert "shut inside 3.electric_refrigerator" in apply(hh, "grasp(4)").feedback
    assert run(hh, "open(3)", "grasp(4)").ok


def test_put_on_top_under_and_next_to():
    hh = make()
    run(hh, "move(2)", "grasp(2)", "turn_left()", "turn_left()", "move(7)")
    assert run(hh, "put_on_top(2, 7)").ok and ontop(hh, "apple", "table")
    run(hh, "grasp(2)")
    assert run(hh, "put_under(2, 7)").ok and under(hh, "apple", "table") and ontop(hh, "apple", "floor_k")
    assert not ontop(hh, "apple", "table")
    run(hh, "lower_camera()", "grasp(2)")
    assert run(hh, "put_next_to(2, 5)").ok and nextto(hh, "apple", "tray") and nextto(hh, "tray", "apple")
    assert ontop(hh, "apple", "table")  # beside the tray, on what the tray rests on
    run(hh, "grasp(5)")  # the tray moves away: no longer next to the apple
    assert not nextto(hh, "apple", "tray")
    assert "Nothing can be put under" in apply(hh, "put_under(5, 2)").feedback


def test_a_surface_can_be_full():
    hh = make()
    hh.things["table"].box = Box(1, 3.6, 0, 0.5, 0.4, 0.75)  # a small stool-sized table, the tray fills it
    run(hh, "move(2)", "grasp(2)", "turn_left()", "turn_left()", "move(7)")
    assert "no free space on 7.table" in apply(hh, "put_on_top(2, 7)").feedback


def test_state_actions_follow_capabilities():
    hh = make()
    run(hh, "move(2)")
    assert run(hh, "cook(2)").ok and "cooked" in hh.things["apple"].states
    assert run(hh, "heat(2)").ok and "hot" in hh.things["apple"].states
    assert run(hh, "freeze(2)").ok and "frozen" in hh.things["apple"].states
    assert "hot" not in hh.things["apple"].states
    assert run(hh, "burn(2)").ok and "burnt" in hh.things["apple"].states
    assert "cannot be switched on" in apply(hh, "toggle_on(2)").feedback
    assert run(hh, "toggle_on(10)").ok and "toggled_on" in hh.things["lamp"].states
    assert run(hh, "toggle_off(10)").ok and "toggled_on" not in hh.things["lamp"].states
    assert "nothing to open" in apply(hh, "open(1)").feedback
    assert "cannot be cooked" in apply(hh, "cook(1)").feedback


def test_open_close_and_the_fridge_view():
    hh = make()
    assert "too far" in apply(hh, "get_fridge_view()").feedback or "closed" in apply(hh, "get_fridge_view()").feedback
    run(hh, "turn_left()", "move(3)")
    assert "closed" in apply(hh, "get_fridge_view()").feedback
    result = run(hh, "open(3)", "get_fridge_view()")
    assert result.ok and result.fridge_view and hh.in_view == {"fridge", "milk"}
    assert run(hh, "close(3)").ok and not hh.things["fridge"].is_open
    hh.agent.x = 1.0
    hh.things["fridge"].is_open = True
    assert "too far" in apply(hh, "get_fridge_view()").feedback


def test_move_to_room_and_done():
    hh = make()
    assert "attic_0" in apply(hh, "move_to_room(attic_0)").feedback and "living_room_0" in \
        apply(hh, "move_to_room(attic_0)").feedback
    assert run(hh, "move_to_room(living_room_0)").ok and hh.agent.room == "living_room_0"
    assert hh.rooms["living_room_0"].contains(hh.agent.x, hh.agent.y)
    result = apply(hh, "done()")
    assert result.ok and result.done and result.func == "done"
