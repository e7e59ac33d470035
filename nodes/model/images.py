"""Frames from the bus as image parts of a chat request.

Vision APIs take images as base64 data URLs; the encoding and the resize to a long edge happen here
once per image, so every model client sends the same bytes for the same frame (which also makes
the response cache hit on re-runs).
"""

from __future__ import annotations

import hashlib
import io
from typing import Any, Literal

import numpy as np

from kernel.sdk.images import MODEL_PNG_LEVEL, data_url, png_bytes

Format = Literal["png", "jpeg"]


def encoded(frame: np.ndarray, fmt: Format = "png", long_edge: int | None = None, quality: int = 90) -> bytes:
    """The bytes a model is sent for an RGB (or grey) uint8 frame, resized so its longer side is ``long_edge``."""
    if frame.dtype != np.uint8 or frame.ndim not in (2, 3):
        raise ValueError(f"an image must be a uint8 array of HxW or HxWxC, got {frame.dtype} {frame.shape}")
    if long_edge and max(frame.shape[:2]) != long_edge:
        frame = _resized(frame, long_edge)
    return _jpeg(frame, quality) if fmt == "jpeg" else png_bytes(frame, MODEL_PNG_LEVEL)


def to_data_url(frame: np.ndarray, fmt: Format = "png", long_edge: int | None = None, quality: int = 90,
                digests: list[str] | None = None) -> str:
    """The frame as a ``data:`` URL (:func:`encoded`); the sha256 of its bytes is appended to ``digests``."""
    data = encoded(frame, fmt, long_edge, quality)
    if digests is not None:
        digests.append(hashlib.sha256(data).hexdigest())
    return data_url(data, "image/jpeg" if fmt == "jpeg" else "image/png")


def _resized(frame: np.ndarray, long_edge: int) -> np.ndarray:
    from PIL import Image

    image = Image.fromarray(frame)
    scale = long_edge / max(image.size)
    size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
    return np.asarray(image.resize(size, Image.Resampling.LANCZOS))


def _jpeg(frame: np.ndarray, quality: int) -> bytes:
    """JPEG is lossy and only models take it, so it stays here rather than in the SDK's codec."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(frame).convert("RGB").save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def openai_messages(messages: list[dict[str, Any]], fmt: Format = "png", long_edge: int | None = None,
                    allow_images: bool = True, digests: list[str] | None = None) -> list[dict[str, Any]]:
    """Bus messages -> OpenAI chat messages.

    On the bus an image part is ``{"type": "image", "image": <uint8 array>}``; it becomes an
    ``image_url`` part. A text-only model gets no image at all: sending one would be refused. The
    sha256 of each image's bytes goes to ``digests``, in order: the agent keeps them in its step
    record, so an exported image can be checked against what the model was sent.
    """
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                if part.get("type") == "image":
                    if not allow_images:
                        raise ValueError("this model takes no images (params.vision is false); "
                                         "use the environment's text observations")
                    parts.append({"type": "image_url",
                                  "image_url": {"url": to_data_url(np.asarray(part["image"]), fmt, long_edge,
                                                                    digests=digests)}})
                else:
                    parts.append(part)
            content = parts
        out.append({**message, "content": content})
    return out
