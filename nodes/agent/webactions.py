"""VisualWebArena's action strings as the agent reads them from a model's reply, and the pretty
host names the model sees instead of the local sites' addresses.

The agent checks the grammar itself, rather than leaving it to the browser, because VWA counts an
unreadable reply as a step of its own (a NONE action that feeds the early stop and the next
prompt's feedback), which is a different thing from a readable action the page refuses. The facts
are VWA's (spec §2.3): the name comes before the first ``[``, arguments sit in square brackets,
``type`` presses Enter unless its last bracket is ``[0]``, ``scroll`` takes ``up`` or ``down``,
a ``stop`` whose answer cannot be read (``stop []``) answers nothing.
Packs do not import each other, so this is the agent's own reading of the grammar the browser
pack parses on its side; a reply is turned into one canonical string both read the same way.
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence
from urllib.parse import urlsplit

__all__ = ["GRAMMAR_NAMES", "PHRASE", "HostMap", "canonical_action", "fenced_action", "last_fenced_block"]

PHRASE = "In summary, the next action I will perform is"
"""VWA's output format: this sentence, then the action inside a pair of triple backticks."""

GRAMMAR_NAMES: tuple[str, ...] = ("click", "hover", "type", "press", "scroll", "new_tab", "tab_focus", "close_tab",
                                  "goto", "go_back", "go_forward", "stop")
_BARE = frozenset({"new_tab", "close_tab", "go_back", "go_forward"})

# What follows the name, per VWA's regexes (a space between the name and the first bracket is optional).
_ARGUMENTS: dict[str, re.Pattern[str]] = {name: re.compile(rf"{name} ?{args}", re.S) for name, args in {
    "click": r"\[(\d+)\]",
    "hover": r"\[(\d+)\]",
    "type": r"\[(\d+)\] ?\[(.+)\] ?\[([01])\]",
    "press": r"\[(.+)\]",
    "scroll": r"\[?(up|down)\]?",
    "goto": r"\[(.+)\]",
    "tab_focus": r"\[(\d+)\]",
    "stop": r"\[(.+)\]",
}.items()}

_FENCE = re.compile(r"```(.*?)```", re.S)
_LANGUAGE_TAG = re.compile(r"[A-Za-z][\w+-]*")


def canonical_action(text: str, allowed: Sequence[str] = GRAMMAR_NAMES) -> str | None:
    """The action ``text`` denotes, written one way (``type [3] [shoes] [1]``, ``scroll [down]``,
    ``stop`` for the empty answer), or None when it is not one of ``allowed`` in VWA's grammar.
    Text after the last argument is dropped, as VWA's regexes ignore it."""
    text = text.strip()
    head = text.split("[", 1)[0].split()
    name = head[0] if head else ""
    if name not in GRAMMAR_NAMES or name not in allowed:
        return None
    if name in _BARE:
        return name
    if name == "stop" and "[" not in text:
        return "stop"
    if name == "type" and not re.search(r"\[[01]\]$", text):
        text += " [1]"  # Enter by default
    found = _ARGUMENTS[name].match(text)
    if found is None:
        return "stop" if name == "stop" else None  # VWA: a stop it cannot read (``stop []``) answers ""
    if name == "type":
        return f"type [{found.group(1)}] [{found.group(2)}] [{found.group(3)}]"
    return f"{name} [{found.group(1)}]"


def _block(content: str) -> str:
    """A fenced block's action: a language tag on a line of its own (```text) is not part of it."""
    content = content.strip()
    first, _, rest = content.partition("\n")
    if rest and _LANGUAGE_TAG.fullmatch(first.strip()) and first.strip() not in GRAMMAR_NAMES:
        content = rest.strip()
    return content


def fenced_action(reply: str, actions: Sequence[str]) -> list[str]:
    """VWA's reading of a reply: the last fenced block after the last "In summary, the next action
    I will perform is" (any case), else the reply's last fenced block, checked against the grammar.
    Returns ``[canonical action]``, or ``[]`` when the reply holds no readable action."""
    allowed = [a for a in actions if a in GRAMMAR_NAMES] or list(GRAMMAR_NAMES)
    block = last_fenced_block(reply)
    found = canonical_action(block, allowed) if block is not None else None
    return [found] if found else []


def last_fenced_block(reply: str) -> str | None:
    """The last fenced block after the last "In summary, the next action I will perform is" (any
    case), else the reply's last fenced block, without a language tag line; None when there is none."""
    at = reply.lower().rfind(PHRASE.lower())
    blocks = _FENCE.findall(reply[at + len(PHRASE):]) if at >= 0 else []
    blocks = blocks or _FENCE.findall(reply)
    return _block(blocks[-1]) if blocks else None


def _base(url: str, what: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"hosts: {what} {url!r} is not a base URL like http://classifieds.com or "
                         f"http://127.0.0.1:9980")
    return url.strip().rstrip("/")


def _pattern(bases: Sequence[str]) -> re.Pattern[str] | None:
    if not bases:
        return None
    names = "|".join(re.escape(b) for b in sorted(bases, key=len, reverse=True))
    # a base ends where the host ends: not before more of a name, a port digit or a dotted suffix
    return re.compile(rf"(?:{names})(?![\w-]|\.\w)")


class HostMap:
    """Pretty base URL <-> local base URL (VWA shows ``http://classifieds.com`` for its own hosts).

    The model must see the names the benchmark's prompts and tasks use, while the browser loads the
    local sites; URLs cross over in both directions, so both must be one-to-one. A local base on
    127.0.0.1 is also recognised when a page spells it ``localhost``."""

    def __init__(self, pretty_to_local: Mapping[str, str]) -> None:
        self.local: dict[str, str] = {}
        self.pretty: dict[str, str] = {}
        for pretty, local in pretty_to_local.items():
            p, loc = _base(pretty, "pretty name"), _base(local, f"local base URL for {pretty}")
            if loc in self.pretty:
                raise ValueError(f"hosts: {self.pretty[loc]} and {p} both map to {loc}; each pretty name needs "
                                 f"its own local base URL")
            if p in self.local:
                raise ValueError(f"hosts: {p} is given twice")
            self.local[p], self.pretty[loc] = loc, p
        seen = dict(self.pretty)
        for loc, p in list(seen.items()):
            parts = urlsplit(loc)
            if parts.hostname == "127.0.0.1":
                seen.setdefault(loc.replace("127.0.0.1", "localhost", 1), p)
        self._seen = seen
        self._to_pretty = _pattern(list(seen))
        self._to_local = _pattern(list(self.local))

    def __bool__(self) -> bool:
        return bool(self.local)

    def to_pretty(self, text: str) -> str:
        """``text`` (page text, a URL, a tab title, an error) with local bases written as pretty names."""
        if self._to_pretty is None or not text:
            return text
        return self._to_pretty.sub(lambda m: self._seen[m.group(0)], text)

    def to_local(self, text: str) -> str:
        """``text`` (an action the model wrote) with pretty names written as the local bases."""
        if self._to_local is None or not text:
            return text
        return self._to_local.sub(lambda m: self.local[m.group(0)], text)
