"""A scripted solver for MiniWoB tasks: it reads the task page's DOM (page.SNAPSHOT_JS: the
utterance and every shown element with its box, text, value and state) and answers the next action
in the environment's grammar: ``click_xy``, ``drag``, ``type_text`` and ``press``.

It decides afresh at every step from the page as it is (which boxes are checked, what a field
holds, which element has the focus), so it needs no memory of its own and recovers from an action
that did not take. It knows the tasks in SOLVED_TASKS: clicks (buttons, links, tabs, widgets, a
dialog's close button, a collapsed section), typing (text, passwords, a login form, arithmetic),
choices (checkboxes, radio buttons, a drop-down list) and a drag.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["SOLVED_TASKS", "Element", "PageView", "SolverError", "next_action", "quoted"]


class SolverError(ValueError):
    """The page does not look like the task the solver expects (the message says what is missing)."""


@dataclass(frozen=True, slots=True)
class Element:
    """One shown element of the page, as SNAPSHOT_JS reads it."""

    tag: str
    id: str
    cls: str
    type: str
    text: str
    all: str
    value: str | None
    checked: bool | None
    dtype: str
    label: str
    focused: bool
    options: list[str] | None
    selected: int | None
    x: float
    y: float
    w: float
    h: float
    left: float
    top: float

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Element:
        return cls(**{name: raw.get(name) for name in cls.__slots__})  # type: ignore[attr-defined]

    def has_class(self, name: str) -> bool:
        return name in (self.cls or "").split()


class PageView:
    """The snapshot's utterance and elements, with the look-ups the solvers use."""

    def __init__(self, snapshot: dict[str, Any]) -> None:
        if not isinstance(snapshot, dict) or not isinstance(snapshot.get("elements"), list):
            raise SolverError(f"a page snapshot is {{utterance, elements: [...]}}, got {str(snapshot)[:80]}")
        self.utterance = str(snapshot.get("utterance") or "")
        self.elements = [Element.of(e) for e in snapshot["elements"]]

    def find(self, what: str, test: Callable[[Element], bool]) -> Element:
        for element in self.elements:
            if test(element):
                return element
        raise SolverError(f"no {what} on the page")

    def by_id(self, element_id: str) -> Element:
        return self.find(f"element #{element_id}", lambda e: e.id == element_id)

    def all(self, test: Callable[[Element], bool]) -> list[Element]:
        return [e for e in self.elements if test(e)]


def quoted(utterance: str) -> list[str]:
    """The double-quoted strings of an utterance, in order."""
    return re.findall(r'"([^"]*)"', utterance)


def click(element: Element) -> str:
    return f"click_xy [{element.x:.1f}] [{element.y:.1f}]"


def fill(field: Element, text: str) -> str | None:
    """The next action that makes ``field`` hold ``text``: focus it, clear what is wrong, type; None
    once it holds it."""
    if (field.value or "") == text:
        return None
    if not field.focused:
        return click(field)
    if field.value:
        return "press [Control+a]"  # typing then replaces the selection
    return f"type_text [{text}]"


def fill_all(page: PageView, pairs: list[tuple[str, str]], submit: str = "subbtn") -> str:
    """Fill each (element id, text) in turn, then click the submit button."""
    for element_id, text in pairs:
        if (action := fill(page.by_id(element_id), text)) is not None:
            return action
    return click(page.by_id(submit))


def _utterance(page: PageView, pattern: str) -> re.Match[str]:
    found = re.search(pattern, page.utterance)
    if found is None:
        raise SolverError(f"the utterance {page.utterance!r} does not read as expected ({pattern})")
    return found


# -- the tasks ---------------------------------------------------------------------------------------------
def _click_test(page: PageView) -> str:
    return click(page.find("button", lambda e: e.tag == "button"))


def _click_test_2(page: PageView) -> str:
    name = _utterance(page, r"Click button (\w+)").group(1)
    return click(page.find(f"button {name}", lambda e: e.tag == "button" and e.all == name))


def _click_button(page: PageView) -> str:
    name = quoted(page.utterance)[0]
    return click(page.find(f'button "{name}"', lambda e: e.tag == "button" and e.all == name))


def _click_button_sequence(page: PageView) -> str:
    one = page.find("button ONE", lambda e: e.tag == "button" and e.all == "ONE")
    two = page.find("button TWO", lambda e: e.tag == "button" and e.all == "TWO")
    return click(two if one.focused else one)  # a clicked button keeps the focus


def _click_link(page: PageView) -> str:
    name = quoted(page.utterance)[0]
    return click(page.find(f'link "{name}"', lambda e: e.has_class("alink") and e.all == name))


def _click_dialog(page: PageView) -> str:
    return click(page.find("dialog close button",
                           lambda e: e.tag == "button" and e.has_class("ui-dialog-titlebar-close")))


def _click_tab(page: PageView) -> str:
    number = _utterance(page, r"Tab #(\d+)").group(1)
    return click(page.find(f"Tab #{number}", lambda e: e.tag == "a" and e.all == f"Tab #{number}"))


