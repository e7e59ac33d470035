"""Frames <-> PNG, and encoded pictures -> ``data:`` URLs: the one codec that packs and tools share.

A frame on the bus is a ``uint8`` array (H×W, H×W×1, ×3 or ×4). The recorder, the replay, the
report and the model clients all turn frames into PNG (and back), and when each did it its own way
the same frame came out as different bytes. Pillow is imported on first use, so a node that never
encodes a picture does not pay for it.
"""

from __future__ import annotations

import base64
import io

import numpy as np

__all__ = ["png_bytes", "png_array", "data_url"]


MODEL_PNG_LEVEL = 6
"""zlib's level of the PNGs a model is sent (nodes.model) and an agent's step records keep
(nodes.agent.records): one level, so a kept picture is byte for byte the one the model got, and
every cached request was made with it (zlib's default)."""


def png_bytes(frame: np.ndarray, level: int = 1) -> bytes:
    """The PNG of a frame; ``level`` is zlib's (0-9): 1 for a recorder that must keep up with the
    bus, higher where size matters more than time. A given frame and level always give the same bytes."""
    from PIL import Image

    if frame.dtype != np.uint8 or frame.ndim not in (2, 3) or (frame.ndim == 3 and frame.shape[2] not in (1, 3, 4)):
        raise ValueError(f"a frame must be a uint8 array of HxW or HxWx1/3/4, got {frame.dtype} {frame.shape}")
    pixels = frame[:, :, 0] if frame.ndim == 3 and frame.shape[2] == 1 else frame
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(out, format="PNG", compress_level=level)
    return out.getvalue()


def png_array(data: bytes, shape: list[int] | tuple[int, ...] | None = None) -> np.ndarray:
    """The frame of a PNG; ``shape`` restores what PNG cannot say (an H×W×1 frame comes back H×W)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        array = np.asarray(image)
    return array.reshape(shape) if shape is not None else array


def data_url(data: bytes, mime: str = "image/png") -> str:
    """Encoded picture bytes as a ``data:`` URL, the form vision APIs and self-contained pages take."""
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"
