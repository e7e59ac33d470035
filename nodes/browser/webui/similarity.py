"""The attribute similarities AES is built from, on the strings a browser reports (no elements here).

Each takes the ground truth's value first and the generated page's second and answers a number in
[0, 1]; a ValueError means "not comparable", which leaves the property out of an element's score
(or gives a filter its −0.01). Where MageBench's released evaluator and our corrected rules
disagree (see ``aes``'s module notes) the function takes ``rules``: ``released`` reproduces the
evaluator, accidents included, so our numbers sit beside MageBench's Table 1; ``corrected`` is
what the evaluator evidently meant.
"""

from __future__ import annotations

import re
from typing import Literal

import numpy as np

__all__ = ["RULES", "Rules", "background_size", "box_shadow", "colour_sim", "has_text", "linear_gradient",
           "pixel_sim", "text_shadow", "text_sim", "words"]

Rules = Literal["released", "corrected"]
RULES: tuple[Rules, ...] = ("released", "corrected")


def words(text: str, rules: Rules = "released") -> list[str]:
    """The words of a text. Released: the stripped text split on single spaces, so ``"a  b"`` is
    three words, ``"a\\nb"`` one and an empty text one (empty) word; corrected: runs of whitespace."""
    return text.strip().split(" ") if rules == "released" else text.split()


def text_sim(gt: str, gen: str, rules: Rules = "released") -> float:
    """Case-insensitive equality (1 or 0) when the ground truth has under 10 words, else the IoU of
    the two word sets (case-sensitive, as released): short labels must be exact, long prose may
    be paraphrased in part."""
    mine = words(gt, rules)
    if len(mine) < 10:
        return float(gt.strip().lower() == gen.strip().lower())
    other = words(gen, rules)
    return len(set(mine) & set(other)) / len(set(mine) | set(other))


def has_text(_gt: str, gen: str, rules: Rules = "released") -> float:
    """Whether the generated element shows at least one word. Released, the count of
    ``"".split(" ")`` is 1, so every element passes; corrected, an empty element fails."""
    return float(len(words(gen, rules)) >= 1)


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


RGB = re.compile(r"rgba?\(\s*([-\d.]+)[\s,]+([-\d.]+)[\s,]+([-\d.]+)")


def _rgb(value: str) -> tuple[float, float, float]:
    found = RGB.search(value)
    if found is None:
        raise ValueError(f"{value!r} is not an rgb() colour")
    return float(found[1]), float(found[2]), float(found[3])


def colour_sim(gt: str, gen: str) -> float:
    """Mean over r, g, b of max(1 − |Δ|/256, 0); alpha is ignored (as released)."""
    x, y = _rgb(gt), _rgb(gen)
    return float(np.mean([max(1.0 - abs(a - b) / 256.0, 0.0) for a, b in zip(x, y)]))


# What the released parser understands: one opaque shadow, colour first, four lengths (Chrome's form).
_RELEASED_SHADOW = re.compile(r"rgb\([-\d.]+, [-\d.]+, [-\d.]+\)( -?[\d.]+px){4}")


def box_shadow(gt: str, gen: str, rules: Rules = "released") -> float:
    """(2 · colour + x, y, blur, spread) / 6 for the first shadow of each side.

    Corrected: ``none`` on both sides is 1 and on one side 0, and an ``rgba`` shadow is compared
    like any other. Released, the evaluator's parser only reads a single opaque ``rgb(...)`` shadow
    with four lengths; anything else (``none``, ``rgba``, two shadows, ``inset``) is not comparable
    and the property is skipped, so a missing shadow costs nothing."""
    if rules == "released":
        for value in (gt, gen):
            if not _RELEASED_SHADOW.fullmatch(value.strip()):
                raise ValueError(f"box-shadow {value!r} is not one rgb() shadow with four lengths")
    elif gt.strip() == "none" or gen.strip() == "none":
        return float(gt.strip() == gen.strip())

    def lengths(value: str) -> list[str]:
        found = re.findall(r"-?[\d.]+px", RGB.sub("", value))
        if len(found) < 4:
            raise ValueError(f"box-shadow {value!r} has no 4 lengths")
        return found[:4]

    xl, yl = lengths(gt), lengths(gen)
    return (2 * colour_sim(gt, gen) + sum(pixel_sim(a, b) for a, b in zip(xl, yl))) / 6.0


def text_shadow(gt: str, gen: str) -> float:
    """Colour (weight 2, 0 when only one side has one) and the lengths in order (weight 1 each);
    ValueError when there is nothing to compare (``none`` on both sides)."""
    score = weight = 0.0
    if "rgb" in gt:
        weight += 2
        if "rgb" in gen:
            score += 2 * colour_sim(gt, gen)
    xl = re.findall(r"-?[\d.]+px", RGB.sub("", gt))
    yl = re.findall(r"-?[\d.]+px", RGB.sub("", gen))
    for a, b in zip(xl, yl):
        score += pixel_sim(a, b)
        weight += 1
    if weight == 0:
        raise ValueError("no text-shadow to compare")
    return score / weight


def background_size(gt: str, gen: str) -> float:
    """Mean pixel similarity of width and height when both are ``W H`` in px, else equality."""
    x, y = gt.split(), gen.split()
    if len(x) == len(y) == 2 and all(v.endswith("px") for v in x + y):
        return (pixel_sim(x[0], y[0]) + pixel_sim(x[1], y[1])) / 2
    return float(gt.strip() == gen.strip())


def linear_gradient(gt: str, gen: str) -> float:
    """Mean colour similarity of the gradients' colour stops in order; ValueError without stops."""
    x = RGB.findall(gt) if "gradient" in gt else []
    y = RGB.findall(gen) if "gradient" in gen else []
    pairs = list(zip(x, y))
    if not pairs:
        raise ValueError("no gradient colours to compare")
    return float(np.mean([colour_sim("rgb({},{},{})".format(*a), "rgb({},{},{})".format(*b)) for a, b in pairs]))
