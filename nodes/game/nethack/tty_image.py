"""The NetHack terminal drawn as a picture, for agents that are sent images.

BALROG's vision mode sends a tile rendering; NLE 1.3.0 ships no tile set, so the frame here is the
80x24 terminal itself in its 16 colours (NetHack's own curses colours), one fixed-size cell per
character, painted with Pillow's built-in bitmap font: no assets, the same picture on any machine.
"""

from __future__ import annotations

from functools import cache

import numpy as np

CELL_W, CELL_H = 8, 14

# NetHack's colour numbers (CLR_BLACK .. CLR_WHITE) as RGB
PALETTE = np.array([
    (0, 0, 0), (170, 0, 0), (0, 170, 0), (170, 85, 0), (0, 0, 170), (170, 0, 170), (0, 170, 170), (170, 170, 170),
    (85, 85, 85), (255, 85, 85), (85, 255, 85), (255, 255, 85), (85, 85, 255), (255, 85, 255), (85, 255, 255),
    (255, 255, 255)], np.uint8)


@cache
def _glyph_masks() -> np.ndarray:
    """A CELL_H x CELL_W ink mask for each byte value 0..255 (printable ASCII drawn, others blank)."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default()
    masks = np.zeros((256, CELL_H, CELL_W), bool)
    for code in range(33, 127):
        img = Image.new("L", (CELL_W, CELL_H), 0)
        ImageDraw.Draw(img).text((1, 1), chr(code), fill=255, font=font)
        masks[code] = np.asarray(img) > 96
    return masks


def frame(tty_chars: np.ndarray, tty_colors: np.ndarray) -> np.ndarray:
    """uint8 (rows*14) x (cols*8) x 3: each character in its colour on black (colour 0 shown grey,
    as terminals show NetHack's black)."""
    chars = np.asarray(tty_chars, np.uint8)
    colors = np.asarray(tty_colors, np.int64) & 15
    colors = np.where(colors == 0, 8, colors)
    rows, cols = chars.shape
    ink = _glyph_masks()[chars]  # rows, cols, H, W
    rgb = PALETTE[colors][:, :, None, None, :] * ink[..., None]
    return rgb.transpose(0, 2, 1, 3, 4).reshape(rows * CELL_H, cols * CELL_W, 3).astype(np.uint8)
