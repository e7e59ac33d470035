"""One scripted policy in two action languages, for the MiniWoB cross-check of BrowserGym's path
and framebus's own (tests/test_browsergym_env.py): click the button the goal names (``Click on the
"ONE" button.``, or the only button for click-test's ``Click the button.``).

framebus's browser node lists elements as ``[12] [BUTTON] [ONE]`` (its Set-of-Marks text) and
takes ``click [12]``; BrowserGym's tree lists them as ``[12] button 'ONE'`` and takes
``click("12")``. The policy is the same; only the reading and the writing differ."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from kernel.sdk.node import Message, Node, NodeParams, on_input

NAMED = re.compile(r'"([^"]+)"')
FRAMEBUS = re.compile(r"^\s*\[(\d+)\]\s*\[BUTTON\]\s*\[([^\]]*)\]", re.M | re.I)
BROWSERGYM = re.compile(r"^\s*\[([^\]]+)\]\s*button\s+'([^']*)'", re.M)


def buttons(text: str, language: str) -> list[tuple[str, str]]:
    """(element id, label) of the buttons in an observation's text."""
    return (FRAMEBUS if language == "framebus" else BROWSERGYM).findall(text or "")


def choose(obs: dict[str, Any], language: str) -> str | None:
    found = buttons(str(obs.get("text") or obs.get("som") or ""), language)
    named = NAMED.search(str(obs.get("goal") or ""))
    pick = next((b for b, label in found if named and label.strip() == named.group(1)), None)
    if pick is None and len(found) == 1 and named is None:
        pick = found[0][0]
    if pick is None:
        return None
    return f"click [{pick}]" if language == "framebus" else f'click("{pick}")'


class ButtonParams(NodeParams):
    language: str = Field("framebus", pattern="^(framebus|browsergym)$")


class NamedButtonClicker(Node):
    inputs = ("obs",)
    outputs = ("action",)
    Params = ButtonParams
    params: ButtonParams

    @on_input("obs")
    async def act(self, msg: Message) -> None:
        await self.publish("action", choose(msg.body, self.params.language), step=msg.step)
