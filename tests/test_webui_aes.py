"""The AES metric (nodes/browser/webui/aes.py) on hand-made elements, no browser: each formula is
pinned by a value computed by hand in the comments beside it."""

from __future__ import annotations

import dataclasses
import functools
import math

import pytest

from nodes.browser.webui import aes, similarity
from nodes.browser.webui.aes import Element

TOL = 1e-6


def el(box, *, filter_by="text", evalby="", text="", style=None, attrs=None, descendants=0, html="",
       key=-1) -> Element:
    """An element with the given box; ``filter_by=None`` makes it a plain (non-atomic) element."""
    a = dict(attrs or {})
    if filter_by is not None:
        a["data-filter-by"] = filter_by
        a["data-evalby"] = evalby
    return Element(box=box, text=text, attrs=a, style=dict(style or {}), descendants=descendants,
                   outer_html=html or f"<x>{text}{box}</x>", key=key)


# -- similarities -----------------------------------------------------------------------------------
def test_text_is_exact_case_insensitive_below_ten_words_and_word_iou_from_ten():
    assert aes.text_sim("Add a cup", "  add A CUP ") == 1.0
    assert aes.text_sim("Add a cup", "Add cup") == 0.0  # short text: all or nothing
    gt = "a b c d e f g h i j"  # 10 words: word-set IoU
    # {a..i} shared (9), union {a..j, k} (11): 9/11
    assert aes.text_sim(gt, "a b c d e f g h i k") == pytest.approx(9 / 11, abs=TOL)
    assert aes.text_sim(gt, "A b c d e f g h i j") == pytest.approx(9 / 11, abs=TOL)  # long text: case counts


def test_pixel_similarity_is_one_minus_relative_error_floored():
    assert aes.pixel_sim("40px", "30px") == pytest.approx(0.75, abs=TOL)  # 1 - 10/40
    assert aes.pixel_sim("40px", "50px") == pytest.approx(0.75, abs=TOL)  # 1 - 10/40, symmetric in sign
    assert aes.pixel_sim("40px", "79px") == pytest.approx(0.025, abs=TOL)  # 1 - 39/40
    assert aes.pixel_sim("40px", "80px") == 0.0  # relative difference 1: floored
    assert aes.pixel_sim("40px", "200px") == 0.0
    assert aes.pixel_sim("0px", "0px") == 1.0 and aes.pixel_sim("0px", "2px") == 0.0  # 0 needs exactly 0
    with pytest.raises(ValueError):
        aes.pixel_sim("auto", "3px")