def _click_collapsible(page: PageView) -> str:
    header = page.find("section header", lambda e: e.tag == "h3")
    if not header.has_class("ui-state-active"):
        return click(header)
    return click(page.by_id("subbtn"))


def _click_widget(page: PageView) -> str:
    kind = quoted(page.utterance)[0]
    return click(page.find(f'"{kind}" widget', lambda e: e.dtype == kind))


def _choices(page: PageView, kind: str) -> str:
    """click-checkboxes and click-option: set each box of ``kind`` to whether the utterance names
    its label, then Submit."""
    listed = _utterance(page, r"^Select (.*) and click Submit\.?$").group(1)
    wanted = set() if listed == "nothing" else {w.strip() for w in listed.split(",")}
    boxes = page.all(lambda e: e.tag == "input" and e.type == kind)
    if not boxes:
        raise SolverError(f"no {kind} on the page")
    for box in boxes:
        if bool(box.checked) != (box.label in wanted):
            return click(box)
    return click(page.by_id("subbtn"))


def _click_checkboxes(page: PageView) -> str:
    return _choices(page, "checkbox")


def _click_option(page: PageView) -> str:
    return _choices(page, "radio")


def _enter_text(page: PageView) -> str:
    return fill_all(page, [("tt", quoted(page.utterance)[0])])


def _enter_password(page: PageView) -> str:
    password = quoted(page.utterance)[0]
    return fill_all(page, [("password", password), ("verify", password)])


def _login_user(page: PageView) -> str:
    user, password = quoted(page.utterance)[:2]
    return fill_all(page, [("username", user), ("password", password)])


def _focus_text(page: PageView) -> str:
    return click(page.by_id("tt"))


def _simple_arithmetic(page: PageView) -> str:
    problem = page.by_id("math-problem").all
    found = re.match(r"\s*(-?\d+)\s*([+\-x])\s*(-?\d+)", problem)
    if found is None:
        raise SolverError(f"the problem {problem!r} is not 'a op b ='")
    a, op, b = int(found.group(1)), found.group(2), int(found.group(3))
    answer = a + b if op == "+" else a - b if op == "-" else a * b
    return fill_all(page, [("math-answer", str(answer))])


def _choose_list(page: PageView) -> str:
    wanted = _utterance(page, r"^Select (.*) from the list and click Submit\.?$").group(1)
    select = page.by_id("options")
    options = select.options or []
    if wanted not in options:
        raise SolverError(f"{wanted!r} is not among the list's options {options}")
    if select.selected is not None and 0 <= select.selected < len(options) and options[select.selected] == wanted:
        return click(page.find("Submit button", lambda e: e.tag == "button" and e.all == "Submit"))
    if not select.focused:
        # Tab focuses the list without opening it (a click opens its pop-up, where the arrow keys
        # move a highlight that only Enter commits); the list is the page's first focusable element
        return "press [Tab]"
    # on a focused closed list, the arrow keys move the choice itself, one option at a time
    current = select.selected if select.selected is not None and select.selected >= 0 else 0
    return "press [ArrowDown]" if options.index(wanted) > current else "press [ArrowUp]"


def _drag_box(page: PageView) -> str:
    small, large = page.by_id("draggableSmall"), page.by_id("draggableLarge")
    inside = 0 < small.top - large.top < large.h - small.h and 0 < small.left - large.left < large.w - small.w
    if inside:
        return click(page.by_id("subbtn"))
    # from a point of the small box to where its point lands with the box centred on the large one
    to_x = large.left + large.w / 2 + (small.x - small.left - small.w / 2)
    to_y = large.top + large.h / 2 + (small.y - small.top - small.h / 2)
    return f"drag [{small.x:.1f}] [{small.y:.1f}] [{to_x:.1f}] [{to_y:.1f}]"


SOLVERS: dict[str, Callable[[PageView], str]] = {
    "click-test": _click_test, "click-test-2": _click_test_2, "click-button": _click_button,
    "click-button-sequence": _click_button_sequence, "click-link": _click_link, "click-dialog": _click_dialog,
    "click-tab": _click_tab, "click-collapsible": _click_collapsible, "click-widget": _click_widget,
    "click-checkboxes": _click_checkboxes, "click-option": _click_option, "enter-text": _enter_text,
    "enter-text-dynamic": _enter_text, "enter-password": _enter_password, "login-user": _login_user,
    "focus-text": _focus_text, "simple-arithmetic": _simple_arithmetic, "unicode-test": _click_button,
    "choose-list": _choose_list, "drag-box": _drag_box,
}
SOLVED_TASKS = frozenset(SOLVERS)


def next_action(task: str, snapshot: dict[str, Any]) -> str:
    """The solver's next action for ``task`` on the page ``snapshot`` shows."""
    if task not in SOLVERS:
        raise SolverError(f"no scripted solver for {task}; solved: {', '.join(sorted(SOLVERS))}")
    return SOLVERS[task](PageView(snapshot))
