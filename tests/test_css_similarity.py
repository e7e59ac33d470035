"""``similarity.Target`` (the target prepared once per episode) scores exactly as ``similarity``
(scikit-image's structural_similarity with VAB's resize rule) does, bit for bit, on the shapes
VAB's rule treats differently: equal shapes, a few rows more (lenient), many rows more (squashed)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from nodes.browser.css.similarity import Target, distance, gray, similarity


def _page(height: int, seed: int, width: int = 160) -> np.ndarray:
    """A page-like RGB image: flat bands, text-like noise and a gradient."""
    rng = np.random.default_rng(seed)
    image = np.full((height, width, 3), 250, np.uint8)
    for top in range(0, height, 37):
        image[top:top + 12, 10:width - 10] = rng.integers(0, 256, 3, dtype=np.uint8)
    image[height // 3:height // 3 + 20] = rng.integers(0, 256, (20, width, 3), dtype=np.uint8)
    image[:, : width // 4, 0] = np.linspace(0, 255, height, dtype=np.uint8)[:, None]
    return image


@pytest.mark.parametrize("height", [300, 310, 330, 600, 150])
def test_a_prepared_target_scores_exactly_as_the_rule(height: int) -> None:
    target = _page(300, 1)
    prepared = Target(target)
    for seed in (1, 2):
        current = _page(height, seed)
        assert prepared.similarity(current) == similarity(target, current)
        assert prepared.distance(current) == distance(target, current)


def test_png_bytes_rgba_and_gray_inputs_score_the_same() -> None:
    target, current = _page(200, 3), _page(200, 4)
    png = io.BytesIO()
    Image.fromarray(current).save(png, format="PNG")
    rgba = np.concatenate([current, np.full(current.shape[:2] + (1,), 255, np.uint8)], axis=-1)
    prepared = Target(target)
    expected = similarity(target, current)
    assert prepared.similarity(png.getvalue()) == expected
    assert prepared.similarity(rgba) == expected
    assert prepared.similarity(gray(current)) == expected
    assert Target(target).similarity(target) == similarity(target, target) == pytest.approx(1.0)


def test_an_image_smaller_than_the_window_fails_as_the_rule_does() -> None:
    with pytest.raises(ValueError):
        similarity(_page(5, 1, width=5), _page(5, 2, width=5))
    with pytest.raises(ValueError):
        Target(_page(5, 1, width=5)).similarity(_page(5, 2, width=5))
