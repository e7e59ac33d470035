"""Atomic Element Similarity (AES), MageBench's WebUI metric, on element lists a browser collected.

Pure Python and numpy (scipy for the assignment): no browser here, so every formula can be pinned
by hand-made elements. ``render`` collects the elements; ``scoring`` runs the pages.

What is computed, page by page (one page before any interaction, one after each):

* Ground-truth elements are the displayed ones carrying ``data-filter-by`` whose filter property
  has a filter; after an interaction, those the interaction left unchanged are dropped (the
  paper's "excluding duplicated parts"; what "unchanged" means depends on the rules below).
* Each (ground truth, generated) pair costs ``GIoU + filter − 1e-5 · descendants(generated)``; the
  filter is 0 when the ``data-filter-by`` property passes its threshold, −1 when not, −0.01 when it
  cannot be compared (an ``auto`` width, a colour that is not ``rgb``). Pairs below −1 are
  forbidden (a 1e5 penalty) and the Hungarian assignment (``linear_sum_assignment``) maximises the
  rest.
* A matched ground-truth element scores the α-weighted mean of its ``data-evalby`` properties
  (each property averaged over its sub-properties, shorthands split first) together with a
  position term of weight 46; it weighs ``area ** β``. An unmatched one weighs the same and scores 0
  (released, one kind of unmatched element weighs nothing: see below).
* AES = Σ scores / Σ weights over all pages, on 0-100; a page whose interaction failed on the
  generated page scores 0 but keeps its weight, and a parse or render failure is 0 outright.

Where this follows the released evaluator (MageBench's ``env/utils/WebUI_utils.py``) rather than
the paper, in both rule sets: similarities, not the errors the paper prints (1 − relative error
floored at 0, colour as the mean of max(1 − |Δ|/256, 0) over r, g, b); the text rule
(case-insensitive equality below 10 words, word-set IoU from 10 words on); the children term (1e-5
times the generated element's descendants, not 1e-3 times a difference); the position term with
weight 46 the paper never mentions; the +1 pixel convention in box areas; Σ score / Σ weight rather
than a plain sum.

Rules (``rules``, every helper below takes it). ``released``, the default, reproduces the released
evaluator, accidents included, because MageBench's Table 1 was computed with it and a number meant
to sit beside that table has to be computed the same way. ``corrected`` fixes the accidents, each
of which silently drops or gifts score, so it is the better measure of a page but is not comparable
with the paper. Where they differ (released first, then corrected):

* A ground-truth element that the assignment could only give a forbidden pair: released, it is
  dropped from both sums (the evaluator keeps only allowed pairs and counts as unmatched only the
  rows the assignment left out), so a page with a few wrong elements can score higher than with
  none; corrected, it is unmatched (weight, no score).
* ``placeholder`` and ``value``: released, the visible texts are compared (empty for inputs, so
  they always match); corrected, the placeholder attribute and the live value.
* ``src`` and ``type``: released, a CSS property of that name is asked for, empty on both sides,
  so they always match; corrected, the resolved ``src`` and the live ``type`` of an input or button.
* ``has_text``: released, the word count of ``"".split(" ")`` is 1, so it always passes;
  corrected, it needs at least one word of visible text.
* ``class``: released, the filter compares the raw attribute strings and ``class`` in
  ``data-evalby`` has no scorer and is skipped; corrected, both compare the list of class names
  (α 66.6 in the score).
* ``border-top-width``: released reads the left border (a typo in the evaluator's table);
  corrected, the top one.
* Shorthands: released, ``background`` without a ``linear-gradient`` splits into nothing, and
  ``border-bottom`` and the misspelt ``border-down`` into longhands the table lacks, so all three
  score nothing; corrected, ``background`` splits into background-color, background-image and
  background-repeat and both bottom spellings into the bottom border's width and colour.
* ``box-shadow``: released, only one opaque ``rgb(...)`` shadow with four lengths parses; ``none``,
  ``rgba``, several shadows or ``inset`` on either side skip the property, so a missing shadow
  costs nothing; corrected, ``none`` against ``none`` is 1, against a shadow 0, and any first
  shadow is compared.
* Words (the 10-word rule, the IoU, ``has_text``): released, split on single spaces; corrected, on
  any run of whitespace (a line break separates words).
* After an interaction: released, every element whose ``outerHTML`` equals that of an unchanged
  element is dropped, so a changed element that now reads like an unchanged sibling (a carousel
  dot losing its highlight) is never scored; corrected, only the elements that themselves kept
  their ``outerHTML``.

Not a rule: task annotations that would score nothing (a ``data-filter-by`` without a filter, an
unknown ``data-evalby`` property) are refused when one of our task folders is loaded
(``task.check_annotations``), under both rule sets, because the refusal changes no score: it only
stops an author from writing an annotation that the released evaluator would skip silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

from nodes.browser.webui.similarity import (RULES, Rules, background_size, box_shadow, colour_sim, has_text,
                                            linear_gradient, pixel_sim, text_shadow, text_sim)

__all__ = ["ALPHA", "BETA", "CHILD_EPS", "Element", "FORBIDDEN", "IGNORED", "KIND", "PageResult",
           "POSITION_WEIGHT", "PROBE", "RULES", "Rules", "SHORTHANDS", "STYLE_PROPS", "aes", "assign", "colour_sim",
           "element_score", "failed_page", "filter_score", "giou", "is_filterable", "kept_keys", "match",
           "pixel_sim", "position_score", "property_score", "score_page", "scored_gt", "split_property",
           "text_sim", "weight_of"]

BETA = 0.8987018465995789  # element weight = area ** BETA (the released evaluator's searched value)
POSITION_WEIGHT = 46.0  # the weight of the GIoU position term in an element's score
CHILD_EPS = 1e-5  # cost per descendant of the generated element: prefer the innermost of nested boxes
FORBIDDEN = -1.0  # a pair whose GIoU + filter − children term is below this is never matched
PENALTY = 1e5  # the cost that forbids a pair
UNCOMPARABLE_FILTER = -0.01  # the filter of a pair whose filter property could not be compared

SIDES = ("top", "right", "bottom", "left")
CORNERS = ("top-left", "top-right", "bottom-left", "bottom-right")

# property -> (α, kind). Kinds: text (visible text), attr-text (an attribute compared as text),
# has_text, colour, pixel, choice (exact equality), class, and the compound ones below.
KIND: dict[str, tuple[float, str]] = {
    "has_text": (44.0, "has_text"),
    "text": (6.8, "text"), "placeholder": (6.8, "attr-text"), "value": (6.8, "attr-text"),
    "text-shadow": (83.0, "text-shadow"),
    "color": (30.0, "colour"), "background-color": (59.0, "colour"),
    "background-image": (12.6, "choice"), "src": (12.6, "choice"),
    "background-repeat": (24.5, "choice"), "background-size": (14.3, "background-size"),
    "linear-gradient": (18.0, "linear-gradient"), "type": (18.9, "choice"),
    **{f"border-{s}-color": (16.9, "colour") for s in SIDES},
    **{f"border-{s}-width": (2.1, "pixel") for s in SIDES},
    **{f"border-{s}-style": (79.2, "choice") for s in SIDES},
    **{f"border-{c}-radius": (100.0, "pixel") for c in CORNERS},
    "outline-style": (79.2, "choice"), "outline-width": (2.1, "choice"), "outline-color": (16.9, "colour"),
    "font-family": (94.6, "choice"), "font-style": (94.6, "choice"), "font-size": (9.8, "pixel"),
    "font-weight": (2.1, "choice"), "height": (31.92, "pixel"), "width": (31.92, "pixel"),
    "tab-size": (50.8, "choice"), "class": (66.6, "class"), "letter-spacing": (67.0, "pixel"),
    "box-shadow": (56.7, "box-shadow"), "display": (51.0, "choice"),
}
ALPHA: dict[str, float] = {name: alpha for name, (alpha, _) in KIND.items()}
# Properties annotators may write in data-evalby that the metric ignores on purpose (layout).
IGNORED = frozenset({"padding", "margin", "left", "position", "transition", "top", "z-index", "flex-wrap",
                     "justify-content", "text-transform", "transform", "cursor", "align-items", "overflow",
                     *(f"{box}-{s}" for box in ("margin", "padding") for s in SIDES)})
# Properties read from attributes (or the live value), not from the computed style.
ATTRIBUTE_PROPS = frozenset({"class", "src", "type", "placeholder", "value"})
# The computed-style longhands ``render`` collects for every element: what KIND reads.
STYLE_PROPS: tuple[str, ...] = tuple(sorted(
    {p for p, (_, kind) in KIND.items() if p not in ATTRIBUTE_PROPS and kind not in ("text", "has_text")
     and p != "linear-gradient"} | {"background-image"}))
PROBE = ("class", "data-filter-by", "data-evalby", "src", "type", "placeholder", "value")  # attributes collected
# data-evalby entries that split_property turns into longhands
SHORTHANDS = frozenset({"background", "border", "border-radius", "outline", "border-top", "border-right",
                        "border-bottom", "border-left", "border-down"})
_FILTERABLE = frozenset({"text", "attr-text", "has_text", "colour", "pixel", "choice", "class"})


@dataclass(frozen=True, slots=True)
class Element:
    """One displayed element of a rendered page, as ``render`` collects it.

    ``box`` is (x1, y1, x2, y2) in document pixels; ``attrs`` holds the attributes of ``PROBE``
    (``src`` resolved, ``value`` the live value); ``style`` the computed values of ``STYLE_PROPS``;
    ``key`` identifies the element within its document across interactions."""

    box: tuple[float, float, float, float]
    tag: str = "div"
    text: str = ""
    attrs: Mapping[str, str] = field(default_factory=dict)
    style: Mapping[str, str] = field(default_factory=dict)
    descendants: int = 0
    outer_html: str = ""
    key: int = -1

    @property
    def area(self) -> float:
        """The box's area (no +1 convention: this is what the weight uses)."""
        return (self.box[2] - self.box[0]) * (self.box[3] - self.box[1])

    @property
    def filter_by(self) -> str | None:
        value = self.attrs.get("data-filter-by")
        return value.strip() if value is not None else None

    @property
    def evalby(self) -> list[str]:
        return [p.strip() for p in self.attrs.get("data-evalby", "").split("|") if p.strip()]

    def value_of(self, prop: str) -> str:
        """The value a property is compared on; KeyError when it was not collected."""
        if prop in ATTRIBUTE_PROPS:
            return self.attrs.get(prop) or ""
        if prop == "linear-gradient":
            return self.style["background-image"]
        return self.style[prop]


