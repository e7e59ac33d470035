"""A project's stylesheets as editable rules, written back into a per-episode working folder.

Why tinycss2 and not regexes: a selector or value may hold braces, quotes, commas and comments, and
the rules must round-trip: an untouched rule is written back byte for byte (tinycss2 keeps every
token, whitespace and comment), and an edited rule has only its declaration block rebuilt. The
shipped project is never opened for writing: ``Workspace.create`` copies it first.

Only top-level style rules are editable (as VAB's tool, which walks a sheet's style rules); an
at-rule such as ``@media`` is kept verbatim. Every edit is saved at once and pushed on a stack, so
``revert`` undoes the last single edit exactly, down to the bytes of the file.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import tinycss2
from bs4 import BeautifulSoup
from tinycss2.ast import Declaration, IdentToken, LiteralToken, Node, QualifiedRule, WhitespaceToken

__all__ = ["RuleError", "RuleRef", "Stylesheets", "Workspace", "normalize_selector", "stylesheet_paths"]

_COMBINATORS = frozenset({">", "+", "~"})


class RuleError(ValueError):
    """An edit that cannot be made (a malformed property or value); its text is told to the agent."""


def normalize_selector(text: str) -> str:
    """One spelling per selector list, as a browser's ``selectorText`` does: whitespace collapsed,
    ``", "`` between selectors and one space around combinators. Comparing normalized texts lets
    ``.a>b`` and ``.a > b`` name the same rule."""
    out: list[str] = []
    for token in tinycss2.parse_component_value_list(text, skip_comments=True):
        if isinstance(token, WhitespaceToken):
            out.append(" ")
        elif isinstance(token, LiteralToken) and token.value == ",":
            out.append(", ")
        elif isinstance(token, LiteralToken) and token.value in _COMBINATORS:
            out.append(f" {token.value} ")
        else:
            out.append(token.serialize())
    return " ".join("".join(out).split()).replace(" ,", ",")


def stylesheet_paths(folder: Path, page: str = "index.html") -> list[str]:
    """The stylesheets ``page`` links, in cascade order, relative to ``folder``."""
    soup = BeautifulSoup((folder / page).read_text(encoding="utf-8"), "html.parser")
    hrefs = []
    for link in soup.find_all("link", href=True):
        rel = link.get("rel") or []
        if "stylesheet" in [r.lower() for r in rel]:
            hrefs.append(str(link["href"]).split("?")[0].lstrip("/"))
    return hrefs


@dataclass(frozen=True, slots=True)
class RuleRef:
    """Where a rule lives: its file, its index among that file's top-level nodes, and its selector."""

    file: str
    index: int
    selector: str


def _declarations(rule: QualifiedRule) -> list[Declaration]:
    return [d for d in tinycss2.parse_declaration_list(rule.content, skip_comments=True, skip_whitespace=True)
            if isinstance(d, Declaration)]


def _value_text(decl: Declaration) -> str:
    text = tinycss2.serialize(decl.value).strip()
    return f"{text} !important" if decl.important else text


def _check_property(name: str) -> str:
    tokens = tinycss2.parse_component_value_list(name.strip())
    if len(tokens) != 1 or not isinstance(tokens[0], IdentToken):
        raise RuleError(f"{name!r} is not a CSS property name")
    return tokens[0].value.lower()


def _check_value(value: str) -> str:
    """A value must stay inside its declaration: no ``;``, no braces, no unbalanced tokens."""
    text = str(value).strip()
    if not text:
        raise RuleError("the value is empty")
    decls = tinycss2.parse_declaration_list(f"x: {text}", skip_comments=True, skip_whitespace=True)
    if len(decls) != 1 or not isinstance(decls[0], Declaration) or not decls[0].value:
        raise RuleError(f"{value!r} is not a single CSS value")
    for token in decls[0].value:
        if token.type in ("error", "{} block") or (isinstance(token, LiteralToken) and token.value in ";{}"):
            raise RuleError(f"{value!r} is not a single CSS value")
    return text


def _block(decls: list[tuple[str, str]]) -> list[Node]:
    text = "".join(f"\n  {name}: {value};" for name, value in decls) + "\n"
    return tinycss2.parse_component_value_list(text)


