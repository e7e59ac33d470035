"""The set-of-marks layer: an outline and an "{id}.{category}" tag for each visible named thing.

VAB draws these from the segmentation mask, a fixed colour per object in a fixed order, the tag
above the box's left corner unless that collides with a tag already placed. Here the outline is
the thing's projected box; the tag goes wherever among a few spots it overlaps least with tags
placed before it, and never leaves the frame, so a vision-language model can always read it.
"""

from __future__ import annotations

from functools import lru_cache

from PIL import ImageDraw, ImageFont

from nodes.game.household.camera import Rect

Color = tuple[int, int, int]

PALETTE: tuple[Color, ...] = (
    (230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240),
    (240, 50, 230), (210, 245, 60), (250, 190, 212), (0, 128, 128), (255, 225, 25), (170, 110, 40),
    (128, 0, 0), (170, 255, 195), (128, 128, 0), (0, 0, 128), (255, 215, 180), (220, 190, 255),
)
"""Distinct colours (a widely used 'maximally distinct' set, reordered), picked by identifier."""

OUTLINE = 3
FONT_SIZE = 20
PAD = 4


def id_color(ident: int) -> Color:
    return PALETTE[(ident - 1) % len(PALETTE)]


def text_color(bg: Color) -> Color:
    """Black on light tags, white on dark ones (relative luminance, as VAB's own choice does)."""
    lum = 0.2126 * bg[0] + 0.7152 * bg[1] + 0.0722 * bg[2]
    return (0, 0, 0) if lum > 140 else (255, 255, 255)


@lru_cache(maxsize=4)
def font(size: int = FONT_SIZE) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _overlap(a: Rect, b: Rect) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0


def _fit(x: int, y: int, w: int, h: int, size: tuple[int, int]) -> Rect:
    x = min(max(0, x), size[0] - w)
    y = min(max(0, y), size[1] - h)
    return x, y, x + w, y + h


def place(rect: Rect, w: int, h: int, taken: list[Rect], size: tuple[int, int]) -> Rect:
    """The tag's rectangle: above the box's top-left, below its bottom-left, inside its top-left,
    beside it left or right, then stacked further above or below; the first spot that overlaps
    no tag already placed, else the one that overlaps them least."""
    x0, y0, x1, y1 = rect
    spots = [(x0 - OUTLINE + 1, y0 - h), (x0 - OUTLINE + 1, y1), (x0, y0), (x0 - w, y0), (x1, y0),
             (x1 - w, y0 - h), (x1 - w, y1)]
    for k in range(1, 6):
        spots += [(x0, y0 - h * (k + 1)), (x0, y1 + h * k), (x0, y0 + h * k), (x1, y0 + h * k), (x0 - w, y0 + h * k)]
    best: Rect | None = None
    best_cost = -1
    for sx, sy in spots:
        cand = _fit(sx, sy, w, h, size)
        cost = sum(_overlap(cand, t) for t in taken)
        if best is None or cost < best_cost:
            best, best_cost = cand, cost
        if cost == 0:
            break
    assert best is not None
    return best


def draw_marks(draw: ImageDraw.ImageDraw, marks: list[tuple[int, str, Rect]], size: tuple[int, int]) -> None:
    """``marks``: (identifier, label text, box) in identifier order. Outlines first, then every
    tag over them, so no outline crosses a tag's text."""
    f = font()
    for ident, _, rect in marks:
        x0, y0, x1, y1 = rect
        draw.rectangle([x0, y0, max(x0, x1 - 1), max(y0, y1 - 1)], outline=id_color(ident), width=OUTLINE)
    taken: list[Rect] = []
    for ident, text, rect in marks:
        l, t, r, b = draw.textbbox((0, 0), text, font=f)
        w, h = r - l + 2 * PAD, b - t + 2 * PAD
        tag = place(rect, w, h, taken, size)
        taken.append(tag)
        color = id_color(ident)
        draw.rectangle([tag[0], tag[1], tag[2] - 1, tag[3] - 1], fill=color)
        draw.text((tag[0] + PAD - l, tag[1] + PAD - t), text, font=f, fill=text_color(color))