_SIMILARITY: dict[str, Callable[[str, str], float]] = {
    "colour": colour_sim, "pixel": pixel_sim, "choice": lambda a, b: float(a == b), "text-shadow": text_shadow,
    "background-size": background_size, "linear-gradient": linear_gradient,
}


def _values(gt: Element, gen: Element, prop: str, rules: Rules) -> tuple[str, str]:
    """The two strings a property compares. Released, ``placeholder`` and ``value`` compare the
    visible texts, ``src`` and ``type`` a CSS property of that name (empty on both sides) and
    ``border-top-width`` the left border, as the evaluator's table does."""
    if prop in ("text", "has_text"):
        return gt.text, gen.text
    if rules == "released":
        if prop in ("placeholder", "value"):
            return gt.text, gen.text
        if prop in ("src", "type"):
            return "", ""
        if prop == "border-top-width":
            prop = "border-left-width"
    return gt.value_of(prop), gen.value_of(prop)


def _compare(gt: Element, gen: Element, prop: str, rules: Rules) -> float:
    """The similarity of one longhand, as its filter sees it (ValueError/KeyError: not comparable)."""
    kind = KIND[prop][1]
    a, b = _values(gt, gen, prop, rules)
    if kind in ("text", "attr-text"):
        return text_sim(a, b, rules)
    if kind == "has_text":
        return has_text(a, b, rules)
    if kind == "box-shadow":
        return box_shadow(a, b, rules)
    if kind == "class":  # released: the raw attribute; corrected: the list of class names
        return float(a == b) if rules == "released" else float(a.split() == b.split())
    return _SIMILARITY[kind](a, b)