class Stylesheets:
    """The parsed stylesheets of one folder: find, read and edit rules; ``save`` writes them back."""

    def __init__(self, folder: str | Path, page: str = "index.html") -> None:
        self.folder = Path(folder)
        self.files = stylesheet_paths(self.folder, page)
        self.nodes: dict[str, list[Node]] = {
            f: tinycss2.parse_stylesheet((self.folder / f).read_text(encoding="utf-8"),
                                         skip_comments=False, skip_whitespace=False)
            for f in self.files}
        self._history: list[tuple[RuleRef, list[Node]]] = []

    # -- finding ------------------------------------------------------------------------------------
    def rules(self) -> list[RuleRef]:
        """Every top-level style rule, in cascade order (file by file, top to bottom)."""
        return [RuleRef(f, i, normalize_selector(tinycss2.serialize(node.prelude)))
                for f in self.files for i, node in enumerate(self.nodes[f]) if isinstance(node, QualifiedRule)]

    def find(self, selector: str) -> list[RuleRef]:
        """The rules whose selectorText is ``selector`` (normalized), in cascade order."""
        wanted = normalize_selector(selector)
        return [r for r in self.rules() if r.selector == wanted]

    def _rule(self, ref: RuleRef) -> QualifiedRule:
        node = self.nodes[ref.file][ref.index]
        assert isinstance(node, QualifiedRule)
        return node

    def _target(self, selector: str) -> RuleRef | None:
        """The rule an edit of ``selector`` changes: the last one with that text, the one that wins
        the cascade among equals."""
        found = self.find(selector)
        return found[-1] if found else None

    # -- reading ------------------------------------------------------------------------------------
    def read(self, ref: RuleRef) -> dict[str, str]:
        """The rule's declarations as ``{property: value}`` (the last one of a repeated property wins)."""
        return {d.lower_name: _value_text(d) for d in _declarations(self._rule(ref))}

    def text(self, ref: RuleRef) -> str:
        """The rule as written in its file."""
        return self._rule(ref).serialize()

    # -- editing ------------------------------------------------------------------------------------
    def set_property(self, selector: str, prop: str, value: str) -> RuleRef | None:
        """Set ``prop`` to ``value`` in the rule ``selector`` (replacing it in place, or appending it
        when the rule lacks it). None when no rule has that selector."""
        name, text = _check_property(prop), _check_value(value)
        ref = self._target(selector)
        if ref is None:
            return None
        decls = [(d.lower_name, _value_text(d)) for d in _declarations(self._rule(ref))]
        if any(n == name for n, _ in decls):
            last = max(i for i, (n, _) in enumerate(decls) if n == name)
            decls = [(n, text if i == last else v) for i, (n, v) in enumerate(decls) if n != name or i == last]
        else:
            decls.append((name, text))
        self._replace(ref, decls)
        return ref

    def remove_property(self, selector: str, prop: str) -> RuleRef | None:
        """Remove every declaration of ``prop`` from the rule ``selector``. None when no rule has that
        selector or the rule does not declare ``prop``."""
        name = _check_property(prop)
        ref = self._target(selector)
        if ref is None:
            return None
        decls = [(d.lower_name, _value_text(d)) for d in _declarations(self._rule(ref))]
        if not any(n == name for n, _ in decls):
            return None
        self._replace(ref, [(n, v) for n, v in decls if n != name])
        return ref

    def _replace(self, ref: RuleRef, decls: list[tuple[str, str]]) -> None:
        rule = self._rule(ref)
        self._history.append((ref, rule.content))
        rule.content = _block(decls)
        self.save(ref.file)

    def revert(self) -> RuleRef | None:
        """Undo the last single edit not yet undone (the file is restored byte for byte); None when
        there is none."""
        if not self._history:
            return None
        ref, content = self._history.pop()
        self._rule(ref).content = content
        self.save(ref.file)
        return ref

    @property
    def edits(self) -> int:
        """How many edits ``revert`` can still undo."""
        return len(self._history)

    # -- writing ------------------------------------------------------------------------------------
    def serialize(self, file: str) -> str:
        return tinycss2.serialize(self.nodes[file])

    def save(self, file: str | None = None) -> None:
        """Write one stylesheet (or all) back into the folder."""
        for f in [file] if file else self.files:
            (self.folder / f).write_text(self.serialize(f), encoding="utf-8")


class Workspace(Stylesheets):
    """A project copied into a per-episode working folder, its stylesheets loaded for editing."""

    def __init__(self, folder: str | Path, source: str | Path | None = None, page: str = "index.html") -> None:
        self.source = Path(source) if source is not None else None
        super().__init__(folder, page)

    @classmethod
    def create(cls, project: str | Path, folder: str | Path, page: str = "index.html") -> Workspace:
        """Copy ``project`` into ``folder`` (which must not exist yet) and load the copy."""
        shutil.copytree(project, folder)
        return cls(folder, project, page)

    @property
    def html(self) -> str:
        return (self.folder / "index.html").read_text(encoding="utf-8")