def test_colour_similarity_averages_rgb_and_ignores_alpha():
    # Δ = (160, 30, 0): ((1 - 160/256) + (1 - 30/256) + 1) / 3 = (0.375 + 0.8828125 + 1) / 3 = 0.752604166...
    assert aes.colour_sim("rgb(40, 60, 120)", "rgba(200, 30, 120, 0.5)") == pytest.approx(0.7526041666, abs=TOL)
    assert aes.colour_sim("rgba(40, 60, 120, 0)", "rgb(40, 60, 120)") == 1.0  # alpha ignored
    # black vs white: 1 - 255/256 per channel = 1/256
    assert aes.colour_sim("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(1 / 256, abs=TOL)
    with pytest.raises(ValueError):
        aes.colour_sim("color(srgb 1 0 0)", "rgb(0, 0, 0)")


def test_compound_shadow_properties():
    # colour 1 (weight 2) and lengths 0/0 → 1, 4/2 → 0.5, 8/8 → 1, 0/0 → 1: (2 + 3.5) / 6
    gt, gen = "rgb(0, 0, 0) 0px 4px 8px 0px", "rgb(0, 0, 0) 0px 2px 8px 0px"
    assert similarity.box_shadow(gt, gen, "corrected") == pytest.approx(5.5 / 6, abs=TOL)
    assert similarity.box_shadow(gt, gen, "released") == pytest.approx(5.5 / 6, abs=TOL)  # one rgb shadow: same
    assert similarity.box_shadow("none", "none", "corrected") == 1.0
    assert similarity.box_shadow(gt, "none", "corrected") == 0.0
    # text-shadow: colour Δ=(128,0,0) → 2·(2.5/3) and lengths 2/1 → 0.5, 2/2 → 1, 4/4 → 1: (5/3 + 2.5) / 5
    assert similarity.text_shadow("rgb(0, 0, 0) 2px 2px 4px", "rgb(128, 0, 0) 1px 2px 4px") == \
        pytest.approx((5 / 3 + 2.5) / 5, abs=TOL)
    with pytest.raises(ValueError):
        similarity.text_shadow("none", "none")  # nothing to compare: the property is left out


# -- boxes ------------------------------------------------------------------------------------------
A = (0, 0, 9, 9)  # 10 x 10 with the +1 convention: area 100


def test_giou_uses_the_plus_one_pixel_convention():
    # B = (5,0,14,9): intersection 5 x 10 = 50, union 150, enclosing (0,0,14,9) = 15 x 10 = 150: 50/150 - 0
    assert aes.giou(A, (5, 0, 14, 9)) == pytest.approx(1 / 3, abs=TOL)
    # disjoint (20,0,29,9): intersection 0, union 200, enclosing 30 x 10 = 300: 0 - 100/300
    assert aes.giou(A, (20, 0, 29, 9)) == pytest.approx(-1 / 3, abs=TOL)
    assert aes.giou(A, A) == 1.0


def test_position_term_overlap_and_distance():
    assert aes.position_score(A, (5, 0, 14, 9)) == pytest.approx(0.75, abs=TOL)  # 0.5 + 0.5 · 50/100
    assert aes.position_score(A, (2, 2, 5, 5)) == pytest.approx(1.0, abs=TOL)  # inside: 0.5 + 0.5 · 16/16
    assert aes.position_score(A, (20, 0, 29, 9)) == pytest.approx(1 / 3, abs=TOL)  # (GIoU + 1)/2 = (2/3)/2


def test_element_weight_is_area_to_the_beta():
    # area 10 x 20 = 200 (no +1 here): 200 ** 0.8987018465995789 = exp(0.8987018465995789 · ln 200)
    assert aes.weight_of(el((0, 0, 10, 20))) == pytest.approx(116.93375772696444, abs=TOL)
    assert aes.BETA == 0.8987018465995789


# -- filters ----------------------------------------------------------------------------------------
def test_filter_thresholds_per_kind():  # the corrected rules (released ones: the tests further down)
    box = (0, 0, 9, 9)
    filter_score = functools.partial(aes.filter_score, rules="corrected")
    t = el(box, filter_by="text", text="Add a cup")
    assert filter_score(t, el(box, text="ADD A CUP")) == 0.0
    assert filter_score(t, el(box, text="Add one cup")) == -1.0
    black = el(box, filter_by="color", style={"color": "rgb(0, 0, 0)"})
    assert filter_score(black, el(box, style={"color": "rgb(255, 255, 255)"})) == -1.0  # 1/256 ≤ 0.01
    assert filter_score(black, el(box, style={"color": "rgb(250, 250, 250)"})) == 0.0  # 6/256 > 0.01
    wide = el(box, filter_by="width", style={"width": "100px"})
    assert filter_score(wide, el(box, style={"width": "150px"})) == 0.0  # 1 - 50/100 = 0.5 > 0.01
    assert filter_score(wide, el(box, style={"width": "200px"})) == -1.0  # relative diff 1: 0
    assert filter_score(wide, el(box, style={"width": "auto"})) == -0.01  # not comparable
    klass = el(box, filter_by="class", attrs={"class": "card big"})
    assert filter_score(klass, el(box, attrs={"class": "card big"})) == 0.0
    assert filter_score(klass, el(box, attrs={"class": "card"})) == -1.0
    has = el(box, filter_by="has_text", text="anything")
    assert filter_score(has, el(box, text="other words")) == 0.0
    assert filter_score(has, el(box, text="  ")) == -1.0  # no word
    ph = el(box, filter_by="placeholder", attrs={"placeholder": "Your name"})
    assert filter_score(ph, el(box, attrs={"placeholder": "your NAME"})) == 0.0
    assert filter_score(ph, el(box)) == -1.0
    src = el(box, filter_by="src", attrs={"src": "http://webui.page/a.png"})
    assert filter_score(src, el(box, attrs={"src": "http://webui.page/b.png"})) == -1.0


def test_pixel_filter_boundary():
    # 1 - 198/200 = 0.01 exactly in binary? 198/200 = 0.99, 1 - 0.99 = 0.010000000000000009: passes;
    # the pass line sits just above: 1 - 199/200 = 0.005 fails, 1 - 196/200 = 0.02 passes
    wide = el((0, 0, 9, 9), filter_by="width", style={"width": "200px"})
    assert aes.filter_score(wide, el((0, 0, 9, 9), style={"width": "399px"})) == -1.0  # 0.005
    assert aes.filter_score(wide, el((0, 0, 9, 9), style={"width": "396px"})) == 0.0  # 0.02


# -- shorthands and the element score ---------------------------------------------------------------
def test_shorthands_split_into_longhands():  # corrected
    split = functools.partial(aes.split_property, rules="corrected")
    plain = el(A, style={"background-image": "none"})
    grad = el(A, style={"background-image": "linear-gradient(rgb(255, 0, 0), rgb(0, 0, 255))"})
    assert split("border", plain) == [f"border-{s}-width" for s in ("bottom", "top", "left", "right")]
    assert split("border-radius", plain) == [
        "border-bottom-left-radius", "border-bottom-right-radius", "border-top-left-radius", "border-top-right-radius"]
    assert split("outline", plain) == ["outline-style", "outline-width", "outline-color"]
    assert split("border-top", plain) == ["border-top-width", "border-top-color"]
    assert split("border-down", plain) == ["border-bottom-width", "border-bottom-color"]
    assert split("background", grad) == ["linear-gradient", "background-color", "background-repeat"]
    assert split("background", plain) == ["background-color", "background-image", "background-repeat"]
    assert split("color", plain) == ["color"]


def test_element_score_is_the_alpha_weighted_mean_with_the_position_term():
    radii = {f"border-{c}-radius": "8px" for c in ("top-left", "top-right", "bottom-left", "bottom-right")}
    gt = el((0, 0, 99, 49), evalby="text|color|border-radius|padding|no-such-prop", text="Buy",
            style={"color": "rgb(0, 0, 0)", **radii})
    gen = el((0, 0, 99, 49), text="buy", style={
        "color": "rgb(128, 0, 0)", "border-top-left-radius": "4px", "border-top-right-radius": "8px",
        "border-bottom-left-radius": "12px", "border-bottom-right-radius": "auto"})
    # text 1 (α 6.8); color (1 - 128/256 + 1 + 1)/3 = 2.5/3 (α 30);
    # border-radius: 4px → 0.5, 8px → 1, 12px → 0.5, auto → left out: mean(α·s) = 100·2/3, mean α = 100;
    # padding ignored, unknown property skipped; same box → position 1 (α 46):
    # (6.8 + 25 + 66.666667 + 46) / (6.8 + 30 + 100 + 46) = 144.466667 / 182.8
    score, attribute = aes.element_score(gt, gen)
    assert score == pytest.approx(144.46666666666667 / 182.8, abs=TOL)
    assert attribute == pytest.approx(98.46666666666667 / 136.8, abs=TOL)  # the same without position
    # nothing comparable: only the position term; boxes overlapping half → 0.75
    bare = el(A, evalby="font-size")
    assert aes.element_score(bare, el((5, 0, 14, 9)))[0] == pytest.approx(0.75, abs=TOL)
    assert math.isnan(aes.element_score(bare, el((5, 0, 14, 9)))[1])


# -- matching ---------------------------------------------------------------------------------------
def test_hungarian_prefers_the_filtered_pair_over_the_closest_box():
    gt = [el((0, 0, 99, 99), text="Alpha"), el((200, 0, 299, 99), text="Beta")]
    gen = [el((0, 0, 99, 99), text="Beta"),    # on Alpha's spot, wrong text: GIoU 1 + filter -1 = 0
           el((10, 0, 109, 99), text="Alpha"),  # GIoU 9000/11000 = 0.8182, filter 0
           el((190, 0, 289, 99), text="Beta")]  # GIoU 0.8182 with Beta
    # Alpha→g1 + Beta→g2 = 1.636 beats Alpha→g0 + Beta→g2 = 0.818 (Alpha→g2 is forbidden: -0.31 - 1 < -1)
    assert sorted(aes.match(gt, gen)) == sorted(aes.match(gt, gen, "corrected")) == [(0, 1), (1, 2)]


def test_descendants_break_ties_towards_the_innermost_element():
    gt = [el(A, text="Go")]
    gen = [el(A, text="Go", descendants=3), el(A, text="Go", descendants=0)]  # cost -1 + 3e-5 vs -1
    assert aes.match(gt, gen) == [(0, 1)]


def test_forbidden_pairs_are_never_matched_and_count_as_unmatched():
    gt = [el((0, 0, 99, 99), text="Alpha")]
    gen = [el((500, 0, 599, 99), text="Beta")]  # GIoU (0 - 40000/60000) + filter -1 = -1.667 < -1
    assert aes.match(gt, gen, "corrected") == []
    page = aes.score_page("p", gt, gen, rules="corrected")
    assert (page.matched, page.unmatched, page.score) == (0, 1, 0.0)
    assert page.weight == pytest.approx(9801 ** aes.BETA, abs=TOL)  # area 99 x 99 (no +1 here): weight stays


def test_unmatched_ground_truth_weighs_without_score():
    gt = [el((0, 0, 100, 100), text="Alpha", evalby="text"), el((200, 0, 300, 100), text="Beta", evalby="text")]
    page = aes.score_page("p", gt, [gt[0]])  # only Alpha exists on the generated page
    # Alpha scores 1 · w, Beta 0 · w, both weigh w = 10000^β: 50 %
    assert (page.matched, page.unmatched) == (1, 1)
    assert page.percent == pytest.approx(50.0, abs=TOL)
    assert aes.aes([page]) == pytest.approx(50.0, abs=TOL)
    assert aes.aes([]) == 0.0


def test_attribute_losses_are_counted_and_unfilterable_ground_truth_is_not_scored():
    gt = [el(A, filter_by="text", evalby="color", text="x", style={"color": "rgb(0, 0, 0)"}),
          el((20, 0, 29, 9), filter_by="box-shadow", evalby="box-shadow"),  # box-shadow has no filter
          el((40, 0, 49, 9), filter_by=None)]  # not atomic
    gen = [el(A, text="x", style={"color": "rgb(10, 0, 0)"})]
    page = aes.score_page("p", gt, gen)
    assert (page.elements, page.matched, page.attribute_losses) == (1, 1, 1)


# -- pages ------------------------------------------------------------------------------------------
def test_elements_an_interaction_left_unchanged_are_excluded():
    before = {1: "<p>a</p>", 2: "<p>b</p>", 3: "<i>x</i>"}
    after = {1: "<p>a</p>", 2: "<p>c</p>", 4: "<i>x</i>"}  # 2 changed, 3 removed, 4 new (same html as 3)
    kept = aes.kept_keys(before, after)
    assert kept == frozenset({1})
    gt = [el((0, 0, 100, 100), html="<p>a</p>", text="a", evalby="text", key=1),
          el((0, 200, 100, 300), html="<p>c</p>", text="c", evalby="text", key=2),
          el((0, 400, 100, 500), html="<i>x</i>", text="x", evalby="text", key=4)]
    page = aes.score_page("after", gt, [gt[1]], kept)
    # <p>a</p> excluded; <p>c</p> matched (1 · w), <i>x</i> new here and unmatched: 50 %, not 33 %
    assert (page.elements, page.matched, page.unmatched) == (2, 1, 1)
    assert page.percent == pytest.approx(50.0, abs=TOL)


def test_a_changed_element_reading_like_an_unchanged_sibling_is_still_scored():
    # three dots, the first highlighted; the interaction moves the highlight to the second: the first
    # now reads like the third, which did not change, yet it changed itself and is scored
    before = {1: '<i class="dot on"></i>', 2: '<i class="dot"></i>', 3: '<i class="dot"></i>'}
    after = {1: '<i class="dot"></i>', 2: '<i class="dot on"></i>', 3: '<i class="dot"></i>'}
    kept = aes.kept_keys(before, after, "corrected")
    assert kept == frozenset({3})
    gt = [el((20 * k, 0, 20 * k + 10, 10), filter_by="class", evalby="class", html=after[k], key=k,
             attrs={"class": after[k].split('"')[1]}) for k in (1, 2, 3)]
    page = aes.score_page("after", gt, gt, kept, "corrected")
    assert (page.elements, page.matched) == (2, 2)


def test_a_failed_interaction_scores_zero_but_keeps_its_weight():
    gt0 = [el((0, 0, 100, 100), text="a", evalby="text")]
    gt1 = [el((0, 0, 100, 100), text="b", evalby="text", html="<p>b</p>"),
           el((0, 200, 100, 300), text="c", evalby="text", html="<p>c</p>")]
    first = aes.score_page("initial", gt0, gt0)  # perfect: score = weight = w = 10000^β
    gt1 = [gt1[0], dataclasses.replace(gt1[1], key=7)]  # <p>c</p>, the element the interaction left as it was
    failed = aes.failed_page("interaction 0", gt1, frozenset({7}), "interaction", "no #add")
    assert (failed.score, failed.elements, failed.status) == (0.0, 1, "interaction")
    assert failed.weight == pytest.approx(10000 ** aes.BETA, abs=TOL)  # <p>c</p> unchanged: excluded
    # Σ score / Σ weight = w / 2w
    assert aes.aes([first, failed]) == pytest.approx(50.0, abs=TOL)


# -- released vs corrected rules: each documented deviation, both values pinned ----------------------
SAME = (0, 0, 99, 99)  # the ground truth's and the generated element's box in the score tests: position 1


def both(gt: Element, gen: Element) -> tuple[float, float]:
    """(released, corrected) element scores."""
    return aes.element_score(gt, gen, "released")[0], aes.element_score(gt, gen, "corrected")[0]


def test_released_is_the_default_everywhere():
    import inspect

    for fn in (aes.element_score, aes.filter_score, aes.property_score, aes.split_property, aes.match, aes.assign,
               aes.score_page, aes.kept_keys, similarity.text_sim, similarity.box_shadow, similarity.has_text):
        assert inspect.signature(fn).parameters["rules"].default == "released", fn.__name__
    assert aes.RULES == ("released", "corrected")


def test_a_forbidden_pair_drops_the_element_when_released_and_is_unmatched_when_corrected():
    gt = [el(SAME, text="Alpha", evalby="text"), el((200, 0, 299, 99), text="Beta", evalby="text")]
    # Beta's only partners: Gamma, GIoU 0 - 30000/50000 = -0.6, and Alpha, GIoU -1/3, each with filter -1:
    # both below -1, so the assignment gives Beta a forbidden pair (its row is assigned, its cost 1e5)
    gen = [el(SAME, text="Alpha"), el((600, 0, 699, 99), text="Gamma")]
    pairs, forbidden = aes.assign(gt, gen, "corrected")
    assert pairs == [(0, 0)] and forbidden == frozenset({1})
    w = 9801 ** aes.BETA  # each weighs (99 · 99) ** β
    released, corrected = aes.score_page("p", gt, gen, rules="released"), aes.score_page("p", gt, gen, rules="corrected")
    # released: Alpha 1 · w over w (Beta out of both sums); corrected: w over 2w
    assert (released.score, released.weight) == pytest.approx((w, w), abs=TOL)
    assert (released.matched, released.unmatched, released.dropped, released.percent) == (1, 0, 1, pytest.approx(100.0))
    assert (corrected.score, corrected.weight) == pytest.approx((w, 2 * w), abs=TOL)
    assert (corrected.matched, corrected.unmatched, corrected.dropped) == (1, 1, 0)
    assert corrected.percent == pytest.approx(50.0, abs=TOL)
    # the accident: without the wrong Gamma, Beta's row is left out of the assignment and counts, released too
    assert aes.score_page("p", gt, gen[:1], rules="released").percent == pytest.approx(50.0, abs=TOL)


def test_placeholder_and_value_compare_visible_text_when_released():
    gt = el(SAME, filter_by="placeholder", evalby="placeholder|value", attrs={"placeholder": "Your name", "value": ""})
    gen = el(SAME, attrs={"placeholder": "Email", "value": "x"})
    # released: both sides' visible text is "" and "" == "": the filter passes and both properties score 1
    assert aes.filter_score(gt, gen, "released") == 0.0 and aes.filter_score(gt, gen, "corrected") == -1.0
    # corrected: placeholder 0 and value 0 (α 6.8 each), position 1 (α 46): 46 / 59.6
    assert both(gt, gen) == pytest.approx((1.0, 46 / 59.6), abs=TOL)
    assert both(gt, gen)[1] == pytest.approx(0.7718120805369127, abs=TOL)


def test_src_and_type_always_match_when_released():
    gt = el(SAME, filter_by="src", evalby="src|type", attrs={"src": "http://webui.page/a.png", "type": "text"})
    gen = el(SAME, attrs={"src": "http://webui.page/b.png", "type": "password"})
    assert aes.filter_score(gt, gen, "released") == 0.0 and aes.filter_score(gt, gen, "corrected") == -1.0
    # corrected: src 0 (α 12.6), type 0 (α 18.9), position 1: 46 / 77.5
    assert both(gt, gen) == pytest.approx((1.0, 46 / 77.5), abs=TOL)


def test_has_text_always_passes_when_released():
    gt, gen = el(SAME, filter_by="has_text", evalby="has_text", text="Hi"), el(SAME, text="")
    assert aes.filter_score(gt, gen, "released") == 0.0 and aes.filter_score(gt, gen, "corrected") == -1.0
    # "".strip().split(" ") == [""]: one "word"; corrected: has_text 0 (α 44), position 1: 46 / 90
    assert both(gt, gen) == pytest.approx((1.0, 46 / 90), abs=TOL)
    assert both(gt, gen)[1] == pytest.approx(0.5111111111, abs=TOL)


def test_class_filter_is_the_raw_string_and_class_is_not_scored_when_released():
    gt = el(SAME, filter_by="class", evalby="class|color", attrs={"class": "card  big"}, style={"color": "rgb(0, 0, 0)"})
    spaced = el(SAME, attrs={"class": "card big"}, style={"color": "rgb(0, 0, 0)"})
    assert aes.filter_score(gt, spaced, "released") == -1.0  # "card  big" != "card big"
    assert aes.filter_score(gt, spaced, "corrected") == 0.0  # the same class names
    other = el(SAME, attrs={"class": "other"}, style={"color": "rgb(0, 0, 0)"})
    # released: class skipped, colour 1 (α 30) and position 1: 1; corrected: class 0 (α 66.6): 76 / 142.6
    assert both(gt, other) == pytest.approx((1.0, 76 / 142.6), abs=TOL)
    assert both(gt, other)[1] == pytest.approx(0.5329593268, abs=TOL)
    with pytest.raises(ValueError):
        aes.property_score(gt, other, "class", "released")


def test_border_top_width_reads_the_left_border_when_released():
    gt = el(SAME, evalby="border-top-width", style={"border-top-width": "4px", "border-left-width": "2px"})
    gen = el(SAME, style={"border-top-width": "3px", "border-left-width": "1px"})
    # released: 1 - 1/2 = 0.5 on the left border; corrected: 1 - 1/4 = 0.75 on the top one (α 2.1)
    assert both(gt, gen) == pytest.approx(((2.1 * 0.5 + 46) / 48.1, (2.1 * 0.75 + 46) / 48.1), abs=TOL)
    assert both(gt, gen) == pytest.approx((0.9781704782, 0.9890852391), abs=TOL)


def test_box_shadow_none_or_rgba_is_skipped_when_released():
    shadow = el(SAME, evalby="box-shadow", style={"box-shadow": "rgb(0, 0, 0) 0px 4px 8px 0px"})
    # a missing shadow: released skips the property (position only: 1); corrected scores it 0: 46 / 102.7
    assert both(shadow, el(SAME, style={"box-shadow": "none"})) == pytest.approx((1.0, 46 / 102.7), abs=TOL)
    assert math.isnan(aes.element_score(shadow, el(SAME, style={"box-shadow": "none"}), "released")[1])
    rgba = el(SAME, evalby="box-shadow", style={"box-shadow": "rgba(0, 0, 0, 0.5) 0px 4px 8px 0px"})
    half = el(SAME, style={"box-shadow": "rgba(0, 0, 0, 0.5) 0px 2px 8px 0px"})
    # corrected: (2 · 1 + 1 + 0.5 + 1 + 1) / 6 = 5.5/6 with α 56.7: (56.7 · 5.5/6 + 46) / 102.7
    assert both(rgba, half) == pytest.approx((1.0, (56.7 * 5.5 / 6 + 46) / 102.7), abs=TOL)
    assert both(rgba, half)[1] == pytest.approx(0.9539922103, abs=TOL)


def test_background_and_bottom_border_shorthands_score_nothing_when_released():
    style = {"background-image": "none", "background-color": "rgb(255, 0, 0)", "background-repeat": "repeat",
             "border-bottom-width": "2px", "border-bottom-color": "rgb(0, 0, 0)"}
    gt = el(SAME, evalby="background", style=style)
    gen = el(SAME, style={**style, "background-color": "rgb(0, 0, 255)", "border-bottom-width": "1px"})
    assert aes.split_property("background", gt, "released") == []
    # corrected: background-color ((1 - 255/256) · 2 + 1) / 3 = 0.3359375 (α 59), image and repeat 1 (α 12.6,
    # 24.5): mean α·s = (59 · 0.3359375 + 37.1) / 3, mean α = 96.1 / 3
    colour = (2 / 256 + 1) / 3
    expected = ((59 * colour + 37.1) / 3 + 46) / (96.1 / 3 + 46)
    assert both(gt, gen) == pytest.approx((1.0, expected), abs=TOL)
    assert expected == pytest.approx(0.8326369607, abs=TOL)
    for spelling in ("border-bottom", "border-down"):
        bottom = dataclasses.replace(gt, attrs={**gt.attrs, "data-evalby": spelling})
        # released: "border-bottom" and "border-down-width"/"-color" are not in the table; corrected: width
        # 1 - 1/2 = 0.5 (α 2.1) and colour 1 (α 16.9): (8.975 + 46) / (9.5 + 46)
        assert both(bottom, gen) == pytest.approx((1.0, 54.975 / 55.5), abs=TOL), spelling
    assert aes.split_property("border-down", gt, "released") == ["border-down-width", "border-down-color"]


def test_words_are_single_space_separated_when_released():
    gt = "\n".join("abcdefghij")  # ten words on ten lines
    # released: one "word" (no space), so the short-text equality applies and fails; corrected: the word
    # sets are equal, IoU 1
    assert similarity.text_sim(gt, "a b c d e f g h i j", "released") == 0.0
    assert similarity.text_sim(gt, "a b c d e f g h i j", "corrected") == 1.0
    assert similarity.words("a  b", "released") == ["a", "", "b"] and similarity.words("a  b", "corrected") == ["a", "b"]


def test_outer_html_twins_of_unchanged_elements_are_excluded_when_released():
    before = {1: '<i class="dot on"></i>', 2: '<i class="dot"></i>', 3: '<i class="dot"></i>'}
    after = {1: '<i class="dot"></i>', 2: '<i class="dot on"></i>', 3: '<i class="dot"></i>'}
    # dot 3 is unchanged; dot 1 changed but now reads like dot 3, so released excludes it as well
    assert aes.kept_keys(before, after, "released") == frozenset({1, 3})
    assert aes.kept_keys(before, after, "corrected") == frozenset({3})
    gt = [el((20 * k, 0, 20 * k + 10, 10), filter_by="class", evalby="class", html=after[k], key=k,
             attrs={"class": after[k].split('"')[1]}) for k in (1, 2, 3)]
    released = aes.score_page("after", gt, gt, aes.kept_keys(before, after, "released"), "released")
    corrected = aes.score_page("after", gt, gt, aes.kept_keys(before, after, "corrected"), "corrected")
    # each dot weighs (10 · 10) ** β: released scores one dot, corrected two
    assert (released.elements, corrected.elements) == (1, 2)
    assert (released.weight, corrected.weight) == pytest.approx((100 ** aes.BETA, 2 * 100 ** aes.BETA), abs=TOL)
