"""Sprites by key, rasterised once per size and cached.

Keys are what ``Thing.sprite`` and hint marks hold: an item or animal name (``"apple"``), a prop
(``"key:red"``, ``"door:blue"``, ``"chest"``), a Counting pile (``"pile:egg:3"``), a whole Filling
picture (``"picture:pig"``) or one quarter of it (``"piece:pig:2"``), or an abstract Puzzle piece
(``"puzzle:1"``). Caching matters: drawing is milliseconds, pasting a cached image microseconds.
"""

from __future__ import annotations

from functools import lru_cache

from PIL import Image

from nodes.game.kidgym.art_animals import ANIMALS
from nodes.game.kidgym.art_items import ITEMS
from nodes.game.kidgym.art_props import PROPS
from nodes.game.kidgym.pen import Pen

DRAWINGS = {**ANIMALS, **ITEMS, **PROPS}
PICTURE_BACKDROP = (225, 240, 250, 255)


def known(key: str) -> bool:
    kind, _, rest = key.partition(":")
    if kind == "pile":
        return rest.rsplit(":", 1)[0] in DRAWINGS
    if kind in ("picture", "piece"):
        return rest.split(":")[0] in ANIMALS
    return key in DRAWINGS


@lru_cache(maxsize=4096)
def sprite(key: str, size: int) -> Image.Image:
    """The RGBA image of ``key``, ``size`` pixels square."""
    kind, _, rest = key.partition(":")
    if kind == "pile":
        name, count = rest.rsplit(":", 1)
        return _pile(name, int(count), size)
    if kind == "picture":
        return _picture(rest, size)
    if kind == "piece":
        name, quadrant = rest.split(":")
        q = int(quadrant)
        whole = _picture(name, 2 * size)
        x, y = (q % 2) * size, (q // 2) * size
        return whole.crop((x, y, x + size, y + size))
    try:
        draw = DRAWINGS[key]
    except KeyError:
        raise KeyError(f"no KidGym sprite {key!r}") from None
    pen = Pen(size)
    draw(pen)
    return pen.image()


def _pile(name: str, count: int, size: int) -> Image.Image:
    """1, 2 or 3 of an item in one cell, overlapping a little as a heap does."""
    out = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    small = sprite(name, max(4, int(size * (0.78 if count == 1 else 0.56))))
    spots = {1: [(0.11, 0.11)], 2: [(0.02, 0.2), (0.42, 0.2)], 3: [(0.22, 0.02), (0.02, 0.42), (0.42, 0.42)]}[count]
    for x, y in spots:
        out.alpha_composite(small, (int(x * size), int(y * size)))
    return out


def _picture(name: str, size: int) -> Image.Image:
    """A Filling target: the animal on a light backdrop, so its quarters are tiles that fit together."""
    out = Image.new("RGBA", (size, size), PICTURE_BACKDROP)
    pen = Pen(size)
    ANIMALS[name](pen)
    out.alpha_composite(pen.image())
    return out
