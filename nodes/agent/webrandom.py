"""A random agent for browser environments: VWA actions that make sense on the current page.

``agent.random`` picks an action *name*; a browser needs whole actions (``click [12]``,
``type [7] [red bike] [1]``), with ids from the element list the environment just sent. This agent
draws one: an action kind by weight, an element id from the observation's Set-of-Marks or
accessibility-tree text (a field for ``type``, where the page has one), a ``goto`` to a page of the
site it is on, and a ``stop`` with a word drawn as the answer. It is the floor a model has to beat,
and it drives every action path of the environment and the sites' state.

Each episode draws from its own generator, seeded by the run seed and the episode id, so an
episode plays the same moves whichever replica plays it, run after run (given the same pages).
"""

from __future__ import annotations

import random
import re
import zlib
from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from kernel.sdk.node import Message, Node, NodeParams, on_input

__all__ = ["WebRandomAgent", "element_ids"]

KINDS = ("click", "type", "hover", "scroll", "press", "goto", "go_back", "stop")
ID_LINE = re.compile(r"^\s*\[(\d+)\]\s*(.*)$", re.M)
FIELD_HINT = re.compile(r"^\[(INPUT|TEXTAREA)\]|^(textbox|searchbox|combobox)\b", re.I)
KEYS = ("Enter", "Tab", "PageDown", "PageUp", "Escape", "ArrowDown")
PATHS = ("/", "/index.php?page=search", "/forums", "/search?q=red")


def element_ids(text: str) -> tuple[list[int], list[int]]:
    """The ids of an element list (``[12] [A] [Home]`` or ``[12] link 'Home'`` lines), and those of
    them that look like text fields."""
    ids, fields = [], []
    for match in ID_LINE.finditer(text or ""):
        element = int(match.group(1))
        ids.append(element)
        if FIELD_HINT.search(match.group(2)):
            fields.append(element)
    return ids, fields


class WebRandomParams(NodeParams):
    weights: dict[str, float] = Field(
        default_factory=lambda: {"click": 8, "type": 3, "hover": 1, "scroll": 2, "press": 1, "goto": 1,
                                 "go_back": 1, "stop": 1},
        description=f"relative weight of each action kind ({', '.join(KINDS)}); kinds left out are never drawn")
    words: list[str] = Field(default_factory=lambda: ["red", "bike", "chair", "blue", "camera", "N/A", "2", "yes"],
                             description="what type and stop draw their text from")

    @field_validator("weights")
    @classmethod
    def _kinds(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(KINDS))
        if unknown:
            raise ValueError(f"unknown action kind(s) {unknown}; allowed: {', '.join(KINDS)}")
        if any(w < 0 for w in weights.values()) or not any(w > 0 for w in weights.values()):
            raise ValueError("weights must be non-negative with at least one above 0")
        return weights


class WebRandomAgent(Node):
    """Reads ``obs`` (docs/environments.md, a browser's ``text``/``som``/``axtree`` and ``url``) and
    publishes one random but well-formed VWA action per observation."""

    inputs = ("obs",)
    outputs = ("action",)
    Params = WebRandomParams
    params: WebRandomParams

    async def setup(self) -> None:
        self.rng: dict[str, random.Random] = {}

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        await self.publish("action", self.choose(msg.body), step=msg.step)

    def _rng(self, obs: dict[str, Any]) -> random.Random:
        episode = str(obs.get("episode"))
        if obs.get("t") == 0 or episode not in self.rng:  # t 0 again: the episode is played afresh
            self.rng[episode] = random.Random(zlib.crc32(f"{self.seed}/{episode}".encode()))
            while len(self.rng) > 8:
                self.rng.pop(next(iter(self.rng)))
        return self.rng[episode]

    def choose(self, obs: dict[str, Any]) -> str:
        rng = self._rng(obs)
        text = str(obs.get("text") or obs.get("som") or obs.get("axtree") or "")
        ids, fields = element_ids(text)
        allowed = set(obs.get("actions") or KINDS)
        kinds = [k for k, w in self.params.weights.items() if w > 0 and k in allowed
                 and (ids or k not in ("click", "type", "hover"))]
        if not kinds:
            return "stop [N/A]"
        kind = rng.choices(kinds, weights=[self.params.weights[k] for k in kinds])[0]
        word = rng.choice(self.params.words) if self.params.words else "N/A"
        if kind in ("click", "hover"):
            return f"{kind} [{rng.choice(ids)}]"
        if kind == "type":
            return f"type [{rng.choice(fields or ids)}] [{word}] [{rng.choice((0, 1))}]"
        if kind == "scroll":
            return f"scroll [{rng.choice(('down', 'up'))}]"
        if kind == "press":
            return f"press [{rng.choice(KEYS)}]"
        if kind == "goto":
            here = urlsplit(str(obs.get("url") or ""))
            if here.scheme in ("http", "https") and here.netloc:
                return f"goto [{here.scheme}://{here.netloc}{rng.choice(PATHS)}]"
            return "go_back"
        if kind == "go_back":
            return "go_back"
        return f"stop [{word}]"
