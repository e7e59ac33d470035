"""VisualWebArena's action grammar: the strings an agent sends, parsed into typed actions.

The grammar is the one VWA's prompts teach (spec §2.3), so a model prompted as in the paper is
understood here unchanged: the name is the first word (before any ``[``), arguments sit in square
brackets, ``type`` presses Enter unless its last bracket is ``[0]``, ``scroll`` takes ``up`` or
``down`` with or without brackets, ``stop`` without an answer (or with ``[]``) means the empty
answer. Nothing here touches a browser, so the parser is tested on its own (tests/test_browser_env.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ACTION_NAMES", "Action", "ActionError", "parse_action", "playwright_keys"]

ACTION_NAMES: tuple[str, ...] = ("click", "hover", "type", "press", "scroll", "new_tab", "tab_focus", "close_tab",
                                 "goto", "go_back", "go_forward", "stop")
"""The action names, as ``obs["actions"]`` lists them (VWA spells the tab closer ``close_tab``)."""

ELEMENT_ACTIONS = frozenset({"click", "hover", "type"})

# One pattern per name: anchored at the start, anything after the last bracket is ignored as VWA's
# regexes (searched, not full-matched) ignore it.
_PATTERNS: dict[str, re.Pattern[str]] = {
    "click": re.compile(r"click ?\[(\d+)\]", re.S),
    "hover": re.compile(r"hover ?\[(\d+)\]", re.S),
    "type": re.compile(r"type ?\[(\d+)\] ?\[(.+)\] ?\[(\d+)\]", re.S),
    "press": re.compile(r"press ?\[(.+)\]", re.S),
    "scroll": re.compile(r"scroll ?\[?(up|down)\]?", re.S),
    "goto": re.compile(r"goto ?\[(.+)\]", re.S),
    "tab_focus": re.compile(r"tab_focus ?\[(\d+)\]", re.S),
    "stop": re.compile(r"stop ?\[(.*)\]", re.S),  # "stop []": the empty answer, as VWA's parser yields
}

_USAGE: dict[str, str] = {
    "click": "click [id]", "hover": "hover [id]", "type": "type [id] [text] or type [id] [text] [0]",
    "press": "press [key_comb]", "scroll": "scroll [up] or scroll [down]", "goto": "goto [url]",
    "tab_focus": "tab_focus [tab_index]", "stop": "stop [answer]",
}


class ActionError(ValueError):
    """An action string the grammar does not accept; the message is meant for the agent."""


@dataclass(frozen=True, slots=True)
class Action:
    """One parsed action. ``element`` is the page id for click/hover/type; ``text`` the typed text,
    key combination, URL, scroll direction or answer; ``enter`` whether ``type`` presses Enter;
    ``tab`` the index for ``tab_focus``."""

    name: str
    raw: str
    element: int | None = None
    text: str = ""
    enter: bool = False
    tab: int | None = None


def parse_action(raw: object) -> Action:
    """The action an agent's string denotes; raises ActionError naming what is allowed."""
    if not isinstance(raw, str):
        raise ActionError(f"an action is a string such as 'click [12]', not {type(raw).__name__}")
    text = raw.strip()
    if not text:
        raise ActionError("the action is empty")
    name = text.split("[", 1)[0].split(maxsplit=1)[0] if not text.startswith("[") else ""
    if name not in ACTION_NAMES:
        raise ActionError(f"unknown action {name[:40]!r}; the actions are {', '.join(ACTION_NAMES)}")
    if name in ("new_tab", "close_tab", "go_back", "go_forward"):
        return Action(name, raw)
    if name == "stop" and "[" not in text:
        return Action("stop", raw, text="")
    if name == "type" and not (text.endswith("[0]") or text.endswith("[1]")):
        text += " [1]"
    found = _PATTERNS[name].match(text)
    if found is None:
        raise ActionError(f"malformed action {raw[:80]!r}; write it as {_USAGE[name]}")
    if name in ("click", "hover"):
        return Action(name, raw, element=int(found.group(1)))
    if name == "type":
        # a last bracket other than [0]/[1] is part of the text, as in VWA (a [1] was appended above)
        return Action(name, raw, element=int(found.group(1)), text=found.group(2), enter=found.group(3) == "1")
    if name == "tab_focus":
        return Action(name, raw, tab=int(found.group(1)))
    return Action(name, raw, text=found.group(1))


# Names models write for keys, mapped to Playwright's. VWA maps Meta to Control (its browsers run
# on Linux); Cmd and Command are the same key under other names.
_KEY_ALIASES = {"ctrl": "Control", "control": "Control", "meta": "Control", "cmd": "Control", "command": "Control",
                "alt": "Alt", "option": "Alt", "shift": "Shift", "esc": "Escape", "escape": "Escape",
                "return": "Enter", "enter": "Enter", "del": "Delete", "delete": "Delete", "backspace": "Backspace",
                "tab": "Tab", "space": " ", "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft",
                "right": "ArrowRight", "pageup": "PageUp", "pagedown": "PageDown", "home": "Home", "end": "End"}


def playwright_keys(combo: str) -> str:
    """A key combination as Playwright's ``keyboard.press`` spells it (``Ctrl+v`` -> ``Control+v``)."""
    parts = [p.strip() for p in combo.strip().split("+")]
    if combo.strip().endswith("++"):  # "Control++": the plus key itself
        parts = [*parts[:-2], "+"]
    if any(not p for p in parts):
        raise ActionError(f"malformed key combination {combo[:40]!r}; write it as e.g. Ctrl+v or Enter")
    return "+".join(_KEY_ALIASES.get(p.lower(), p) for p in parts)
