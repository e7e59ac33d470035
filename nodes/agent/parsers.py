"""Turning a model's reply into actions.

Each benchmark asks for its own output format, and its published numbers depend on how strictly
the reply is read, so parsers are named and chosen by the prompt template (``parser:``), never
guessed. A parser returns the actions it found (``[]`` when the reply is unusable); the agent, not
the parser, decides what an unusable reply costs.
"""

from __future__ import annotations

import re
import string
from typing import Callable, Sequence

from nodes.agent.webactions import fenced_action, last_fenced_block

Parser = Callable[[str, Sequence[str]], list[str]]

_STRIP = " \t\r\n`'\"*.:;!"


def _exact(token: str, actions: Sequence[str]) -> str | None:
    token = token.strip(_STRIP)
    for action in actions:
        if token.lower() == action.lower():
            return action
    return None


def _after(marker: str, text: str) -> str | None:
    """The text after the last line that starts with ``marker`` (case-insensitive), if any."""
    hits = list(re.finditer(rf"^[ \t]*{re.escape(marker)}[ \t]*:?", text, re.IGNORECASE | re.MULTILINE))
    return text[hits[-1].end():] if hits else None


def section_action(text: str, actions: Sequence[str], *, marker: str = "# action") -> list[str]:
    """MageBench Online: the first non-empty line after ``# action`` must be exactly one action name.

    Case and surrounding quotes or backticks are forgiven; anything else in that line is not, as
    in the benchmark's own parser, so a chatty reply counts as unparsable."""
    tail = _after(marker, text)
    if tail is None:
        return []
    for line in tail.splitlines():
        if line.strip(_STRIP):
            found = _exact(line, actions)
            return [found] if found else []
    return []


def section_list(text: str, actions: Sequence[str], *, marker: str = "### Actions") -> list[str]:
    """MageBench Global: a comma-separated list after ``### Actions``; unknown tokens are dropped."""
    tail = _after(marker, text)
    if tail is None:
        return []
    tokens = re.split(r"[,\n]", tail)
    return [a for a in (_exact(t, actions) for t in tokens) if a]


def answer_option(text: str, actions: Sequence[str]) -> list[str]:
    """KidGym: strip an optional ``<answer>`` tag, then an option quoted in full, then a standalone
    option letter in range, then any in-range capital letter (the released code's order, which is
    what makes the paper's own examples parse)."""
    if m := re.search(r"<answer>\s*(.*?)\s*</answer>", text, re.IGNORECASE | re.DOTALL):
        text = m.group(1)
    for action in actions:
        if f"'{action}'" in text:
            return [action]
    letters = string.ascii_uppercase[: len(actions)]
    if not letters:
        return []
    if m := re.search(rf"\b([{letters}])\b", text):
        return [actions[letters.index(m.group(1))]]
    if m := re.search(rf"[{letters}]", text):
        return [actions[letters.index(m.group(0))]]
    return []


def first_mention(text: str, actions: Sequence[str]) -> list[str]:
    """The action name mentioned first, as a whole word: forgiving, for small models that will not
    keep to a format (the embedded 135M model rarely does)."""
    best: tuple[int, str] | None = None
    for action in actions:
        if m := re.search(rf"(?<![\w]){re.escape(action)}(?![\w])", text, re.IGNORECASE):
            if best is None or m.start() < best[0]:
                best = (m.start(), action)
    return [best[1]] if best else []


def mention_list(text: str, actions: Sequence[str]) -> list[str]:
    """Every action name mentioned, in order: a forgiving Global plan."""
    names = "|".join(re.escape(a) for a in sorted(actions, key=len, reverse=True))
    if not names:
        return []
    return [_exact(m.group(0), actions) or m.group(0)
            for m in re.finditer(rf"(?<![\w])(?:{names})(?![\w])", text, re.IGNORECASE)]


