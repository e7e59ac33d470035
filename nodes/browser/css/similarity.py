"""VAB-CSS's score: grayscale SSIM between the target and the current screenshot.

The rule follows VAB's harness, because its numbers (success, improve, the 0.8 keep threshold) are
calibrated on it: both images are turned to 8-bit luminance; when the shapes differ, the current
image is resized to the target's, and if every dimension changed by less than 10% the score is
remapped to ``0.5 + ssim / 2``. That remap *raises* the score, so a page a few pixels taller is
judged leniently; a page whose height changed a lot is compared squashed, which scores low.

``similarity`` is the rule as written, on scikit-image's ``structural_similarity``. An episode
compares many renderings with one target, so ``Target`` keeps the target's half of that sum (its
8-bit luminance, local means and variances) and computes only the current image's half per step,
with the same operations in the same order as scikit-image: its scores equal ``similarity``'s
exactly (tests/test_css_similarity.py holds it to that), in about half the time.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image
from scipy.ndimage import uniform_filter
from skimage.color import rgb2gray
from skimage.metrics import structural_similarity
from skimage.transform import resize

__all__ = ["SUCCESS_DISTANCE", "IMPROVE_MARGIN", "KEEP_SSIM", "MIN_INITIAL_DISTANCE", "Target", "distance", "gray",
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


# structural_similarity's defaults for two uint8 images: a 7x7 uniform window, the sample covariance,
# K1 = 0.01, K2 = 0.03 and the data range of uint8.
_WIN = 7
_COV_NORM = _WIN**2 / (_WIN**2 - 1)
_C1 = (0.01 * 255) ** 2
_C2 = (0.03 * 255) ** 2
_PAD = (_WIN - 1) // 2


# One helper thread: ``Target.similarity`` splits its work in two halves that run at once (numpy and
# scipy's filters release the GIL), so a step's scoring uses both cores of a 2-core machine.
_HELPER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ssim")


def _luma8(image: np.ndarray) -> np.ndarray:
    """The 8-bit luminance ``similarity`` compares, as float64 (structural_similarity's working type)."""
    return (image * 255).astype(np.uint8).astype(np.float64)


class Target:
    """One target screenshot prepared for many ``similarity`` calls (one VAB-CSS episode's target).

    Why: per step, scoring used to convert, filter and square the target again; here its luminance,
    local mean ``ux``, ``ux ** 2`` and local variance ``vx`` are computed once, and a call filters only
    the current image (three uniform filters instead of five). Every array expression below is
    structural_similarity's, term by term, so the score is bit-for-bit the same. The three filters
    and the element-wise map are split between the calling thread and one helper thread."""

    def __init__(self, target: bytes | np.ndarray) -> None:
        self.gray = gray(target)
        self.shape = self.gray.shape
        self._x = _luma8(self.gray)
        self._ux = uniform_filter(self._x, size=_WIN)
        self._ux2 = self._ux**2
        self._vx = _COV_NORM * (uniform_filter(self._x * self._x, size=_WIN) - self._ux * self._ux)
        self._2ux = 2 * self._ux

    def similarity(self, current: bytes | np.ndarray) -> float:
        """``similarity(target, current)``, with VAB's resize rule (see the module docstring)."""
        b = gray(current)
        lenient = False
        if b.shape != self.shape:
            change = np.abs(np.array(b.shape) - np.array(self.shape)) / np.array(b.shape)
            lenient = bool(np.all(change < 0.1))
            b = resize(b, self.shape)
        if min(self.shape) < _WIN:  # too small for the window: structural_similarity's own error
            return similarity(self.gray, b)
        y = _luma8(b)
        means = _HELPER.submit(lambda: (uniform_filter(y, size=_WIN), uniform_filter(y * y, size=_WIN)))
        uxy = uniform_filter(self._x * y, size=_WIN)
        uy, uyy = means.result()
        s = np.empty_like(y)
        half = self.shape[0] // 2
        top = _HELPER.submit(self._ssim_map, s, slice(0, half), uy, uyy, uxy)
        self._ssim_map(s, slice(half, None), uy, uyy, uxy)
        top.result()
        score = float(s[_PAD:-_PAD, _PAD:-_PAD].mean(dtype=np.float64))
        return 0.5 + score / 2 if lenient else score

    def _ssim_map(self, out: np.ndarray, rows: slice, uy: np.ndarray, uyy: np.ndarray, uxy: np.ndarray) -> None:
        """structural_similarity's SSIM map on ``rows``: element-wise, so halves equal the whole."""
        ux, uy, uyy, uxy = self._ux[rows], uy[rows], uyy[rows], uxy[rows]
        vy = _COV_NORM * (uyy - uy * uy)
        vxy = _COV_NORM * (uxy - ux * uy)
        a1 = self._2ux[rows] * uy + _C1
        a2 = 2 * vxy + _C2
        b1 = self._ux2[rows] + uy**2 + _C1
        b2 = self._vx[rows] + vy + _C2
        out[rows] = (a1 * a2) / (b1 * b2)

    def distance(self, current: bytes | np.ndarray) -> float:
        """``1 - similarity``."""
        return 1.0 - self.similarity(current)


def distance(target: bytes | np.ndarray, current: bytes | np.ndarray) -> float:
    """``1 - similarity``: what VAB records as an instance's (initial or final) distance."""
    return 1.0 - similarity(target, current)


def succeeded(final_distance: float) -> bool:
    return final_distance < SUCCESS_DISTANCE


def improved(final_distance: float, initial_distance: float) -> bool:
    return final_distance < initial_distance - IMPROVE_MARGIN
