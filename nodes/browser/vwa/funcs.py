"""VWA's ``func:`` strings parsed into a call, never ``eval``-ed.

VWA writes evaluator URLs and locators as Python calls (``func:get_query_text(__page__, '.price')``,
``func:reddit_get_post_url('__last_url__')``) and runs them with ``eval``. Task files come from users,
so here a call is parsed with ``ast`` and only accepted in one shape: a bare helper name applied to
literals and the two markers VWA substitutes, ``__page__`` (the live page) and ``__last_url__`` (its URL).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

PAGE = "__page__"
LAST_URL = "__last_url__"


class PageMarker:
    """Stands for ``__page__`` among a call's arguments until the call is made."""

    def __repr__(self) -> str:
        return PAGE


PAGE_ARG = PageMarker()


class FuncSyntaxError(ValueError):
    """A ``func:`` string that is not ``name(literal or marker, ...)``."""


@dataclass(frozen=True)
class FuncCall:
    name: str
    args: tuple[Any, ...]  # literals, PAGE_ARG, or strings that may hold LAST_URL

    def bind(self, last_url: str, page: Any) -> tuple[Any, ...]:
        """The arguments with ``__page__`` as the page and ``__last_url__`` as the URL it is on."""
        out: list[Any] = []
        for arg in self.args:
            if arg is PAGE_ARG:
                out.append(page)
            elif isinstance(arg, str):
                out.append(arg.replace(LAST_URL, last_url))
            else:
                out.append(arg)
        return tuple(out)


def parse_func(text: str) -> FuncCall:
    """``func:name(args)`` (the prefix is optional) -> FuncCall; FuncSyntaxError says what is wrong."""
    body = text.strip()
    if body.startswith("func:"):
        body = body[len("func:"):].strip()
    try:
        tree = ast.parse(body, mode="eval").body
    except SyntaxError as e:
        raise FuncSyntaxError(f"not a call: {body!r} ({e.msg})") from None
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name):
        raise FuncSyntaxError(f"expected helper_name(args...), got {body!r}")
    if tree.keywords:
        raise FuncSyntaxError(f"keyword arguments are not allowed in {body!r}")
    return FuncCall(tree.func.id, tuple(_argument(a, body) for a in tree.args))


def _argument(node: ast.expr, body: str) -> Any:
    if isinstance(node, ast.Name):
        if node.id in (PAGE, "page"):  # VWA rewrites __page__ to page before eval; accept both
            return PAGE_ARG
        if node.id == LAST_URL:
            return LAST_URL
        raise FuncSyntaxError(f"unknown name {node.id!r} in {body!r} (allowed: {PAGE}, {LAST_URL}, literals)")
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise FuncSyntaxError(f"argument {ast.unparse(node)!r} of {body!r} is not a literal") from None
