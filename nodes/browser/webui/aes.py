"""Atomic Element Similarity (AES), MageBench's WebUI metric, on element lists a browser collected.

Pure Python and numpy (scipy for the assignment): no browser here, so every formula can be pinned
by hand-made elements. ``render`` collects the elements; ``scoring`` runs the pages.

What is computed, page by page (one page before any interaction, one after each):

* Ground-truth elements are the displayed ones carrying ``data-filter-by`` whose filter property
  has a filter; after an interaction, those the interaction left unchanged (the same element with
  the same ``outerHTML``) are dropped (the paper's "excluding duplicated parts").
* Each (ground truth, generated) pair costs ``GIoU + filter − 1e-5 · descendants(generated)``; the
  filter is 0 when the ``data-filter-by`` property passes its threshold, −1 when not, −0.01 when it
  cannot be compared (an ``auto`` width, a colour that is not ``rgb``). Pairs below −1 are
  forbidden (a 1e5 penalty) and the Hungarian assignment (``linear_sum_assignment``) maximises the
  rest.
* A matched ground-truth element scores the α-weighted mean of its ``data-evalby`` properties
  (each property averaged over its sub-properties, shorthands split first) together with a
  position term of weight 46; it weighs ``area ** β``. An unmatched one weighs the same and scores 0.
* AES = Σ scores / Σ weights over all pages, on 0-100; a page whose interaction failed on the
  generated page scores 0 but keeps its weight, and a parse or render failure is 0 outright.

Where this follows the released evaluator (MageBench's ``env/utils/WebUI_utils.py``) rather than
the paper: similarities, not the errors the paper prints (1 − relative error floored at 0, colour
as the mean of max(1 − |Δ|/256, 0) over r, g, b); the text rule (case-insensitive equality below
10 words, word-set IoU from 10 words on); the children term (1e-5 times the generated element's
descendants, not 1e-3 times a difference); the position term with weight 46 the paper never
mentions; the +1 pixel convention in box areas; Σ score / Σ weight rather than a plain sum.

Where it deliberately does not copy the released code, because the released behaviour there is an
accident that silently drops or gifts score (each is a one-line difference in a helper below):

* A ground-truth element whose pair the assignment could only fill with a forbidden pair counts
  as unmatched (weight, no score). The released code drops such an element from both sums, so a
  page with a few wrong elements could score higher than with none.
* ``placeholder`` and ``value`` compare the element's placeholder attribute and current value; the
  released code compares the visible text (empty for inputs), so they always matched.
* ``src`` and ``type`` compare the element's resolved ``src`` and the live ``type`` of an input
  or button (an input without the attribute is ``text``); the released code asks for a CSS
  property of that name, which is empty on both sides.
* ``has_text`` needs at least one word of visible text; the released count of words of
  ``"".split(" ")`` is 1, so it always passed.
* ``class`` in ``data-evalby`` scores equality of the class attribute (α 66.6); released, its
  scorer is missing and the property is skipped.
* ``border-top-width`` reads the top border (released: the left one); a ``background`` shorthand
  without a gradient splits into background-color, background-image and background-repeat
  (released: into nothing); ``border-bottom`` splits like the other sides (released: only the
  misspelt ``border-down``).
* ``box-shadow``: a missing shadow on one side scores 0 and none on both scores 1 (released: the
  parse fails and the property is skipped, as is any ``rgba`` shadow).
* Words are split on any run of whitespace (released: single spaces); ``class`` compares the list
  of class names (released: the raw attribute string).
* After an interaction, an element is dropped when it itself kept its ``outerHTML``; released, any
  element whose ``outerHTML`` equals that of some unchanged element is dropped, so a changed element
  that now reads like an unchanged sibling (a carousel dot losing its highlight) was never scored.
* Task annotations that would score nothing (a ``data-filter-by`` without a filter, an unknown
  ``data-evalby`` property) are refused when the task is loaded (``task.check_annotations``);
  released, such elements or properties are skipped silently.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["ALPHA", "BETA", "CHILD_EPS", "Element", "FORBIDDEN", "IGNORED", "KIND", "PageResult",
           "POSITION_WEIGHT", "PROBE", "SHORTHANDS", "STYLE_PROPS", "aes", "colour_sim", "element_score",
           "failed_page", "filter_score", "giou", "is_filterable", "kept_keys", "match", "pixel_sim",
           "position_score", "property_score", "score_page", "scored_gt", "split_property", "text_sim",
           "weight_of"]

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


# -- similarities -----------------------------------------------------------------------------------
def _words(text: str) -> list[str]:
    return text.split()


def text_sim(gt: str, gen: str) -> float:
    """Case-insensitive equality (1 or 0) when the ground truth has under 10 words, else the IoU of
    the two word sets (case-sensitive, as released): short labels must be exact, long prose may
    be paraphrased in part."""
    words = _words(gt)
    if len(words) < 10:
        return float(gt.strip().lower() == gen.strip().lower())
    other = _words(gen)
    union = set(words) | set(other)
    return len(set(words) & set(other)) / len(union)


def _px(value: str) -> float:
    value = value.strip()
    if not value.endswith("px"):
        raise ValueError(f"{value!r} is not a pixel value")
    return float(value[:-2])


def pixel_sim(gt: str, gen: str) -> float:
    """1 − |gen − gt| / gt, 0 once the relative difference reaches 1; a 0 px ground truth needs
    exactly 0. ValueError for a value that is not ``<number>px`` (``auto``, ``normal``)."""
    x, y = _px(gt), _px(gen)
    diff = abs(y - x) / x if x != 0 else float(y != 0)
    return 1.0 - diff if diff < 1.0 else 0.0


_RGB = re.compile(r"rgba?\(\s*([-\d.]+)[\s,]+([-\d.]+)[\s,]+([-\d.]+)")


def _rgb(value: str) -> tuple[float, float, float]:
    found = _RGB.search(value)
    if found is None:
        raise ValueError(f"{value!r} is not an rgb() colour")
    return float(found[1]), float(found[2]), float(found[3])


def colour_sim(gt: str, gen: str) -> float:
    """Mean over r, g, b of max(1 − |Δ|/256, 0); alpha is ignored (as released)."""
    x, y = _rgb(gt), _rgb(gen)
    return float(np.mean([max(1.0 - abs(a - b) / 256.0, 0.0) for a, b in zip(x, y)]))


def _box_shadow(gt: str, gen: str) -> float:
    """(2 · colour + four lengths) / 6 for one shadow each; 1 when neither has one, 0 when one has."""
    if gt.strip() == "none" or gen.strip() == "none":
        return float(gt.strip() == gen.strip())

    def lengths(value: str) -> list[str]:  # the first shadow's x, y, blur, spread
        found = re.findall(r"-?[\d.]+px", _RGB.sub("", value))
        if len(found) < 4:
            raise ValueError(f"box-shadow {value!r} has no 4 lengths")
        return found[:4]

    xl, yl = lengths(gt), lengths(gen)
    return (2 * colour_sim(gt, gen) + sum(pixel_sim(a, b) for a, b in zip(xl, yl))) / 6.0


def _text_shadow(gt: str, gen: str) -> float:
    """Colour (weight 2, 0 when only one side has one) and the lengths in order (weight 1 each);
    ValueError when there is nothing to compare (``none`` on both sides)."""
    score = weight = 0.0
    if "rgb" in gt:
        weight += 2
        if "rgb" in gen:
            score += 2 * colour_sim(gt, gen)
    xl = re.findall(r"-?[\d.]+px", _RGB.sub("", gt))
    yl = re.findall(r"-?[\d.]+px", _RGB.sub("", gen))
    for a, b in zip(xl, yl):
        score += pixel_sim(a, b)
        weight += 1
    if weight == 0:
        raise ValueError("no text-shadow to compare")
    return score / weight


def _background_size(gt: str, gen: str) -> float:
    """Mean pixel similarity of width and height when both are ``W H`` in px, else equality."""
    x, y = gt.split(), gen.split()
    if len(x) == len(y) == 2 and all(v.endswith("px") for v in x + y):
        return (pixel_sim(x[0], y[0]) + pixel_sim(x[1], y[1])) / 2
    return float(gt.strip() == gen.strip())


def _linear_gradient(gt: str, gen: str) -> float:
    """Mean colour similarity of the gradients' colour stops in order; ValueError without stops."""
    x = _RGB.findall(gt) if "gradient" in gt else []
    y = _RGB.findall(gen) if "gradient" in gen else []
    pairs = list(zip(x, y))
    if not pairs:
        raise ValueError("no gradient colours to compare")
    return float(np.mean([colour_sim("rgb({},{},{})".format(*a), "rgb({},{},{})".format(*b)) for a, b in pairs]))