def property_score(gt: Element, gen: Element, prop: str, rules: Rules = "released") -> float:
    """Similarity in [0, 1] of one longhand property; ValueError/KeyError when not comparable
    (released, ``class`` always: the evaluator has a filter for it but no scorer)."""
    if rules == "released" and KIND[prop][1] == "class":
        raise ValueError("the released evaluator has no scorer for class")
    return _compare(gt, gen, prop, rules)


def filter_score(gt: Element, gen: Element, rules: Rules = "released") -> float:
    """0 when ``gen`` passes ``gt``'s ``data-filter-by`` test, −1 when it fails it, −0.01 when the
    property cannot be compared. Thresholds: texts > 0.6, colours and pixels > 0.01, the rest exact."""
    prop = gt.filter_by
    assert prop is not None and prop in KIND
    kind = KIND[prop][1]
    try:
        sim = _compare(gt, gen, prop, rules)
    except (ValueError, KeyError):
        return UNCOMPARABLE_FILTER
    if kind in ("text", "attr-text"):
        passed = sim > 0.6
    elif kind in ("colour", "pixel"):
        passed = sim > 0.01
    else:  # choice, class, has_text: all or nothing
        passed = sim >= 1.0
    return 0.0 if passed else -1.0


def is_filterable(prop: str | None) -> bool:
    """Whether a ``data-filter-by`` property has a filter (elements filtered by others are not scored)."""
    return prop is not None and prop in KIND and KIND[prop][1] in _FILTERABLE