def action_line_exact(text: str, actions: Sequence[str]) -> list[str]:
    """V-MAGE: the value of the last ``Action:`` field must be an action name exactly, case
    included; only whitespace and markdown marks (``#``, ``*``) around it are dropped, as the
    benchmark's parser drops them. "UP (to go around the wall)" counts as invalid, as it does there."""
    hits = list(re.finditer(r"^[ \t#*]*action[ \t*]*:", text, re.IGNORECASE | re.MULTILINE))
    if not hits:
        return []
    for line in text[hits[-1].end():].splitlines():
        value = line.strip().strip("#*").strip()
        if value:
            return [value] if value in actions else []
    return []


_FIELD = re.compile(r"^[ \t#*]*([A-Za-z][A-Za-z _]{0,40}?)[ \t*]*:[ \t*]*(.*)$")


def reply_fields(text: str) -> dict[str, str]:
    """A reply in V-MAGE's labelled format (``Observation: ... / Reasoning: ... / Action: ...``) as
    a dict, the form V-MAGE feeds a past reply back in its history: a line starting with a short
    label and a colon opens a field (the label lowercased, spaces as ``_``), and the lines after it
    until the next label continue it; markdown marks are dropped. Text before the first label is
    not a field, so a reply with no labels gives ``{}``."""
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if match := _FIELD.match(line):
            key = "_".join(match.group(1).lower().split())
            current = fields.setdefault(key, [])
            current.clear()  # a label given twice keeps its last value, as a dict update would
            line = match.group(2)
        if current is not None and (value := line.strip().strip("#*").strip()):
            current.append(value)
    return {key: " ".join(lines) for key, lines in fields.items()}


_CALL = re.compile(r"[A-Za-z_]\w*\s*\(")


def fenced_call(text: str, actions: Sequence[str]) -> list[str]:
    """BrowserGym: the fenced block (as :func:`fenced_action` finds it) when it holds a function call,
    verbatim (``click("12")``, ``fill("5", "shoes")``); the environment checks it against its action
    set, where an unknown call or a malformed one is an invalid step."""
    block = last_fenced_block(text)
    return [block] if block and _CALL.match(block) else []


def whole_reply(text: str, actions: Sequence[str]) -> list[str]:
    """MageBench WebUI: the reply itself is the action (its fenced html/css/javascript blocks are the
    page), so the environment, not the agent, says whether it is usable and why; only an empty
    reply is nothing."""
    return [text] if text.strip() else []


def after_regenerate(text: str, actions: Sequence[str]) -> list[str]:
    """MageBench WebUI Online: the part of the reply after its last ``# Regenerate`` line (exact,
    case-sensitive, as the benchmark splits on it), so code quoted in the ``# Analyze`` part is not
    taken for the page; a reply without the header (the first, Global-style reply of an online
    episode) is sent whole."""
    hits = list(re.finditer(r"^[ \t]*# Regenerate[ \t]*$", text, re.MULTILINE))
    return whole_reply(text[hits[-1].end():] if hits else text, actions)


_VAB_MARK = re.compile(r"^[ \t]*(ACTION|OBSERVATION)[ \t]*:", re.MULTILINE)


def vab_embodied(text: str, actions: Sequence[str]) -> list[str]:
    """VisualAgentBench's embodied tasks: the reply is cut where a model starts a second turn of its
    own (a second ``ACTION:`` or ``OBSERVATION:`` line, or ``<|end_of_text|>``), and what is left goes to
    the environment, which carries out the first call after ``ACTION:``. A reply without an
    ``ACTION:`` line is unusable."""
    text = text.split("<|end_of_text|>")[0]
    seen: set[str] = set()
    for hit in _VAB_MARK.finditer(text):
        if hit.group(1) in seen:
            text = text[:hit.start()]
            break
        seen.add(hit.group(1))
    return [text.strip()] if "ACTION" in seen and "ACTION" in text else []


_VAB_LABEL = re.compile(r"\b(action|observation|thought)[ \t]*:", re.IGNORECASE)
THOUGHT_LINES = 5


