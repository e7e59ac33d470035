"""The KidGym frame: a 9x9-cell image with the hint bar, the scene and the backpack.

Layout, in cells (the paper's B.1): the left 2x9 block is the hint bar; the 7x8 block to its right
is the themed background, with the 5x5 play area at columns 3-7 and rows 2-6; the bottom strip
holds the four backpack slots A-D. Choice (spec §7 #2): the frame is always square, 9 cells a side
(576x576 at 64 px), with an empty hint bar where a task shows no hint, rather than the released
code's 576x448 frames for those tasks; a fixed size keeps the Gymnasium observation space fixed.
Frames are RGB (the docs' ``frame`` convention), not the released code's RGBA.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from nodes.game.kidgym.base import Mark, Task
from nodes.game.kidgym.pen import Color
from nodes.game.kidgym.sprites import sprite
from nodes.game.kidgym.world import SIZE, Cell

GRID = 9
HINT_COLUMNS = 2
PLAY_ORIGIN = (2, 3)  # frame (row, column) of play cell (0, 0)
BAG_ROW = 8
BAG_COLUMNS = (3, 4, 5, 6)
CELL_SIZES = (32, 64, 96)

# theme -> (margin colour, two floor tile colours, decoration colour)
THEMES: dict[str, tuple[Color, Color, Color, Color]] = {
    "farm": ((105, 170, 75), (160, 210, 115), (150, 202, 105), (160, 110, 60)),
    "shop": ((232, 222, 198), (244, 243, 238), (228, 227, 221), (150, 110, 80)),
    "canteen": ((248, 226, 196), (246, 240, 228), (226, 214, 192), (200, 80, 60)),
    "toy_house": ((196, 178, 228), (186, 214, 242), (174, 204, 236), (240, 150, 60)),
    "park": ((110, 175, 85), (232, 218, 172), (222, 206, 160), (70, 120, 50)),
    "gallery": ((238, 228, 212), (204, 164, 114), (192, 152, 104), (120, 80, 50)),
    "maze": ((58, 54, 66), (98, 92, 104), (90, 85, 97), (220, 215, 200)),
}
HINT_PANEL: Color = (44, 50, 66)
BAG_STRIP: Color = (96, 64, 42)


@lru_cache(maxsize=16)
def font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=max(6, size))


def cell_box(cell: Cell, cs: int) -> tuple[int, int]:
    """Top-left pixel of a play-area cell."""
    return (PLAY_ORIGIN[1] + cell[1]) * cs, (PLAY_ORIGIN[0] + cell[0]) * cs


@lru_cache(maxsize=32)
def background(theme: str, cs: int) -> Image.Image:
    """The static part of a frame for a theme: margins, decorations, floor, panels."""
    margin, floor_a, floor_b, decor = THEMES.get(theme, THEMES["park"])
    img = Image.new("RGB", (GRID * cs, GRID * cs), margin)
    d = ImageDraw.Draw(img)
    d.rectangle([0, 0, HINT_COLUMNS * cs - 1, GRID * cs - 1], fill=HINT_PANEL)
    d.rectangle([2, 2, HINT_COLUMNS * cs - 3, GRID * cs - 3], outline=(90, 100, 125), width=max(1, cs // 32))
    _decorate(d, theme, cs, decor)
    for r in range(SIZE):
        for c in range(SIZE):
            x, y = cell_box((r, c), cs)
            d.rectangle([x, y, x + cs - 1, y + cs - 1], fill=floor_a if (r + c) % 2 == 0 else floor_b)
    x0, y0 = cell_box((0, 0), cs)
    d.rectangle([x0 - 1, y0 - 1, x0 + SIZE * cs, y0 + SIZE * cs], outline=(60, 50, 45), width=max(1, cs // 32))
    d.rectangle([HINT_COLUMNS * cs, BAG_ROW * cs, GRID * cs - 1, GRID * cs - 1], fill=BAG_STRIP)
    for i, col in enumerate(BAG_COLUMNS):
        x, y = col * cs, BAG_ROW * cs
        pad = max(2, cs // 16)
        d.rectangle([x + pad, y + pad, x + cs - pad, y + cs - pad], fill=(15, 15, 18), outline=(200, 190, 170),
                    width=max(1, cs // 40))
        d.text((x + pad + 2, y + pad + 1), "ABCD"[i], fill=(240, 240, 240), font=font(cs // 4))
    return img


def _decorate(d: ImageDraw.ImageDraw, theme: str, cs: int, col: Color) -> None:
    """A few theme marks on the margin cells around the play area (purely for context)."""
    top, left = 0, HINT_COLUMNS * cs
    width = (GRID - HINT_COLUMNS) * cs
    w = max(1, cs // 16)
    if theme == "farm":
        for x in range(left + cs // 4, left + width, cs // 2):
            d.rectangle([x, top + cs // 2, x + cs // 8, top + int(1.6 * cs)], fill=col)
        for y in (int(0.8 * cs), int(1.3 * cs)):
            d.rectangle([left, y, left + width, y + cs // 10], fill=col)
    elif theme in ("shop", "canteen"):
        d.rectangle([left + cs // 4, top + cs // 3, left + width - cs // 4, top + int(1.5 * cs)], fill=col)
        for i, x in enumerate(range(left + cs // 2, left + width - cs // 2, cs // 2)):
            shade = ((230, 90, 80), (250, 200, 60), (90, 160, 220), (120, 190, 90))[i % 4]
            d.rectangle([x, top + int(0.45 * cs), x + cs // 3, top + int(0.85 * cs)], fill=shade)
            d.ellipse([x, top + int(1.0 * cs), x + cs // 3, top + int(1.3 * cs)], fill=(250, 250, 250))
    elif theme == "toy_house":
        for i, x in enumerate(range(left + cs // 3, left + width - cs // 2, int(0.9 * cs))):
            shade = ((230, 80, 80), (80, 160, 230), (250, 200, 60), (110, 190, 100))[i % 4]
            d.rectangle([x, top + int(0.7 * cs), x + int(0.6 * cs), top + int(1.3 * cs)], fill=shade,
                        outline=(60, 50, 60), width=w)
    elif theme == "park":
        for x in (left + cs // 2, left + width - int(1.5 * cs)):
            d.rectangle([x + int(0.4 * cs), top + cs, x + int(0.6 * cs), top + int(1.8 * cs)], fill=(120, 80, 45))
            d.ellipse([x, top + cs // 6, x + cs, top + int(1.2 * cs)], fill=col)
    elif theme == "gallery":
        for i, x in enumerate(range(left + cs // 2, left + width - cs, int(1.6 * cs))):
            d.rectangle([x, top + cs // 3, x + cs, top + int(1.5 * cs)], fill=col)
            shade = ((150, 200, 230), (240, 200, 120), (170, 220, 160), (230, 160, 170))[i % 4]
            d.rectangle([x + w * 2, top + cs // 3 + w * 2, x + cs - w * 2, top + int(1.5 * cs) - w * 2], fill=shade)
    elif theme == "maze":
        x, y = left + width - int(1.2 * cs), top + cs // 2
        d.ellipse([x, y, x + int(0.7 * cs), y + int(0.6 * cs)], fill=col)
        d.rectangle([x + int(0.15 * cs), y + int(0.45 * cs), x + int(0.55 * cs), y + int(0.8 * cs)], fill=col)
        for ex in (0.15, 0.42):
            d.ellipse([x + int(ex * cs), y + int(0.2 * cs), x + int((ex + 0.13) * cs), y + int(0.35 * cs)],
                      fill=(30, 28, 34))
        for tx in (left + cs // 2, left + width // 2):
            d.rectangle([tx, top + cs, tx + cs // 10, top + int(1.6 * cs)], fill=(120, 80, 45))
            d.ellipse([tx - cs // 10, top + int(0.7 * cs), tx + cs // 5, top + int(1.05 * cs)], fill=(250, 170, 40))


def _paste(img: Image.Image, key: str, x: int, y: int, size: int) -> None:
    img.paste(sprite(key, size), (x, y), sprite(key, size))


def _label(d: ImageDraw.ImageDraw, text: str, cx: int, bottom: int, cs: int) -> None:
    f = font(int(cs * 0.26))
    l, t, r, b = d.textbbox((0, 0), text, font=f)
    w, h = r - l + cs // 8, b - t + cs // 12
    x0, y0 = cx - w // 2, bottom - h - 1
    d.rounded_rectangle([x0, y0, x0 + w, y0 + h], radius=max(1, cs // 16), fill=(255, 255, 255), outline=(30, 30, 30),
                        width=max(1, cs // 48))
    d.text((x0 + (w - (r - l)) // 2 - l, y0 + (h - (b - t)) // 2 - t), text, fill=(20, 20, 20), font=f)


def _slot(d: ImageDraw.ImageDraw, place: str, x: int, y: int, cs: int, filled: bool) -> None:
    pad = max(2, cs // 12)
    d.rectangle([x + pad, y + pad, x + cs - pad, y + cs - pad], fill=None if filled else (250, 246, 230),
                outline=(90, 70, 50), width=max(1, cs // 32))
    f = font(int(cs * (0.2 if filled else 0.36)))
    if filled:
        d.text((x + pad + 1, y + pad), place, fill=(90, 40, 30), font=f)
    else:
        l, t, r, b = d.textbbox((0, 0), place, font=f)
        d.text((x + (cs - (r - l)) // 2 - l, y + (cs - (b - t)) // 2 - t), place, fill=(90, 40, 30), font=f)


def _hint(img: Image.Image, d: ImageDraw.ImageDraw, marks: list[Mark], cs: int) -> None:
    for m in marks:
        x, y = int(m.x * cs), int(m.y * cs)
        if m.kind == "sprite":
            size = int(m.w * cs)
            if m.sprite.startswith(("picture:", "puzzle:")):
                _paste(img, m.sprite, x, y, size)
            else:
                inset = max(1, size // 12)
                _paste(img, m.sprite, x + inset, y + inset, size - 2 * inset)
        elif m.kind == "arrow":
            x1, y1 = int((m.x + m.w) * cs), int((m.y + m.h) * cs)
            w = max(1, cs // 20)
            d.line([(x, y), (x1, y1)], fill=(250, 250, 250), width=w)
            head = max(3, cs // 8)
            d.polygon([(x1 + 1, y1), (x1 - head, y1 - head // 1.5), (x1 - head, y1 + head // 1.5)], fill=(250, 250, 250))
        elif m.kind == "box":
            d.rectangle([x, y, int((m.x + m.w) * cs), int((m.y + m.h) * cs)], fill=(10, 10, 10), outline=(240, 240, 240),
                        width=max(1, cs // 24))


def render(task: Task, cs: int = 64) -> np.ndarray:
    """The current frame of ``task`` as an RGB uint8 array, ``9 * cs`` pixels a side."""
    img = background(task.theme, cs).copy()
    d = ImageDraw.Draw(img)
    for cell in task.board.walls:
        x, y = cell_box(cell, cs)
        _paste(img, "wall", x, y, cs)
    places = {cell: place for place, cell in task.slots.items()}
    things = {t.cell: t for t in task.visible_things()}
    for cell, place in places.items():
        x, y = cell_box(cell, cs)
        _slot(d, place, x, y, cs, filled=cell in things)
    framed = [t for t in task.board.things if t.kind == "piece" and t.cell is not None]
    if task.frame_at is not None:
        x, y = cell_box(task.frame_at, cs)
        w = max(2, cs // 10)
        d.rectangle([x - w, y - w, x + 2 * cs + w - 1, y + 2 * cs + w - 1], outline=(140, 90, 40), width=w)
    for thing in task.visible_things():
        assert thing.cell is not None
        x, y = cell_box(thing.cell, cs)
        if thing in framed or thing.kind == "door":
            _paste(img, thing.sprite, x, y, cs)
        else:
            size = int(cs * 0.82)
            _paste(img, thing.sprite, x + (cs - size) // 2, y + (cs - size) // 2 - (cs // 14 if thing.label is not None
                                                                                     else 0), size)
        if thing.label is not None and task.show_labels:
            _label(d, str(thing.label), x + cs // 2, y + cs, cs)
    ax, ay = cell_box(task.agent, cs)
    size = int(cs * 0.9)
    _paste(img, "player", ax + (cs - size) // 2, ay + (cs - size) // 2, size)
    _arrow(d, ax, ay, task.heading, cs)
    for i, thing in enumerate(task.bag):
        size = int(cs * 0.62)
        x = BAG_COLUMNS[i] * cs + (cs - size) // 2 + cs // 16
        _paste(img, thing.sprite, x, BAG_ROW * cs + (cs - size) // 2 + cs // 16, size)
    _hint(img, d, task.hint_marks(), cs)
    return np.asarray(img, dtype=np.uint8)


def _arrow(d: ImageDraw.ImageDraw, x: int, y: int, heading: Cell, cs: int) -> None:
    """The small red arrow by the agent that shows which way it faces."""
    cx, cy = x + cs / 2, y + cs / 2
    dr, dc = heading
    tip = (cx + dc * cs * 0.48, cy + dr * cs * 0.48)
    base = (cx + dc * cs * 0.32, cy + dr * cs * 0.32)
    side = (-dr * cs * 0.1, dc * cs * 0.1)
    d.polygon([tip, (base[0] + side[0], base[1] + side[1]), (base[0] - side[0], base[1] - side[1])], fill=(225, 30, 30),
              outline=(90, 10, 10))