# -- boxes ------------------------------------------------------------------------------------------
def _area1(x1: float, y1: float, x2: float, y2: float) -> float:
    return (x2 - x1 + 1) * (y2 - y1 + 1)  # the released +1 pixel convention


def _overlap(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float, float]:
    """Intersection, area of a, area of b, area of the enclosing box (all with +1)."""
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + 1) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
    enclosing = _area1(min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))
    return inter, _area1(*a), _area1(*b), enclosing


def giou(a: Sequence[float], b: Sequence[float]) -> float:
    """Generalised IoU of two (x1, y1, x2, y2) boxes in document pixels, in [−1, 1]."""
    inter, area_a, area_b, enclosing = _overlap(a, b)
    union = area_a + area_b - inter
    return inter / union - (enclosing - union) / enclosing


def position_score(a: Sequence[float], b: Sequence[float]) -> float:
    """The position term: 0.5 + 0.5 · intersection / smaller area when the boxes overlap (a box
    inside the other counts fully), else (GIoU + 1) / 2, which is below 0.5 and falls with distance."""
    inter, area_a, area_b, _ = _overlap(a, b)
    if inter > 0:
        return 0.5 + 0.5 * inter / min(area_a, area_b)
    return (giou(a, b) + 1) / 2


def weight_of(element: Element) -> float:
    """``area ** β``: big elements matter more, sub-linearly."""
    return float(element.area) ** BETA


# -- one page ---------------------------------------------------------------------------------------
def split_property(prop: str, gt: Element, rules: Rules = "released") -> list[str]:
    """The longhands a ``data-evalby`` entry is scored on (shorthands split; see the module notes).
    A longhand not in ``KIND`` (released: ``border-down-width``) is skipped by the scorer."""
    if prop == "background":
        if rules == "released":
            return ["linear-gradient", "background-color", "background-repeat"] \
                if "linear-gradient" in gt.style.get("background-image", "") else []
        if "gradient" in gt.style.get("background-image", ""):
            return ["linear-gradient", "background-color", "background-repeat"]
        return ["background-color", "background-image", "background-repeat"]
    if prop == "border-radius":
        return [f"border-{c}-radius" for c in ("bottom-left", "bottom-right", "top-left", "top-right")]
    if prop == "border":
        return [f"border-{s}-width" for s in ("bottom", "top", "left", "right")]
    if rules == "released":
        if prop in ("border-top", "border-down", "border-left", "border-right"):
            return [f"{prop}-width", f"{prop}-color"]
    elif prop in ("border-top", "border-bottom", "border-down", "border-left", "border-right"):
        side = "bottom" if prop == "border-down" else prop.removeprefix("border-")
        return [f"border-{side}-width", f"border-{side}-color"]
    if prop == "outline":
        return ["outline-style", "outline-width", "outline-color"]
    return [prop]


def element_score(gt: Element, gen: Element, rules: Rules = "released") -> tuple[float, float]:
    """(score in [0, 1], attribute part in [0, 1] or NaN when no property was comparable).

    score = (Σ_props mean_sub(α·s) + 46 · position) / (Σ_props mean_sub(α) + 46), where a property's
    sub-properties that cannot be compared are left out of its means."""
    total = weight = 0.0
    for prop in gt.evalby:
        if prop in IGNORED:
            continue
        done = [(ALPHA[p], property_score_or_none(gt, gen, p, rules)) for p in split_property(prop, gt, rules)
                if p in KIND]
        done = [(a, s) for a, s in done if s is not None]
        if done:
            total += sum(a * s for a, s in done) / len(done)
            weight += sum(a for a, _ in done) / len(done)
    attribute = total / weight if weight else math.nan
    return (total + POSITION_WEIGHT * position_score(gt.box, gen.box)) / (weight + POSITION_WEIGHT), attribute


def property_score_or_none(gt: Element, gen: Element, prop: str, rules: Rules = "released") -> float | None:
    try:
        return property_score(gt, gen, prop, rules)
    except (ValueError, KeyError):
        return None


