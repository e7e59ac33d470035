"""Gold actions that name their element by a locator instead of a Set-of-Marks id.

A task's ``gold_actions`` are VWA action strings. An element action (``click``, ``hover``, ``type``)
may name its element either by the id of the current observation (``click [12]``), as an agent
does, or by a locator the environment resolves on the live page when the ``oracle`` is asked, so
that a task author's sequence survives any change of numbering::

    click [css=a[href*='sCategory=3']]      a CSS selector (Playwright's css= engine)
    click [text=Bicycles]                   Playwright's text engine (smallest element with that text)
    type [label=Title] [Nice lamp] [0]      the form control labelled "Title" (exact label text)
    type [placeholder=Search] [vase] [1]    the control with that placeholder (exact)
    click [role=button[name="Send"]]        Playwright's role engine
    click [xpath=//button[2]]               an XPath

The locator is everything inside the first bracket pair, brackets inside it balanced (so CSS
attribute selectors need no escaping). The first visible match is taken; its id is the marked
element whose click point lies inside the match's box, the one nearest the box's centre; when
none does, the boxes of its descendants are tried in document order (a link wrapping an image is
marked as its image). The oracle answers with the plain VWA string
(``click [12]``), so what the agent sends is exactly VWA's grammar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ELEMENT_VERBS", "GoldLocatorError", "LOCATOR_KINDS", "Located", "parse_gold", "resolve_gold"]

ELEMENT_VERBS = ("click", "hover", "type")
LOCATOR_KINDS = ("css", "text", "label", "placeholder", "role", "xpath")
# The viewport boxes of an element and of each of its descendants, the element's first: an inline
# link around a block image has a thin box of its own, and its image is what carries the id.
_BOXES_JS = """(el) => [el, ...el.querySelectorAll('*')].flatMap(e => [...e.getClientRects()])
    .filter(r => r.width > 0 && r.height > 0).map(r => [r.left, r.top, r.right, r.bottom])"""
_HEAD = re.compile(r"^\s*(click|hover|type)\s*\[")


class GoldLocatorError(ValueError):
    """A gold action whose locator is malformed, or matches nothing marked on the page."""


@dataclass(frozen=True, slots=True)
class Located:
    """A gold action split around its element: ``head`` + ``[<id>]`` + ``tail`` is the VWA string;
    ``locator`` is None when the action already names an id (or names no element)."""

    head: str
    locator: str | None
    tail: str

    def with_id(self, element: int) -> str:
        return f"{self.head}[{element}]{self.tail}"


def _closing(text: str, start: int) -> int:
    """Index of the ``]`` that balances the ``[`` at ``start``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
            if depth == 0:
                return i
    raise GoldLocatorError(f"gold action {text[:120]!r}: its element bracket is never closed")


def parse_gold(action: str) -> Located:
    """Split ``action``; GoldLocatorError names the allowed locator kinds when the kind is unknown."""
    match = _HEAD.match(action)
    if match is None:
        return Located(action, None, "")
    open_at = match.end() - 1
    close_at = _closing(action, open_at)
    inner = action[open_at + 1:close_at].strip()
    head, tail = action[:open_at], action[close_at + 1:]
    if inner.isdigit():
        return Located(head, None, tail)
    kind, sep, value = inner.partition("=")
    if not sep or kind.strip() not in LOCATOR_KINDS or not value.strip():
        raise GoldLocatorError(f"gold action {action[:120]!r}: element {inner[:80]!r} is neither an id nor a "
                               f"locator kind=value (kinds: {', '.join(LOCATOR_KINDS)})")
    return Located(head, f"{kind.strip()}={value.strip()}", tail)


def _playwright_locator(page: Any, locator: str) -> Any:
    kind, _, value = locator.partition("=")
    if kind == "label":
        return page.get_by_label(value, exact=True)
    if kind == "placeholder":
        return page.get_by_placeholder(value, exact=True)
    return page.locator(f"{kind}={value}")


async def resolve_gold(action: str, page: Any, targets: dict[int, tuple[float, float]]) -> str:
    """``action`` with its locator replaced by the id (of ``targets``: id -> click point) of the
    element it names on ``page``; unchanged when it names an id already."""
    located = parse_gold(action)
    if located.locator is None:
        return action
    matches = _playwright_locator(page, located.locator)
    boxes: list[list[float]] = []
    for i in range(await matches.count()):
        candidate = matches.nth(i)
        if await candidate.is_visible():
            boxes = await candidate.evaluate(_BOXES_JS)
            if boxes:
                break
    if not boxes:
        raise GoldLocatorError(f"gold action {action[:120]!r}: {located.locator!r} matches no visible element "
                               f"on {page.url}")
    for x0, y0, x1, y1 in boxes:  # the element's own box first, then its descendants' (a link's image)
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        inside = [(abs(x - cx) + abs(y - cy), element) for element, (x, y) in targets.items()
                  if x0 - 0.5 <= x <= x1 + 0.5 and y0 - 0.5 <= y <= y1 + 0.5]
        if inside:
            return located.with_id(min(inside)[1])
    raise GoldLocatorError(f"gold action {action[:120]!r}: {located.locator!r} matches an element at "
                           f"({boxes[0][0]:.0f}, {boxes[0][1]:.0f}) that carries no id on {page.url}")
