"""VAB-CSS's four tools and its action line: ``Action: fn(args)``, the first action only.

Why ``ast`` and never ``eval``: VAB documents ``get_selectors_by_html_elements``'s argument as what
"we can directly do ``eval(f"soup.find_all({argument})")``" with. Here the call is parsed as a
Python expression and every argument must be a literal (``ast.literal_eval``), so
``__import__('os')`` or ``open(...)`` in an argument is refused as an exception text, and a call
whose function is not one of the four (``os.system(...)``, ``__import__(...)``) is an unknown
function. Nothing the agent writes is ever executed.

The three failure texts (no Action line, unknown function, exception) are VAB's, word for word:
models fine-tuned on VAB's trajectories were trained on them. The texts of successful calls say the
same things as VAB's in this module's own words.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import tinycss2
from bs4 import BeautifulSoup
from bs4.element import Tag
from tinycss2.ast import IdentToken, LiteralToken, Node

from nodes.browser.css.rules import RuleError, Stylesheets

__all__ = ["END_PHRASE", "FUNCTIONS", "NO_ACTION", "CssTools", "ParsedCall", "ToolResult", "exception_text",
           "find_call", "matchable_selector", "unknown_function_text"]

END_PHRASE = "I have fixed the css style"
NO_ACTION = "No executable function found! Need to recheck the action. Please stick to the format of Action: ..."
_MAX_CLOSERS = 64  # ')' positions tried per call; real calls close within a few
FUNCTIONS = ("get_selectors_by_html_elements", "select_rule", "edit_rule", "revert_last_edit")

# Pseudo-classes that depend on the user or the URL, and pseudo-elements: a parsed document has no
# state, so they are dropped before matching (``a:hover`` styles the ``a`` elements).
_STATEFUL = frozenset({"hover", "focus", "active", "visited", "link", "focus-within", "focus-visible", "target",
                       "before", "after", "first-line", "first-letter", "placeholder", "selection", "marker"})


def unknown_function_text(fn: str) -> str:
    return f"{fn} is not a valid function. Please check the function name and try again."


def exception_text(fn: str, args: str, error: BaseException | str) -> str:
    return f"{fn}({args}) is not valid due to exception {error}. You may make a mistake and need to fix it."


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """The first action of a reply. ``error``: why its arguments could not be read (the call is then
    answered with the exception text); ``args_text``: the arguments as written, for the feedback."""

    name: str
    args: tuple[object, ...] = ()
    kwargs: tuple[tuple[str, object], ...] = ()
    args_text: str = ""
    error: str | None = None

    def __str__(self) -> str:
        return f"{self.name}({self.args_text})"


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one reply did. ``screenshot``: an edit changed the page, so the caller renders the working
    folder and shows the new screenshot after ``feedback``; ``finished``: the agent said the end
    phrase; ``ok``: a tool ran without error (False for every failure text); ``changed``: the
    working folder's stylesheets changed (an edit or a revert), so the page differs from the last
    screenshot even where VAB shows none (after a revert)."""

    feedback: str
    call: ParsedCall | None = None
    screenshot: bool = False
    finished: bool = False
    ok: bool = False
    changed: bool = False


def _action_text(message: str) -> str | None:
    """What follows ``Action...:`` on the first action line, as VAB cuts a reply: everything after an
    ``Observation:`` is the model imagining the environment and is dropped."""
    message = message.split("Observation:")[0].strip().replace("Action:\n", "Action:")
    for line in message.split("\n"):
        line = line.strip().lstrip("*#-` ")
        if line.lower().startswith("action") and ":" in line:
            return line.split(":", 1)[1].strip().strip("`").strip()
    return None


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ValueError(f"only literal arguments are accepted, not {ast.unparse(node)[:80]!r}") from exc


def find_call(action: str) -> ParsedCall | None:
    """The first ``name(...)`` of an action text, its arguments read as literals. None when there is
    no call at all. A call that does not parse keeps its name and carries the parse error."""
    head, paren, _ = action.partition("(")
    name = head.rstrip()
    start = len(name)
    while start > 0 and (name[start - 1].isalnum() or name[start - 1] in "_."):
        start -= 1
    name = name[start:]
    if not paren:  # VAB accepts a bare ``revert_last_edit``
        word = action.split()[0].rstrip(".;,") if action.split() else ""
        return ParsedCall(word) if word == "revert_last_edit" else None
    if not name:
        return None
    text = action[len(head.rstrip()) - len(name):]
    # The longest prefix ending at a ')' that parses as one call: trailing prose is ignored.
    ends = [i + 1 for i, c in enumerate(text) if c == ")"]
    tree, error = None, "the call is not closed"
    for end in reversed(ends[:_MAX_CLOSERS]):  # bounded: a reply of many ')' costs a few parses
        try:
            candidate = ast.parse(text[:end], mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            error = f"SyntaxError: {getattr(exc, 'msg', exc)}"
            continue
        if isinstance(candidate, ast.Call):
            tree, text = candidate, text[:end]
            break
    args_text = text[len(name) + 1:].rsplit(")", 1)[0] if tree is not None else text[len(name) + 1:].rstrip(")")
    if tree is None:
        return ParsedCall(name, args_text=args_text.strip(), error=error)
    fn = ast.unparse(tree.func)
    try:
        args = []
        for arg in tree.args:
            if isinstance(arg, ast.Starred):
                raise ValueError("*arguments are not accepted")
            args.append(_literal(arg))
        kwargs = []
        for kw in tree.keywords:
            if kw.arg is None:
                raise ValueError("**arguments are not accepted")
            kwargs.append((kw.arg, _literal(kw.value)))
    except ValueError as exc:
        return ParsedCall(fn, args_text=args_text.strip(), error=str(exc))
    return ParsedCall(fn, tuple(args), tuple(kwargs), args_text.strip())


def matchable_selector(selector: str) -> str:
    """``selector`` without stateful pseudo-classes and pseudo-elements, so a parsed document can be
    matched against it (``.nav a:hover`` -> ``.nav a``, ``:focus`` -> ``*``)."""
    tokens: list[Node] = tinycss2.parse_component_value_list(selector, skip_comments=True)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, LiteralToken) and token.value == ":":
            j = i + 1
            if j < len(tokens) and isinstance(tokens[j], LiteralToken) and tokens[j].value == ":":
                j += 1
            if j < len(tokens) and isinstance(tokens[j], IdentToken) and tokens[j].lower_value in _STATEFUL:
                i = j + 1
                continue
        out.append(token.serialize())
        i += 1
    parts = []
    for part in "".join(out).split(","):
        part = part.strip()
        if not part or part[-1] in ">+~":
            part = f"{part} *".strip()
        parts.append(part)
    return ", ".join(parts)