def assign(gt: Sequence[Element], gen: Sequence[Element],
           rules: Rules = "released") -> tuple[list[tuple[int, int]], frozenset[int]]:
    """The Hungarian assignment maximising GIoU + filter − 1e-5 · descendants: the allowed pairs
    (gt index, gen index), and the ground-truth indices it could only give a forbidden pair (below −1)."""
    if not gt or not gen:
        return [], frozenset()
    cost = np.empty((len(gt), len(gen)))
    for i, t in enumerate(gt):
        for j, g in enumerate(gen):
            value = giou(t.box, g.box) + filter_score(t, g, rules) - CHILD_EPS * g.descendants
            cost[i, j] = -value if value >= FORBIDDEN else PENALTY
    rows, cols = linear_sum_assignment(cost)
    pairs = [(int(i), int(j)) for i, j in zip(rows, cols) if cost[i, j] < PENALTY]
    return pairs, frozenset(int(i) for i, j in zip(rows, cols) if cost[i, j] >= PENALTY)


def match(gt: Sequence[Element], gen: Sequence[Element], rules: Rules = "released") -> list[tuple[int, int]]:
    """The allowed pairs (gt index, gen index) of ``assign``."""
    return assign(gt, gen, rules)[0]


@dataclass(slots=True)
class PageResult:
    """One static page's share of AES; ``status`` is ``ok``, ``interaction`` (failed on the generated
    page: 0 score, full weight) or ``render`` (the generated page could not be rendered).
    ``dropped`` counts the ground-truth elements left out of both sums (released rules only)."""

    name: str
    score: float = 0.0
    weight: float = 0.0
    elements: int = 0
    matched: int = 0
    unmatched: int = 0
    attribute_losses: int = 0
    status: str = "ok"
    error: str = ""
    dropped: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.weight if self.weight > 0 else 0.0


def scored_gt(gt_elements: Iterable[Element], excluded: set[int] | frozenset[int] = frozenset()) -> list[Element]:
    """The ground-truth elements a page scores: atomic (``data-filter-by`` with a filter), displayed
    (``render`` only collects those), and not excluded after the last interaction (``kept_keys``)."""
    return [e for e in gt_elements if is_filterable(e.filter_by) and e.key not in excluded]


def score_page(name: str, gt_elements: Sequence[Element], gen_elements: Sequence[Element],
               excluded: set[int] | frozenset[int] = frozenset(), rules: Rules = "released") -> PageResult:
    """Score one static page: match, then Σ score · weight over matched ground-truth elements and
    Σ weight over the scored ones (unmatched: weight, no score). An element the assignment could
    only give a forbidden pair is unmatched when corrected and dropped from both sums when released."""
    gt = scored_gt(gt_elements, excluded)
    result = PageResult(name, elements=len(gt))
    pairs, forbidden = assign(gt, gen_elements, rules)
    matched = dict(pairs)
    for i, t in enumerate(gt):
        if rules == "released" and i in forbidden:
            result.dropped += 1
            continue
        w = weight_of(t)
        result.weight += w
        if i not in matched:
            result.unmatched += 1
            continue
        score, attribute = element_score(t, gen_elements[matched[i]], rules)
        result.score += score * w
        result.matched += 1
        if not math.isnan(attribute) and attribute < 1.0 - 1e-9:
            result.attribute_losses += 1
    return result


def failed_page(name: str, gt_elements: Sequence[Element], excluded: set[int] | frozenset[int], status: str,
                error: str) -> PageResult:
    """A page the generated side could not reach: 0 score, the weight its ground truth would have."""
    gt = scored_gt(gt_elements, excluded)
    return PageResult(name, 0.0, sum(weight_of(t) for t in gt), len(gt), status=status, error=error)


def kept_keys(before: Mapping[int, str], after: Mapping[int, str], rules: Rules = "released") -> frozenset[int]:
    """The keys of the elements excluded from the page after an interaction. Corrected: those the
    interaction left as they were (same element, same ``outerHTML``). Released: also every element
    whose ``outerHTML`` now reads like one of those, as the evaluator compares the markup only."""
    kept = frozenset(key for key, html in before.items() if after.get(key) == html)
    if rules == "corrected":
        return kept
    markup = {after[key] for key in kept}
    return kept | frozenset(key for key, html in after.items() if html in markup)


def aes(pages: Iterable[PageResult]) -> float:
    """Σ score / Σ weight over all pages, on 0-100 (0 when nothing weighs anything)."""
    pages = list(pages)
    weight = sum(p.weight for p in pages)
    return 100.0 * sum(p.score for p in pages) / weight if weight > 0 else 0.0
