"""VWA's fuzzy image match: SSIM between a page image and a reference, after VWA's preparation.

Both images are resized (LANCZOS) to the larger width and the larger height of the pair and compared
in greyscale with scikit-image; a page image matches when SSIM is above the task's threshold. Decoding
and SSIM take milliseconds to seconds on large photos, so callers run ``ssim`` in a thread.
"""

from __future__ import annotations

import io
import urllib.request
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError
from skimage.metrics import structural_similarity


def decode(data: bytes) -> Image.Image | None:
    """The image in ``data``, or None when it is not one (a broken ``src`` must not fail the task)."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            return img.copy()
    except (UnidentifiedImageError, OSError, ValueError):
        return None


def ssim(a: Image.Image, b: Image.Image) -> float:
    size = (max(a.width, b.width), max(a.height, b.height))
    grey_a = np.asarray(a.resize(size, Image.Resampling.LANCZOS).convert("L"))
    grey_b = np.asarray(b.resize(size, Image.Resampling.LANCZOS).convert("L"))
    side = min(size)
    if side < 7:  # scikit-image's default window is 7; tiny images use the largest odd window that fits
        return float(structural_similarity(grey_a, grey_b, win_size=max(3, side - (1 - side % 2)),
                                           data_range=255)) if side >= 3 else float(np.array_equal(grey_a, grey_b))
    return float(structural_similarity(grey_a, grey_b, data_range=255))


def load_reference(ref: str, root: Path | None) -> Image.Image:
    """A reference image from an http(s) URL or a path (relative paths are under ``root``)."""
    if ref.startswith(("http://", "https://")):
        with urllib.request.urlopen(ref, timeout=30) as reply:  # noqa: S310 - task-given image URL
            data = reply.read()
    else:
        path = Path(ref)
        if not path.is_absolute() and root is not None:
            path = root / path
        data = path.read_bytes()
    img = decode(data)
    if img is None:
        raise ValueError(f"reference image {ref!r} is not an image")
    return img