def vab_minecraft_reply(text: str) -> str:
    """A reply as VAB-Minecraft passes it on and keeps it in the history: cut where the model
    starts writing the next turn's observation (``Feedback on the Action:``), at ``<|end_of_text|>``
    and before a second ``ACTION:`` or ``OBSERVATION:``, with the labels in capitals however the
    model wrote them, and the THOUGHT cut to its first five lines (blank ones skipped, and ending
    after a line that starts with "2. ", VAB's rule), so a hundred rounds of history stay short."""
    text = text.split("Feedback on the Action:")[0].split("<|end_of_text|>")[0]
    text = _VAB_LABEL.sub(lambda m: m.group(1).upper() + ":", text)
    for label in ("ACTION:", "OBSERVATION:"):
        first = text.find(label)
        second = text.find(label, first + len(label)) if first >= 0 else -1
        if second >= 0:
            text = text[:second]
    start, end = text.find("THOUGHT:"), text.find("ACTION:")
    if 0 <= start < end:
        lines: list[str] = []
        for line in text[start + len("THOUGHT:"):end].split("\n")[:THOUGHT_LINES]:
            if line.strip():
                lines.append(line)
                if line.startswith("2. "):
                    break
        text = text[:start] + "THOUGHT:" + "".join(line + "\n" for line in lines) + text[end:]
    return text.strip()


def vab_minecraft(text: str, actions: Sequence[str]) -> list[str]:
    """VisualAgentBench's Minecraft: the reply as VAB passes it on (:func:`vab_minecraft_reply`);
    the environment reads the first of its six calls after ``ACTION:``. A reply without an
    ``ACTION:`` label (in any case) is unusable."""
    kept = vab_minecraft_reply(text)
    return [kept] if "ACTION:" in kept else []


def _vab_embodied_reply(text: str) -> str:
    found = vab_embodied(text, ())
    return found[0] if found else text.split("<|end_of_text|>")[0].strip()


KeptReply = Callable[[str], str]

KEPT_REPLIES: dict[str, KeptReply] = {
    "whole": lambda text: text,  # the reply as the model wrote it (the default)
    "vab_embodied": _vab_embodied_reply,  # cut at a second ACTION/OBSERVATION line or <|end_of_text|>
    "vab_minecraft": vab_minecraft_reply,  # that, with the labels in capitals and THOUGHT cut to 5 lines
}
"""How a template keeps the model's past replies in its chat history (``kept_reply:``): VAB keeps
the reply as its task processed it, not as the model wrote it."""


def get_kept_reply(name: str) -> KeptReply:
    try:
        return KEPT_REPLIES[name]
    except KeyError:
        raise ValueError(f"unknown kept_reply {name!r}; allowed: {', '.join(sorted(KEPT_REPLIES))}") from None


PARSERS: dict[str, Parser] = {
    "section_action": section_action,
    "section_list": section_list,
    "answer_option": answer_option,
    "first_mention": first_mention,
    "mention_list": mention_list,
    "fenced_action": fenced_action,  # VisualWebArena: ```action [arg]``` after "In summary, ..."
    "action_line_exact": action_line_exact,  # V-MAGE: "Action: NAME", the name exactly
    "fenced_call": fenced_call,  # BrowserGym: ```click("12")```, the call verbatim; the environment checks it
    "whole_reply": whole_reply,  # WebUI: the reply's code blocks are the page; the environment reads them
    "after_regenerate": after_regenerate,  # WebUI Online: what follows "# Regenerate"
    "vab_embodied": vab_embodied,  # VAB household: the reply up to a second ACTION/OBSERVATION; the env reads it
    "vab_minecraft": vab_minecraft,  # VAB Minecraft: that, labels in capitals, THOUGHT cut to 5 lines
}


def get_parser(name: str) -> Parser:
    try:
        return PARSERS[name]
    except KeyError:
        raise ValueError(f"unknown parser {name!r}; allowed: {', '.join(sorted(PARSERS))}") from None
