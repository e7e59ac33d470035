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

DROPPED = "(this earlier observation is no longer shown)"
IMAGE_POINTER = "(shown in the image)"
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
