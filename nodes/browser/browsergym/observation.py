"""BrowserGym's observation in framebus's words: the goal, the accessibility tree as text with
BrowserGym's element ids (``bid``), the screenshot as the frame, and the click on every visible
clickable element as a listed action, so an agent that picks from ``obs["actions"]`` (the random
agent) plays a BrowserGym task as it plays any other world.

Pure functions of the dict BrowserGym returns; the node (``node``) owns the browser.
"""

from __future__ import annotations

import json
import re
from typing import Any

MIN_VISIBILITY = 0.5  # BrowserGym's extra properties give each element its visible fraction


def goal_text(obs: dict[str, Any]) -> str:
    """The task in words: the text parts of BrowserGym's goal messages (its ``goal_object``), else its
    legacy ``goal`` string."""
    parts: list[str] = []
    for message in obs.get("goal_object") or ():
        if isinstance(message, dict) and message.get("type") == "text" and isinstance(message.get("text"), str):
            parts.append(message["text"])
    if parts:
        return "\n".join(parts)
    goal = obs.get("goal")
    return goal if isinstance(goal, str) else ""


def _bid_key(bid: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", bid)
    return (int(digits) if digits else 1 << 30, bid)


def clicks(extra_properties: dict[str, dict[str, Any]], limit: int) -> list[str]:
    """``click("bid")`` for the visible clickable elements, in page order (BrowserGym numbers them
    as it walks the DOM), at most ``limit``."""
    bids = [bid for bid, props in extra_properties.items()
            if props.get("clickable") and (props.get("visibility") or 0.0) >= MIN_VISIBILITY]
    return [f"click({json.dumps(bid)})" for bid in sorted(bids, key=_bid_key)[:max(0, limit)]]


def page_text(obs: dict[str, Any]) -> str:
    """The page as the text-only agent reads it: the open tabs, then the accessibility tree of the
    visible elements with their ids and which are clickable (BrowserGym's own rendering of it)."""
    from browsergym.utils.obs import flatten_axtree_to_str

    urls = obs.get("open_pages_urls") or ()
    titles = obs.get("open_pages_titles") or ()
    tabs = "\n".join(f"Tab {i}: {title} ({url})" for i, (title, url) in enumerate(zip(titles, urls, strict=False)))
    tree = flatten_axtree_to_str(obs["axtree_object"], extra_properties=obs.get("extra_element_properties") or {},
                                 with_clickable=True, filter_visible_only=True) if obs.get("axtree_object") else ""
    return f"{tabs}\n\n{tree}".strip()