class CssTools:
    """The four tools over one working folder's stylesheets; ``step(reply)`` answers one agent reply."""

    def __init__(self, sheets: Stylesheets) -> None:
        self.sheets = sheets
        self._soup: BeautifulSoup | None = None
        self.tools: dict[str, Callable[..., ToolResult]] = {
            "get_selectors_by_html_elements": self.get_selectors_by_html_elements,
            "select_rule": self.select_rule, "edit_rule": self.edit_rule, "revert_last_edit": self.revert_last_edit}

    @property
    def soup(self) -> BeautifulSoup:
        if self._soup is None:
            self._soup = BeautifulSoup((self.sheets.folder / "index.html").read_text(encoding="utf-8"), "html.parser")
        return self._soup

    def step(self, reply: str) -> ToolResult:
        """Run the first action of ``reply`` (or see the end phrase) and say what happened."""
        if END_PHRASE in reply:
            return ToolResult("The episode ends: you said the css style is fixed.", finished=True, ok=True)
        action = _action_text(reply)
        call = find_call(action) if action is not None else None
        if call is None:
            return ToolResult(NO_ACTION)
        if call.name not in self.tools:
            return ToolResult(unknown_function_text(call.name), call)
        if call.error is not None:
            return ToolResult(exception_text(call.name, call.args_text, call.error), call)
        tool = self.tools[call.name]
        kwargs = dict(call.kwargs)
        try:
            if call.name != "get_selectors_by_html_elements":
                inspect.signature(tool).bind(*call.args, **kwargs)
            result = tool(*call.args, **kwargs)
        except (TypeError, ValueError, RuleError, KeyError, AttributeError) as exc:
            return ToolResult(exception_text(call.name, call.args_text, exc), call)
        return ToolResult(result.feedback, call, result.screenshot, False, result.ok, result.changed)

    # -- the four tools --------------------------------------------------------------------------------
    def get_selectors_by_html_elements(self, *args: object, **kwargs: object) -> ToolResult:
        """``soup.find_all(*args, **kwargs)``, then the selectors of every rule matching one of the
        elements found (in cascade order, each once)."""
        found = [el for el in self.soup.find_all(*args, **kwargs) if isinstance(el, Tag)]  # type: ignore[arg-type]
        if not found:
            return ToolResult("find_all found no HTML element with these arguments. "
                              "Please describe the elements differently.", ok=True)
        wanted = {id(el) for el in found}
        selectors: list[str] = []
        for ref in self.sheets.rules():
            if ref.selector in selectors:
                continue
            try:
                matched = self.soup.select(matchable_selector(ref.selector))
            except Exception:  # noqa: BLE001 - a selector soupsieve cannot read matches nothing here
                continue
            if any(id(el) in wanted for el in matched):
                selectors.append(ref.selector)
        if not selectors:
            return ToolResult(f"No CSS rule applies to the {len(found)} element(s) found. "
                              "Please try other elements.", ok=True)
        listing = "".join(f"{i}. '{s}'\n" for i, s in enumerate(selectors, 1))
        return ToolResult(f"{len(selectors)} selector(s) have rules that match the elements found:\n{listing}", ok=True)

    def select_rule(self, selectorText: str) -> ToolResult:  # noqa: N803 - VAB's argument name
        """The rule(s) written with ``selectorText``, as ``{property: value}``."""
        refs = self.sheets.find(str(selectorText))
        if not refs:
            return ToolResult(f"There is no rule with the selector {selectorText}. Please try another selector.",
                              ok=True)
        shown = "; ".join(f"{self.sheets.read(r)} (in {r.file})" for r in refs)
        return ToolResult(f"The rule with the selector {selectorText} is: {shown}. Is it the rule you want to edit?",
                          ok=True)

    def edit_rule(self, selectorText: str, property: str, value: str) -> ToolResult:  # noqa: A002,N803
        """Set (or insert) ``property: value`` in the rule ``selectorText``; the page is re-rendered."""
        ref = self.sheets.set_property(str(selectorText), str(property), str(value))
        if ref is None:
            return ToolResult(f"There is no rule with the selector {selectorText}. Please try another selector.",
                              ok=True)
        return ToolResult(f"Done: {selectorText} now has {property}: {value}. The screenshot below shows the page "
                          "after this edit; call revert_last_edit() to undo it if it did not help.",
                          screenshot=True, ok=True, changed=True)

    def revert_last_edit(self) -> ToolResult:
        """Undo the last single edit."""
        if self.sheets.revert() is None:
            return ToolResult("There is no edit to revert.", ok=True)
        return ToolResult("Your last edit is undone.", ok=True, changed=True)
