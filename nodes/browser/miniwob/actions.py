"""MiniWoB's own actions, beside the browser node's element actions (``click [12]``, ``type [3]
[text]``, ``press [Enter]``...): a click at a point, a drag from one point to another, and typing
into whatever has the focus (MiniWoB's CLICK_COORDS, DRAG_COORDS and TYPE_TEXT; coordinates are
CSS pixels of the page, whose task area is the top-left 160x210 for MiniWoB tasks).

    click_xy [80] [120]        drag [30] [90] [110] [140]        type_text [hello]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MINIWOB_ACTIONS", "MiniwobAction", "parse_miniwob_action"]

MINIWOB_ACTIONS: tuple[str, ...] = ("click_xy", "drag", "type_text")

_NUM = r"\[\s*(-?\d+(?:\.\d+)?)\s*\]"
_PATTERNS = {
    "click_xy": re.compile(rf"click_xy ?{_NUM} ?{_NUM}\s*$", re.S),
    "drag": re.compile(rf"drag ?{_NUM} ?{_NUM} ?{_NUM} ?{_NUM}\s*$", re.S),
    "type_text": re.compile(r"type_text ?\[(.*)\]\s*$", re.S),
}
_USAGE = {"click_xy": "click_xy [x] [y]", "drag": "drag [x1] [y1] [x2] [y2]", "type_text": "type_text [text]"}


@dataclass(frozen=True, slots=True)
class MiniwobAction:
    """A parsed MiniWoB action: ``points`` the click point or the drag's start and end, ``text`` what to type."""

    name: str
    points: tuple[tuple[float, float], ...] = ()
    text: str = ""


def parse_miniwob_action(raw: object, viewport: tuple[int, int]) -> MiniwobAction | None:
    """The MiniWoB action ``raw`` denotes; None when it is not one of MINIWOB_ACTIONS (then it is the
    browser node's to parse). Raises ValueError, meant for the agent, for a malformed one or a
    point outside the page."""
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    name = text.split("[", 1)[0].strip()
    if name not in _PATTERNS:
        return None
    found = _PATTERNS[name].match(text)
    if found is None:
        raise ValueError(f"malformed action {raw[:80]!r}; write it as {_USAGE[name]}")
    if name == "type_text":
        if not found.group(1):
            raise ValueError("type_text needs the text to type: type_text [text]")
        return MiniwobAction(name, text=found.group(1))
    numbers = [float(g) for g in found.groups()]
    points = tuple((numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2))
    width, height = viewport
    for x, y in points:
        if not (0 <= x < width and 0 <= y < height):
            raise ValueError(f"point ({x:g}, {y:g}) is outside the page (0..{width - 1}, 0..{height - 1})")
    return MiniwobAction(name, points=points)
