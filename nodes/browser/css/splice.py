"""VAB-CSS's error recovery for training (``launch export --splice-recovery``, kernel.sdk.splicing).

VAB collected CSS trajectories with GPT-4o, hinted where it failed, and joined a failure in the
standard setting with the success in the lenient one (the rule to fix given) into one trajectory
that tries, fails and then fixes the page. Here: a failed episode without a hint and a successful
one with ``hint`` set, on the same instance. The failure's closing claim ("I have fixed the css
style", which was false) is dropped, the success's turns follow it with the hint cut out of every
text, and each later decision's history holds the failure's turns before its own, as one
conversation would.
"""

from __future__ import annotations

import copy
from typing import Any

from kernel.sdk.splicing import DecisionData, EpisodeData
from nodes.browser.css.env import HINT_OPEN
from nodes.browser.css.tools import END_PHRASE


def task(episode: EpisodeData) -> str | None:
    instance = episode["metrics"].get("instance")
    return str(instance) if instance else None


def _hinted(episode: EpisodeData) -> bool:
    return episode["metrics"].get("hint") is not None


def _succeeded(episode: EpisodeData) -> bool:
    return bool(episode["metrics"].get("success"))


def without_hint(text: str) -> str:
    """``text`` without the lenient setting's hint paragraph (css.env writes it as one)."""
    return "\n\n".join(p for p in text.split("\n\n") if not p.lstrip().startswith(HINT_OPEN))


def _clean(message: dict[str, Any]) -> dict[str, Any]:
    message = copy.deepcopy(message)
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = without_hint(content)
    elif isinstance(content, list):
        for part in content:
            if part.get("type") == "text":
                part["text"] = without_hint(str(part.get("text", "")))
    return message


def join(failed: EpisodeData, succeeded: EpisodeData) -> list[DecisionData] | None:
    if _succeeded(failed) or _hinted(failed) or not _succeeded(succeeded) or not _hinted(succeeded):
        return None
    tried = list(failed["decisions"])
    if tried and END_PHRASE in tried[-1]["response"]:
        tried = tried[:-1]  # the failure's claim that the page was fixed: it was not
    if not tried or not succeeded["decisions"]:
        return None
    earlier: list[dict[str, Any]] = []  # the failure as one conversation: each turn, then its reply
    for d in tried:
        earlier += [d["turn"], {"role": "assistant", "content": d["response"]}]
    out: list[DecisionData] = [copy.deepcopy(d) for d in tried]
    for d in succeeded["decisions"]:
        rules = [m for m in d["head"] if m.get("role") == "system"]
        own = [_clean(m) for m in d["head"] if m.get("role") != "system"]
        out.append({**d, "head": [*rules, *copy.deepcopy(earlier), *own], "turn": _clean(d["turn"])})
    for i, d in enumerate(out):
        d["t"] = i
    return out
