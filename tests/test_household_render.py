"""The household pack's pixels: the agent's camera, the drawn room and VAB's set-of-marks labels."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nodes.game.household.camera import agent_camera, boxes, fridge_camera, project
from nodes.game.household.labels import id_color, place
from nodes.game.household.model import FRAME_SIZE, Box
from nodes.game.household.render import encode, frame, fridge_frame, render
from nodes.game.household.visibility import visible
from nodes.game.household.scene import shade
from nodes.game.household.shapes import category_color, thing_color
from tests.household_scenes import kitchen, labelled_names

COUNTER = "countertop.n.01_1"
BOTTLE = "beer_bottle.n.01_1"
FRIDGE = "electric_refrigerator.n.01_1"
BASKET = "basket.n.01_1"
BOWL = "bowl.n.01_1"
MILK = "milk.n.01_1"
LIGHTS = (1.0, 0.5, 0.8, 0.68, 0.88, 0.74)  # every face shade render uses


def pixels_of(img, hh, name: str) -> int:
    """How many pixels show a face of the thing ``name`` (its colours are exact: no smoothing)."""
    a = np.asarray(img)
    color = thing_color(hh.things[name])
    return sum(int(np.all(a == shade(color, k), axis=-1).sum()) for k in LIGHTS)


def count(img, color) -> int:
    return int(np.all(np.asarray(img) == color, axis=-1).sum())


def test_frame_is_vab_sized_rgb():
    hh = kitchen()
    img = frame(hh, labelled_names(hh))
    assert img.size == FRAME_SIZE == (1280, 720)
    assert img.mode == "RGB"
    arr = render(hh, labelled_names(hh))
    assert arr.shape == (720, 1280, 3) and arr.dtype == np.uint8


def test_same_household_same_png_bytes():
    a = encode(frame(kitchen(fridge_open=True), labelled_names(kitchen())))
    b = encode(frame(kitchen(fridge_open=True), labelled_names(kitchen())))
    assert a[:8] == b"\x89PNG\r\n\x1a\n"
    assert a == b


def test_category_colors_are_stable_and_distinct():
    # fixed values: a salted hash() would change them from one process to the next
    assert category_color("beer_bottle") == category_color("beer_bottle")
    assert category_color("beer_bottle") != category_color("countertop")
    assert all(0 <= c <= 255 for c in category_color("x"))


def test_each_heading_shows_a_different_picture():
    pngs = {encode(frame(kitchen(heading=h, x=3.0, y=2.0), [])) for h in range(4)}
    assert len(pngs) == 4


def test_heading_turns_the_camera_anticlockwise():
    hh = kitchen(heading=0, x=3.0, y=2.5)
    ahead = Box(5.5, 2.5, 0.5, 0.2, 0.2, 0.2)  # east of the agent
    rect = project(hh, ahead)
    assert rect is not None and abs((rect[0] + rect[2]) / 2 - FRAME_SIZE[0] / 2) < 3
    hh.agent.heading = 2  # now facing west: the box is behind
    assert project(hh, ahead) is None
    hh.agent.heading = 1  # facing north: the east box is off to the right, out of a 90 degree view
    assert project(hh, ahead) is None
    left = Box(3.0 - 0.3, 4.0, 0.5, 0.1, 0.1, 0.1)  # north and a little west: left of centre
    rect = project(hh, left)
    assert rect is not None and rect[2] < FRAME_SIZE[0] / 2


def test_camera_looks_down_from_its_height():
    hh = kitchen(heading=0, x=1.0, y=2.5)
    cam = agent_camera(hh)
    assert cam.z == pytest.approx(1.05)
    # a point on the optical axis lands in the middle of the frame
    d = 2.0
    p = (1.0 + d * math.cos(cam.pitch), 2.5, cam.z - d * math.sin(cam.pitch))
    sx, sy = cam.to_screen(cam.to_view(p))
    assert (sx, sy) == pytest.approx((640, 360), abs=1e-6)
    # a point at eye height straight ahead sits above the middle: the camera is tilted down
    assert cam.to_screen(cam.to_view((4.0, 2.5, cam.z)))[1] < 360


def test_camera_height_changes_picture_and_moves_boxes():
    pngs = [encode(frame(kitchen(camera=c, x=3.3, y=1.3), [])) for c in range(3)]
    assert len(set(pngs)) == 3
    ys = [project(kitchen(camera=c, x=3.3, y=1.3), kitchen().things[BASKET].box) for c in range(3)]
    assert all(r is not None for r in ys)
    assert ys[0][1] < ys[1][1] < ys[2][1]  # lower camera: floor things rise towards the horizon


def test_under_the_table_shows_only_from_the_low_camera():
    low, high = kitchen(camera=0, x=3.3, y=1.3), kitchen(camera=2, x=3.3, y=1.3)
    assert pixels_of(frame(low, []), low, BASKET) > 1000
    assert pixels_of(frame(high, []), high, BASKET) == 0  # the table top hides it


def test_low_camera_sees_the_table_from_below():
    top = shade(thing_color(kitchen().things["breakfast_table.n.01_1"]), 1.0)
    under = shade(thing_color(kitchen().things["breakfast_table.n.01_1"]), 0.5)
    low, mid = frame(kitchen(camera=0, y=0.4), []), frame(kitchen(camera=1, y=0.4), [])
    assert count(mid, top) > 1000 and count(mid, under) == 0
    assert count(low, under) > 100 and count(low, top) == 0


def test_bottles_stand_in_front_of_the_counter():
    hh = kitchen(y=0.4)
    assert pixels_of(frame(hh, []), hh, BOTTLE) > 100


def test_visible_labelled_thing_gets_its_outline():
    hh = kitchen(y=0.4)
    rect = boxes(hh, [COUNTER])[COUNTER]
    img = np.asarray(frame(hh, [COUNTER]))
    x0, y0, x1, y1 = rect
    color = np.array(id_color(hh.things[COUNTER].id))
    edge = np.concatenate([img[y0:y1, x0], img[y0:y1, x1 - 1], img[y0, x0:x1], img[y1 - 1, x0:x1]])
    assert np.all(edge == color, axis=-1).mean() > 0.8
    inside = img[y0 + 10:y1 - 10, x0 + 10:x1 - 10]
    assert np.all(inside == color, axis=-1).mean() < 0.05  # an outline, not a filled box


def test_only_visible_named_things_get_tags():
    hh = kitchen(y=0.4)
    bottle_color = id_color(hh.things[BOTTLE].id)
    assert count(frame(hh, [COUNTER]), bottle_color) == 0
    assert count(frame(hh, [COUNTER, BOTTLE]), bottle_color) > 200
    # scenery has no identifier, so naming it as visible marks nothing
    assert encode(frame(hh, ["scenery:stove_0"])) == encode(frame(hh, []))


def test_unknown_visible_name_is_an_error_that_names_it():
    with pytest.raises(KeyError, match="no_such_thing"):
        frame(kitchen(), ["no_such_thing"])


def test_closed_cabinet_hides_what_is_inside_and_open_one_shows_it():
    pose = dict(heading=2, x=4.0, y=2.0, camera=2)
    shut, opened = kitchen(**pose), kitchen(cabinet_open=True, **pose)
    assert pixels_of(frame(shut, []), shut, BOWL) == 0
    assert pixels_of(frame(opened, []), opened, BOWL) > 100
    # and a shut container never gets its contents marked, even if told they are visible
    assert count(frame(shut, [BOWL]), id_color(shut.things[BOWL].id)) == 0
    assert BOWL not in visible(shut)
    assert BOWL in visible(opened)


def test_fridge_view_looks_at_the_contents():
    hh = kitchen(fridge_open=True)
    inside = fridge_frame(hh, FRIDGE, labelled_names(hh))
    assert inside.size == FRAME_SIZE
    assert encode(inside) != encode(frame(hh, labelled_names(hh)))
    # the milk shows (through the glass shelf above it): taking it away changes its rectangle
    empty = kitchen(fridge_open=True)
    del empty.things[MILK]
    x0, y0, x1, y1 = boxes(hh, [MILK], fridge_camera(hh, hh.things[FRIDGE]))[MILK]
    with_milk = np.asarray(fridge_frame(hh, FRIDGE, []))[y0:y1, x0:x1]
    without = np.asarray(fridge_frame(empty, FRIDGE, []))[y0:y1, x0:x1]
    assert x1 - x0 > 40 and np.any(with_milk != without, axis=-1).mean() > 0.8
    assert count(inside, id_color(hh.things[MILK].id)) > 100  # marked
    assert count(inside, id_color(hh.things[COUNTER].id)) == 0  # outside the fridge: not marked
    assert encode(inside) == encode(fridge_frame(kitchen(fridge_open=True), FRIDGE, labelled_names(hh)))


def test_fridge_view_needs_an_open_fridge():
    with pytest.raises(ValueError, match="electric_refrigerator"):
        fridge_frame(kitchen(fridge_open=False), FRIDGE, [])
    with pytest.raises(KeyError, match="fridge_9"):
        fridge_frame(kitchen(), "fridge_9", [])


def test_tags_stay_in_frame_and_avoid_each_other():
    size = FRAME_SIZE
    taken: list = []
    for _ in range(4):  # four things at the same spot in the top-left corner
        tag = place((0, 0, 60, 60), 120, 26, taken, size)
        assert 0 <= tag[0] and 0 <= tag[1] and tag[2] <= size[0] and tag[3] <= size[1]
        taken.append(tag)
    overlaps = [(a, b) for i, a in enumerate(taken) for b in taken[i + 1:]
                if min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])]
    assert not overlaps
    corner = place((1250, 700, 1280, 720), 150, 26, [], size)
    assert corner[2] <= size[0] and corner[3] <= size[1]


def test_boxes_skip_what_is_out_of_view():
    hh = kitchen(heading=1, y=0.4)
    found = boxes(hh, labelled_names(hh))
    assert COUNTER in found and BOTTLE in found
    hh.agent.heading = 3  # facing the south wall, the counter is behind the agent
    assert COUNTER not in boxes(hh, labelled_names(hh))


def test_a_thing_hidden_behind_furniture_gets_no_mark_and_a_half_hidden_one_a_box_round_what_shows():
    from nodes.game.household.model import Thing

    open_view = kitchen(y=0.4)
    walled = kitchen(y=0.4)
    # a tall wardrobe across the west half of the room, between the robot and the bottles
    walled.things["scenery:wardrobe_0"] = Thing("scenery:wardrobe_0", "wardrobe", "kitchen_0",
                                                Box(1.2, 3.6, 0.0, 2.4, 0.4, 2.2))
    bottle = id_color(open_view.things[BOTTLE].id)
    assert count(frame(open_view, [BOTTLE]), bottle) > 200
    assert count(frame(walled, [BOTTLE]), bottle) == 0  # the camera would not see it: no box
    assert BOTTLE in visible(walled)  # what the rules let the agent name is the plan's, not the picture's
    counter = open_view.things[COUNTER].id
    whole = boxes(open_view, [COUNTER])[COUNTER]
    img = np.asarray(frame(walled, [COUNTER]))
    xs = np.flatnonzero(np.all(img == id_color(counter), axis=-1).any(axis=0))
    assert xs.size and xs.min() > whole[0] + 20  # its left end is behind the wardrobe: the box starts later
