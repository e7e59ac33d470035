"""VAB-CSS's score: grayscale SSIM between the target and the current screenshot.

The rule follows VAB's harness, because its numbers (success, improve, the 0.8 keep threshold) are
calibrated on it: both images are turned to 8-bit luminance; when the shapes differ, the current
image is resized to the target's, and if every dimension changed by less than 10% the score is
remapped to ``0.5 + ssim / 2``. That remap *raises* the score, so a page a few pixels taller is
judged leniently; a page whose height changed a lot is compared squashed, which scores low.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from skimage.color import rgb2gray
from skimage.metrics import structural_similarity
from skimage.transform import resize

__all__ = ["SUCCESS_DISTANCE", "IMPROVE_MARGIN", "KEEP_SSIM", "MIN_INITIAL_DISTANCE", "distance", "gray",
           "improved", "similarity", "succeeded"]

SUCCESS_DISTANCE = 0.1      # success: 1 - SSIM < 0.1 ("final similarity is greater than 0.9")
IMPROVE_MARGIN = 0.05       # improve: the new distance beats the initial one by more than this
KEEP_SSIM = 0.8             # an instance is kept only if its corruption scores below this
MIN_INITIAL_DISTANCE = 0.2  # VAB's loader skips instances closer than this to the target


def gray(image: bytes | np.ndarray) -> np.ndarray:
    """Luminance in [0, 1] (skimage's weights, as VAB reads PNGs ``as_gray``) of PNG bytes or an
    RGB(A)/gray array."""
    if isinstance(image, bytes | bytearray):
        image = np.asarray(Image.open(io.BytesIO(image)).convert("RGB"))
    arr = np.asarray(image)
    if arr.ndim == 2:
        return arr.astype(np.float64) / 255.0 if arr.dtype == np.uint8 else arr.astype(np.float64)
    if arr.shape[-1] == 4:
        arr = arr[..., :3]
    return rgb2gray(arr)


def similarity(target: bytes | np.ndarray, current: bytes | np.ndarray) -> float:
    """SSIM of ``current`` against ``target`` with VAB's resize rule (see the module docstring)."""
    a, b = gray(target), gray(current)
    lenient = False
    if a.shape != b.shape:
        change = np.abs(np.array(b.shape) - np.array(a.shape)) / np.array(b.shape)
        lenient = bool(np.all(change < 0.1))
        b = resize(b, a.shape)
    score = float(structural_similarity((a * 255).astype(np.uint8), (b * 255).astype(np.uint8)))
    return 0.5 + score / 2 if lenient else score


def distance(target: bytes | np.ndarray, current: bytes | np.ndarray) -> float:
    """``1 - similarity``: what VAB records as an instance's (initial or final) distance."""
    return 1.0 - similarity(target, current)


def succeeded(final_distance: float) -> bool:
    return final_distance < SUCCESS_DISTANCE


def improved(final_distance: float, initial_distance: float) -> bool:
    return final_distance < initial_distance - IMPROVE_MARGIN