def _has_text(_gt: str, gen: str) -> float:
    return float(len(_words(gen)) >= 1)


_SIMILARITY: dict[str, Callable[[str, str], float]] = {
    "text": text_sim, "attr-text": text_sim, "has_text": _has_text, "colour": colour_sim, "pixel": pixel_sim,
    "choice": lambda a, b: float(a == b), "class": lambda a, b: float(a.split() == b.split()),
    "text-shadow": _text_shadow, "box-shadow": _box_shadow, "background-size": _background_size,
    "linear-gradient": _linear_gradient,
}


def _values(gt: Element, gen: Element, prop: str) -> tuple[str, str]:
    if prop in ("text", "has_text"):
        return gt.text, gen.text
    return gt.value_of(prop), gen.value_of(prop)


def property_score(gt: Element, gen: Element, prop: str) -> float:
    """Similarity in [0, 1] of one longhand property; ValueError/KeyError when not comparable."""
    _, kind = KIND[prop]
    return _SIMILARITY[kind](*_values(gt, gen, prop))


def filter_score(gt: Element, gen: Element) -> float:
    """0 when ``gen`` passes ``gt``'s ``data-filter-by`` test, −1 when it fails it, −0.01 when the
    property cannot be compared. Thresholds: texts > 0.6, colours and pixels > 0.01, the rest exact."""
    prop = gt.filter_by
    assert prop is not None and prop in KIND
    kind = KIND[prop][1]
    try:
        sim = property_score(gt, gen, prop)
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
def split_property(prop: str, gt: Element) -> list[str]:
    """The longhands a ``data-evalby`` entry is scored on (shorthands split; see the module notes)."""
    if prop == "background":
        if "gradient" in gt.style.get("background-image", ""):
            return ["linear-gradient", "background-color", "background-repeat"]
        return ["background-color", "background-image", "background-repeat"]
    if prop == "border-radius":
        return [f"border-{c}-radius" for c in ("bottom-left", "bottom-right", "top-left", "top-right")]
    if prop == "border":
        return [f"border-{s}-width" for s in ("bottom", "top", "left", "right")]
    if prop in ("border-top", "border-bottom", "border-down", "border-left", "border-right"):
        side = "bottom" if prop == "border-down" else prop.removeprefix("border-")
        return [f"border-{side}-width", f"border-{side}-color"]
    if prop == "outline":
        return ["outline-style", "outline-width", "outline-color"]
    return [prop]


