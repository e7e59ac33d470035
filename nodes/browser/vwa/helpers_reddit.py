"""VWA's ``func:`` helpers for the forum (Reddit, on Postmill): who commented last on a post, and to whom.

Each reads the comment tree of the page it is given (a post page, or a comment's page), as the page
shows it: the local forum (nodes/browser/sites/forum.py) and a real Postmill share the markup read
here, so the same task scores against either. A comment is an ``.comment`` element; its replies are
the ``.comment`` elements nested in it; its author is its own ``.fg-inherit`` link, its text its own
``.comment__content``, its score its own ``.vote__net-score`` and its time its own ``time[datetime]``
("its own": not one of a reply's). The post stands above the top-level comments, named by its
``.submission__submitter``.

VWA's semantics, kept: "latest" is by the comments' times, the first in page order winning a tie; a
user's comments nested below another of their own comments are not looked at for "the parent of the
latest comment"; nothing found is ``{}`` or ``""``. Two accidents of VWA's code are not kept: it
treats the page's first author link, score and comment text as one more comment by the post's
submitter (so a post by the user could answer as their latest comment, with another comment's text),
and a top-level comment's parent is that mixture; here the post's parent entry has the post's own
submitter, score, text and time.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from nodes.browser.vwa.helpers import REGISTRY, HelperContext, _require_page

# The comments of the page in document order, each with the index of the comment it replies to.
COMMENT_TREE_JS = """
() => {
  const own = (el, selector) => {
    for (const found of el.querySelectorAll(selector)) if (found.closest('.comment') === el) return found;
    return null;
  };
  const text = (node) => node ? (node.innerText ?? node.textContent ?? '') : null;
  const stamp = (node) => node ? (node.getAttribute('datetime') || '') : '';
  const comments = [...document.querySelectorAll('.comment')];
  const index = new Map(comments.map((el, i) => [el, i]));
  const rows = comments.map((el) => {
    const above = el.parentElement ? el.parentElement.closest('.comment') : null;
    return {parent: above ? index.get(above) : null, username: text(own(el, '.fg-inherit')),
            net_score: text(own(el, '.vote__net-score')), content: text(own(el, '.comment__content')),
            time: stamp(own(el, 'header time') || own(el, 'time'))};
  });
  const post = document.querySelector('.submission');
  const inPost = (selector) => post ? post.querySelector(selector) : null;
  return {comments: rows, post: {
    username: text(document.querySelector('.submission__submitter')),
    net_score: text(inPost('.vote__net-score') || inPost('.vote-count')),
    content: text(document.querySelector('.submission__body') || inPost('.submission__title')),
    time: stamp(inPost('time'))}};
}
"""

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)


def _time(value: Any) -> datetime:
    """A ``datetime`` attribute as an aware time; one that does not parse never counts as latest."""
    try:
        parsed = datetime.fromisoformat(str(value).strip())
    except ValueError:
        return EARLIEST
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


def _score(value: Any) -> int | None:
    text = re.sub(r"[\u2212\u2013]", "-", str(value or "")).replace(",", "").strip()
    try:
        return int(text)
    except ValueError:
        return None


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    """A comment (or the post) as VWA's helpers return it."""
    return {"username": (row.get("username") or "").strip(), "net_score": _score(row.get("net_score")),
            "content": row.get("content") or "", "time": row.get("time") or ""}


async def _tree(page: Any, helper: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    found = await _require_page(page, helper).evaluate(f"({COMMENT_TREE_JS})()")
    if not isinstance(found, dict):
        return [], {}
    return list(found.get("comments") or []), dict(found.get("post") or {})


def _latest(rows: list[dict[str, Any]], candidates: list[int]) -> int | None:
    best: int | None = None
    for i in candidates:  # in page order: a later comment with the same time does not displace it
        if best is None or _time(rows[i]["time"]) > _time(rows[best]["time"]):
            best = i
    return best


def _by(rows: list[dict[str, Any]], username: str) -> list[bool]:
    return [(row.get("username") or "").strip() == username for row in rows]


@REGISTRY.register("reddit_get_latest_comment_obj_by_username")
async def reddit_get_latest_comment_obj_by_username(ctx: HelperContext, page: Any, username: str) -> dict[str, Any]:
    """The user's latest comment on the page: {username, net_score, content, time}, or {} when none."""
    rows, _ = await _tree(page, "reddit_get_latest_comment_obj_by_username")
    mine = _by(rows, username)
    latest = _latest(rows, [i for i in range(len(rows)) if mine[i]])
    return {} if latest is None else _entry(rows[latest])


@REGISTRY.register("reddit_get_latest_comment_content_by_username")
async def reddit_get_latest_comment_content_by_username(ctx: HelperContext, page: Any, username: str) -> str:
    """The text of the user's latest comment on the page ("" when none)."""
    return str((await reddit_get_latest_comment_obj_by_username(ctx, page, username)).get("content", ""))


@REGISTRY.register("reddit_get_parent_comment_obj_of_latest_comment_by_username")
async def reddit_get_parent_comment_obj_of_latest_comment_by_username(ctx: HelperContext, page: Any,
                                                                      username: str) -> dict[str, Any]:
    """What the user's latest comment replies to: the comment above it, or the post for a top-level
    comment ({username, net_score, content, time}); {} when the user has no comment there. The
    user's comments inside a thread under one of their own comments are not looked at (VWA's walk
    stops at the user's comments)."""
    rows, post = await _tree(page, "reddit_get_parent_comment_obj_of_latest_comment_by_username")
    mine = _by(rows, username)
    reachable = []
    for i, row in enumerate(rows):
        parent = row.get("parent")
        above_mine = False
        while parent is not None and 0 <= parent < len(rows):  # the walk from the top stops at the user's comments
            if mine[parent]:
                above_mine = True
                break
            parent = rows[parent].get("parent")
        if mine[i] and not above_mine:
            reachable.append(i)
    latest = _latest(rows, reachable)
    if latest is None:
        return {}
    parent = rows[latest].get("parent")
    return _entry(post) if parent is None else _entry(rows[parent])


@REGISTRY.register("reddit_get_parent_comment_username_of_latest_comment_by_username")
async def reddit_get_parent_comment_username_of_latest_comment_by_username(ctx: HelperContext, page: Any,
                                                                           username: str) -> str:
    """Whom the user's latest comment replies to: the parent comment's author, or the post's submitter
    for a top-level comment ("" when the user has no comment there)."""
    parent = await reddit_get_parent_comment_obj_of_latest_comment_by_username(ctx, page, username)
    return str(parent.get("username", ""))
