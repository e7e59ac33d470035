"""The VisualWebArena agent setting for browser environments: what one episode remembers and when
it stops on its own.

VWA gives its agents no trajectory memory, only the previous action (with the reason it failed, if
it did), and ends an episode early when the agent is stuck (spec §2.4): after ``max_steps``
actions, after ``parse_failures`` unreadable replies in a row, after the same action
``repeats`` times in a row, or the same ``type`` action ``repeats`` times anywhere. An early stop is
sent as a ``stop`` action, so the judges still score the page the agent left behind.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from nodes.agent.memory import Turn
from nodes.agent.webactions import HostMap

__all__ = ["EarlyStopLimits", "WebEpisode", "browser_template", "load_image", "stop_action"]

NO_ACTION = "None"  # VWA's previous action on the first step
MAX_IMAGE_BYTES = 32 * 1024 * 1024
IMAGE_TIMEOUT_S = 30.0
_SOM_LINE = re.compile(r"\[\d*\] \[[^\]]*\] \[")


class EarlyStopLimits(BaseModel):
    """VWA's early-stop thresholds (``run.py`` defaults)."""

    model_config = ConfigDict(extra="forbid")
    max_steps: int = Field(30, ge=1, description="actions before the agent stops the episode")
    parse_failures: int = Field(3, ge=1, description="unreadable replies in a row that stop the episode")
    repeats: int = Field(5, ge=1, description="the same action this many times in a row (a type action: "
                         "this many times in the episode) stops it")


def browser_template(obs: Mapping[str, Any]) -> str:
    """The bundled template for a browser observation: Set-of-Marks when the text is the element
    list and a screenshot comes with it, the multimodal tree when a screenshot comes with other
    text, the accessibility tree (text only) without one."""
    if obs.get("frame") is None:
        return "browser_axtree"
    text = str(obs.get("text") or "")
    first = next((line for line in text.splitlines() if line.strip()), "")
    is_som = (obs.get("som") is not None and text == obs.get("som")) or bool(_SOM_LINE.match(first))
    return "browser_som" if is_som else "browser_mm_axtree"


def stop_action(answer: str) -> str:
    """``stop [answer]`` on one line, short enough to read in a results table."""
    return f"stop [{' '.join(answer.split())[:300]}]"


def load_image(ref: str, hosts: HostMap) -> np.ndarray:
    """An input image as an RGB array, from a file path, a ``file://`` or ``data:`` URL, or an
    http(s) URL (pretty host names are fetched from the local site). Blocking: run it in a thread."""
    from PIL import Image

    ref = ref.strip()
    if ref.startswith("data:"):
        head, _, payload = ref.partition(",")
        if ";base64" not in head:
            raise ValueError("a data URL image must be base64-encoded")
        try:
            data = base64.b64decode(payload, validate=True)
        except binascii.Error as exc:
            raise ValueError(f"the data URL is not valid base64 ({exc})") from None
    elif ref.startswith(("http://", "https://")):
        url = hosts.to_local(ref)
        with urllib.request.urlopen(url, timeout=IMAGE_TIMEOUT_S) as response:  # noqa: S310 (http(s) only)
            data = response.read(MAX_IMAGE_BYTES + 1)
    else:
        path = Path(ref.removeprefix("file://")).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"no image file {path} (relative paths are read from {Path.cwd()})")
        data = path.read_bytes()
    if len(data) > MAX_IMAGE_BYTES:
        raise ValueError(f"the image is larger than {MAX_IMAGE_BYTES // 2**20} MiB")
    with Image.open(io.BytesIO(data)) as image:
        return np.asarray(image.convert("RGB"))


def _cut(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, at a line end where there is one (a page is read top
    down, so the end goes)."""
    if limit is None or len(text) <= limit:
        return text
    head = text[:limit]
    return head.rsplit("\n", 1)[0] if "\n" in head else head


@dataclass
class WebEpisode:
    """One browser episode as the agent sees it: the host mapping, the previous action and the
    actions taken so far (``None`` for an unreadable reply), for the early stop."""

    hosts: HostMap
    limits: EarlyStopLimits
    max_text_chars: int | None = None  # VWA cuts the observation text (3840 tokens; 640 for short contexts)
    history: list[str | None] = field(default_factory=list)
    previous: str = NO_ACTION
    goal_images: list[np.ndarray] | None = None  # loaded on the first step
    image_error: str | None = None

    def early_stop(self) -> str | None:
        """Why the episode should stop now, checked before each model call in VWA's order."""
        lim, seen = self.limits, self.history
        if len(seen) >= lim.max_steps:
            return f"reached the step limit ({lim.max_steps} actions)"
        if len(seen) >= lim.parse_failures and all(a is None for a in seen[-lim.parse_failures:]):
            return f"{lim.parse_failures} replies in a row had no readable action"
        if not seen or seen[-1] is None:
            return None
        last = seen[-1]
        if last.startswith("type ") and sum(a == last for a in seen) >= lim.repeats:
            return f"the same typing action {lim.repeats} times: {last}"
        if not last.startswith("type ") and len(seen) >= lim.repeats and all(a == last for a in seen[-lim.repeats:]):
            return f"the same action {lim.repeats} times in a row: {last}"
        return None

    def shown(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        """The observation as the model sees it: pretty host names in the text, URL, tab titles and
        error, and the previous action (with its error) as a template field."""
        pretty = self.hosts.to_pretty
        out = dict(obs)
        out["text"] = _cut(pretty(str(obs.get("text") or "")), self.max_text_chars)
        out["url"] = pretty(str(obs.get("url") or ""))
        if isinstance(obs.get("tabs"), list):
            out["tabs"] = [pretty(str(t)) for t in obs["tabs"]]
        error = pretty(str(obs.get("last_action_error") or ""))
        out["last_action_error"] = error
        previous = self.previous
        if error and self.history and self.history[-1] is not None:
            previous = f"{previous}\n(this action failed: {error})"
        out["previous_action"] = previous
        return out

    def turn(self, prompt: str, obs: Mapping[str, Any], images: bool) -> Turn:
        """The user turn: the observation text is kept beside the pictures, each of which is
        introduced by its label as in VWA (the page screenshot first, then the input images)."""
        frames: list[np.ndarray] = []
        labels: list[str] = []
        if images:
            if obs.get("frame") is not None:
                frames.append(obs["frame"])
                labels.append("current page screenshot")
            for i, image in enumerate(self.goal_images or (), start=1):
                frames.append(image)
                labels.append(f"input image {i}")
        labels = [f"{'IMAGES: ' if n == 1 else ''}({n}) {label}" for n, label in enumerate(labels, start=1)]
        return Turn(prompt=prompt, text=str(obs.get("text", "")), frames=frames, labels=labels, keep_text=True)

    def took(self, action: str | None, reply: str) -> str | None:
        """Note the agent's action (None: the reply was unreadable) and return what to send: the
        action with its URLs mapped back to the local sites, or None (VWA's NONE action)."""
        self.history.append(action)
        if action is None:
            quoted = " ".join(reply.split())[:300]
            self.previous = (f'Your reply "{quoted}" held no action I could read. Put exactly one action '
                             f"inside a pair of ``` with each argument in [], e.g. ```click [12]```.")
            return None
        self.previous = action
        return self.hosts.to_local(action)