def element_score(gt: Element, gen: Element) -> tuple[float, float]:
    """(score in [0, 1], attribute part in [0, 1] or NaN when no property was comparable).

    score = (Σ_props mean_sub(α·s) + 46 · position) / (Σ_props mean_sub(α) + 46), where a property's
    sub-properties that cannot be compared are left out of its means."""
    total = weight = 0.0
    for prop in gt.evalby:
        if prop in IGNORED:
            continue
        done = [(ALPHA[p], property_score_or_none(gt, gen, p)) for p in split_property(prop, gt) if p in KIND]
        done = [(a, s) for a, s in done if s is not None]
        if done:
            total += sum(a * s for a, s in done) / len(done)
            weight += sum(a for a, _ in done) / len(done)
    attribute = total / weight if weight else math.nan
    return (total + POSITION_WEIGHT * position_score(gt.box, gen.box)) / (weight + POSITION_WEIGHT), attribute


def property_score_or_none(gt: Element, gen: Element, prop: str) -> float | None:
    try:
        return property_score(gt, gen, prop)
    except (ValueError, KeyError):
        return None


def match(gt: Sequence[Element], gen: Sequence[Element]) -> list[tuple[int, int]]:
    """Pairs (gt index, gen index) of the Hungarian assignment maximising GIoU + filter −
    1e-5 · descendants, forbidden pairs (below −1) left out."""
    if not gt or not gen:
        return []
    cost = np.empty((len(gt), len(gen)))
    for i, t in enumerate(gt):
        for j, g in enumerate(gen):
            value = giou(t.box, g.box) + filter_score(t, g) - CHILD_EPS * g.descendants
            cost[i, j] = -value if value >= FORBIDDEN else PENALTY
    rows, cols = linear_sum_assignment(cost)
    return [(int(i), int(j)) for i, j in zip(rows, cols) if cost[i, j] < PENALTY]


@dataclass(slots=True)
class PageResult:
    """One static page's share of AES; ``status`` is ``ok``, ``interaction`` (failed on the generated
    page: 0 score, full weight) or ``render`` (the generated page could not be rendered)."""

    name: str
    score: float = 0.0
    weight: float = 0.0
    elements: int = 0
    matched: int = 0
    unmatched: int = 0
    attribute_losses: int = 0
    status: str = "ok"
    error: str = ""

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.weight if self.weight > 0 else 0.0


def scored_gt(gt_elements: Iterable[Element], excluded: set[int] | frozenset[int] = frozenset()) -> list[Element]:
    """The ground-truth elements a page scores: atomic (``data-filter-by`` with a filter), displayed
    (``render`` only collects those), and not unchanged by the last interaction."""
    return [e for e in gt_elements if is_filterable(e.filter_by) and e.key not in excluded]


def score_page(name: str, gt_elements: Sequence[Element], gen_elements: Sequence[Element],
               excluded: set[int] | frozenset[int] = frozenset()) -> PageResult:
    """Score one static page: match, then Σ score · weight over matched ground-truth elements and
    Σ weight over all scored ones (unmatched: weight, no score)."""
    gt = scored_gt(gt_elements, excluded)
    result = PageResult(name, elements=len(gt))
    matched = dict(match(gt, gen_elements))
    for i, t in enumerate(gt):
        w = weight_of(t)
        result.weight += w
        if i not in matched:
            result.unmatched += 1
            continue
        score, attribute = element_score(t, gen_elements[matched[i]])
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


def kept_keys(before: Mapping[int, str], after: Mapping[int, str]) -> frozenset[int]:
    """The keys of the elements an interaction left as they were (same element, same ``outerHTML``):
    these ground-truth elements are excluded from the page after it."""
    return frozenset(key for key, html in before.items() if after.get(key) == html)


def aes(pages: Iterable[PageResult]) -> float:
    """Σ score / Σ weight over all pages, on 0-100 (0 when nothing weighs anything)."""
    pages = list(pages)
    weight = sum(p.weight for p in pages)
    return 100.0 * sum(p.score for p in pages) / weight if weight > 0 else 0.0
