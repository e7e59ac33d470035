"""The agent's memory as a multi-turn chat, with separate windows for actions and observations.

MageBench keeps two windows because most vision models take few images: action memory (AM) is how
many past exchanges (the observation turn and the model's reply, hence its action) stay in the
chat; observation memory (OM, at most AM + 1) is how many of the newest observations, the current
one included, keep their image or text. Older turns keep their words but lose the observation,
which is replaced by a short placeholder so the model knows something was there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nodes.agent.parsers import reply_fields

DROPPED = "(this earlier observation is no longer shown)"
IMAGE_POINTER = "(shown in the image)"
PICTURE_ABOVE = "(the screenshot above)"  # StepMemory puts each picture before its words, as V-MAGE does
IMAGE_OMITTED = "Omitted."  # VAB's embodied tasks: an earlier turn keeps its words, the picture is gone
ALL = -1  # a window that keeps everything


@dataclass
class Turn:
    """One observation as the model saw it, and the reply it gave (None until it answered)."""

    prompt: str  # the template's turn text, with ``{observation}`` still unfilled
    text: str  # the observation's text rendering
    frames: list[np.ndarray] = field(default_factory=list)
    reply: str | None = None
    labels: list[str] = field(default_factory=list)  # a text part before each frame (VWA: "(1) current page ...")
    keep_text: bool = False  # show the text rendering beside the frames, not a pointer to them
    info: str | None = None  # what the environment said after this turn's action (the next observation's ``info``)
    text_history: bool = False  # once its picture is dropped, the turn keeps its text (VAB's feedback lines)


def window(value: Any, name: str) -> int:
    """A window size from a param: a non-negative int or ``all``."""
    if value in ("all", None, ALL):
        return ALL
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ValueError(f"param {name} must be a non-negative integer or 'all', got {value!r}")


class ChatMemory:
    def __init__(self, am: int, om: int, images: bool) -> None:
        self.am, self.om, self.images = am, om, images
        self.turns: list[Turn] = []

    def clear(self) -> None:
        self.turns.clear()

    def add(self, turn: Turn) -> None:
        self.turns.append(turn)
        if self.am != ALL and len(self.turns) > self.am + 1:
            del self.turns[: len(self.turns) - self.am - 1]  # never shown again: do not hold their frames

    def messages(self, head: list[dict[str, Any]], retry: list[tuple[str, str]] = ()) -> list[dict[str, Any]]:
        """The chat for the newest turn: ``head`` (system prompt), the past turns AM keeps, the newest
        turn, then any failed replies with the regenerate request that followed each."""
        *past, current = self.turns
        if self.am != ALL:
            past = past[max(0, len(past) - self.am):] if self.am else []
        kept = [*past, current]
        shown = len(kept) if self.om == ALL else self.om
        out = list(head)
        for i, turn in enumerate(kept):
            out.append({"role": "user", "content": self._content(turn, show=i >= len(kept) - shown)})
            if turn is not current:
                out.append({"role": "assistant", "content": turn.reply or ""})
        for reply, regenerate in retry:
            out += [{"role": "assistant", "content": reply}, {"role": "user", "content": regenerate}]
        return out

    def _content(self, turn: Turn, *, show: bool) -> str | list[dict[str, Any]]:
        if not show:
            if turn.text_history:
                return turn.prompt.replace("{observation}", f"{turn.text} {IMAGE_OMITTED}" if turn.frames else turn.text)
            return turn.prompt.replace("{observation}", DROPPED)
        if not self.images or not turn.frames:
            return turn.prompt.replace("{observation}", turn.text)
        shown = turn.text if turn.keep_text else IMAGE_POINTER
        parts: list[dict[str, Any]] = [{"type": "text", "text": turn.prompt.replace("{observation}", shown)}]
        for i, frame in enumerate(turn.frames):
            if i < len(turn.labels):
                parts.append({"type": "text", "text": turn.labels[i]})
            parts.append({"type": "image", "image": frame})
        return parts


@dataclass(frozen=True)
class HistoryText:
    """A template's ``history`` texts for :class:`StepMemory`: ``intro`` opens the past decisions,
    ``step`` follows each one's picture (fields ``ago``, ``reasoning``, ``action``, ``info``)."""

    intro: str
    step: str


class StepMemory(ChatMemory):
    """V-MAGE's history (spec §3): one user message per call holding, for each of the last ``am``
    decisions (oldest first), its screenshot and a line with the reply parsed into a dict and the
    game's info after its action, then the current screenshot and the turn's text. No past turn is
    replayed as a chat, so each call carries exactly am + 1 images (1 with am 0: the No History
    levels). ``om`` keeps MageBench's meaning: how many of the newest observations keep their image.
    """

    def __init__(self, am: int, om: int, images: bool, text: HistoryText) -> None:
        super().__init__(am, om, images)  # the same window of turns; only the messages differ
        self.text = text

    def messages(self, head: list[dict[str, Any]], retry: list[tuple[str, str]] = ()) -> list[dict[str, Any]]:
        """``head``, one user message with the history and the current observation, then any failed
        replies with the regenerate request that followed each."""
        *past, current = self.turns
        if self.am != ALL:
            past = past[max(0, len(past) - self.am):] if self.am else []
        shown = len(past) + 1 if self.om == ALL else self.om
        parts: list[dict[str, Any]] = []
        if past:
            parts.append({"type": "text", "text": self.text.intro.strip()})
        for i, turn in enumerate(past):
            ago = len(past) - i
            parts += self._observation(turn, show=ago < shown)
            parts.append({"type": "text", "text": self.step_line(turn, ago)})
        if self.images and current.frames:
            parts += self._observation(current, show=True)
            parts.append({"type": "text", "text": _fill(current.prompt, PICTURE_ABOVE)})
        else:  # text only: the state in words stands where the picture would
            parts.append({"type": "text", "text": _fill(current.prompt, current.text)})
        out = [*head, {"role": "user", "content": self._flatten(parts)}]
        for reply, regenerate in retry:
            out += [{"role": "assistant", "content": reply}, {"role": "user", "content": regenerate}]
        return out

    def step_line(self, turn: Turn, ago: int) -> str:
        """The line after a past decision's picture: V-MAGE's fields, the parsed reply as ``str(dict)``."""
        fields = reply_fields(turn.reply or "")
        return self.text.step.strip().format(ago=ago, reasoning=str(fields), action=fields.get("action", ""),
                                             info=turn.info or "")

    def _observation(self, turn: Turn, *, show: bool) -> list[dict[str, Any]]:
        if not show:
            return [{"type": "text", "text": DROPPED}]
        if self.images and turn.frames:
            return [{"type": "image", "image": frame} for frame in turn.frames]
        return [{"type": "text", "text": turn.text}]

    def _flatten(self, parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
        """Text-only calls as one string (as ChatMemory sends them), else the parts in order."""
        if any(p["type"] == "image" for p in parts):
            return parts
        return "\n\n".join(p["text"] for p in parts if p["text"])


def _fill(prompt: str, observation: str) -> str:
    """The turn text with ``{observation}`` filled, without the trailing newline of a YAML block."""
    return prompt.replace("{observation}", observation).strip()
