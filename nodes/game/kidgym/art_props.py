"""Everything that is not an item: the player, baskets, keys, doors, the diamond, chests, maze walls
and the abstract Puzzle pieces."""

from __future__ import annotations

from typing import Callable

from nodes.game.kidgym.pen import INK, Color, Pen, shade

COLORS: dict[str, Color] = {
    "blue": (50, 110, 225), "green": (60, 170, 70), "red": (220, 45, 45), "yellow": (245, 200, 30),
}
GOLD: Color = (240, 190, 40)
WOOD: Color = (150, 95, 50)


def player(p: Pen) -> None:
    """The agent, "the man dressed in a brown shirt and gray pants" of the benchmark's prompt."""
    skin, shirt, pants, hair = (245, 205, 170), (140, 85, 45), (130, 130, 140), (60, 40, 25)
    for x in (0.4, 0.6):
        p.rect(x - 0.07, 0.62, x + 0.07, 0.92, pants, radius=0.03)
        p.rect(x - 0.08, 0.88, x + 0.08, 0.95, (50, 40, 35), radius=0.02)
    for x in (0.22, 0.78):
        p.rect(x - 0.06, 0.36, x + 0.06, 0.62, shirt, radius=0.04)
        p.circle(x, 0.64, 0.045, skin)
    p.rect(0.28, 0.34, 0.72, 0.66, shirt, radius=0.06)
    p.line([(0.5, 0.36), (0.5, 0.64)], shade(shirt, 0.7), 0.015)
    p.circle(0.5, 0.2, 0.15, skin)
    p.poly([(0.35, 0.18), (0.38, 0.07), (0.5, 0.04), (0.62, 0.07), (0.65, 0.18), (0.58, 0.12), (0.42, 0.12)], hair)
    p.circle(0.44, 0.2, 0.02, INK, outline=None)
    p.circle(0.56, 0.2, 0.02, INK, outline=None)
    p.arc(0.5, 0.25, 0.05, 0.03, 20, 160, INK, 0.012)


def basket(color: str) -> Callable[[Pen], None]:
    col = COLORS[color]

    def draw(p: Pen) -> None:
        p.arc(0.5, 0.46, 0.3, 0.32, 180, 360, INK, 0.07)
        p.arc(0.5, 0.46, 0.3, 0.32, 180, 360, shade(col, 0.8), 0.04)
        p.poly([(0.08, 0.42), (0.92, 0.42), (0.8, 0.9), (0.2, 0.9)], col)
        for y in (0.55, 0.68, 0.8):
            p.line([(0.1 + (y - 0.42) * 0.25, y), (0.9 - (y - 0.42) * 0.25, y)], shade(col, 0.7), 0.015)
        for x in (0.35, 0.5, 0.65):
            p.line([(x, 0.44), (0.5 + (x - 0.5) * 0.75, 0.88)], shade(col, 0.7), 0.015)
        p.rect(0.05, 0.38, 0.95, 0.46, shade(col, 1.2), radius=0.03)

    return draw


def key(color: str) -> Callable[[Pen], None]:
    col = COLORS[color]

    def draw(p: Pen) -> None:
        p.rect(0.38, 0.44, 0.9, 0.56, col, radius=0.03)
        p.rect(0.7, 0.56, 0.77, 0.7, col)
        p.rect(0.82, 0.56, 0.89, 0.74, col)
        p.circle(0.27, 0.5, 0.18, col, width=0.03)
        p.circle(0.27, 0.5, 0.07, (0, 0, 0, 0), width=0.03)

    return draw


def door(color: str) -> Callable[[Pen], None]:
    col = COLORS[color]

    def draw(p: Pen) -> None:
        p.rect(0.04, 0.02, 0.96, 0.98, shade(col, 0.75), radius=0.04)
        p.rect(0.12, 0.1, 0.88, 0.98, col, radius=0.02)
        for y0, y1 in ((0.18, 0.46), (0.54, 0.9)):
            p.rect(0.2, y0, 0.8, y1, shade(col, 0.88), width=0.018)
        p.circle(0.5, 0.5, 0.08, GOLD, width=0.02)
        p.poly([(0.47, 0.5), (0.53, 0.5), (0.55, 0.62), (0.45, 0.62)], INK, outline=None)
        p.circle(0.5, 0.49, 0.03, INK, outline=None)

    return draw


def diamond(p: Pen) -> None:
    light, mid, dark = (190, 245, 255), (90, 210, 240), (40, 150, 200)
    p.poly([(0.2, 0.32), (0.34, 0.16), (0.66, 0.16), (0.8, 0.32)], light)
    p.poly([(0.2, 0.32), (0.8, 0.32), (0.5, 0.88)], mid)
    p.poly([(0.34, 0.32), (0.66, 0.32), (0.5, 0.88)], dark, width=0.015)
    p.line([(0.34, 0.16), (0.4, 0.32), (0.5, 0.16), (0.6, 0.32), (0.66, 0.16)], INK, 0.015)
    p.poly([(0.28, 0.22), (0.32, 0.18), (0.34, 0.26)], (255, 255, 255), outline=None)


def chest(p: Pen) -> None:
    p.rect(0.1, 0.45, 0.9, 0.86, WOOD, radius=0.03)
    p.pie(0.5, 0.46, 0.4, 180, 360, shade(WOOD, 1.15))
    p.rect(0.1, 0.43, 0.9, 0.5, GOLD, width=0.015)
    for x in (0.22, 0.78):
        p.rect(x - 0.04, 0.1, x + 0.04, 0.86, GOLD, width=0.015)
    p.rect(0.42, 0.44, 0.58, 0.62, GOLD, radius=0.02)
    p.circle(0.5, 0.51, 0.025, INK, outline=None)


def wall(p: Pen) -> None:
    stone, mortar = (110, 105, 115), (70, 65, 75)
    p.rect(0.0, 0.0, 1.0, 1.0, mortar, outline=None)
    for row in range(4):
        y0 = row * 0.25
        shift = 0.25 if row % 2 else 0.0
        for i in range(-1, 3):
            x0, x1 = max(0.0, i * 0.5 + shift + 0.02), min(1.0, i * 0.5 + shift + 0.48)
            if x1 > x0:
                p.rect(x0, y0 + 0.02, x1, y0 + 0.23, shade(stone, 1 + 0.06 * ((i + row) % 3)), outline=None,
                       radius=0.02)


# The four abstract Puzzle pieces: one dark shape each on a light tile; ``pictures.PUZZLE_SHAPES``
# says the same in words.
def _piece(shape: int) -> Callable[[Pen], None]:
    tile, ink = (245, 235, 210), (40, 55, 110)

    def draw(p: Pen) -> None:
        p.rect(0.0, 0.0, 1.0, 1.0, tile, outline=None)
        if shape == 0:
            p.poly([(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)], ink, outline=None)
        elif shape == 1:
            p.poly([(0.0, 0.0), (0.0, 1.0), (1.0, 1.0)], ink, outline=None)
        elif shape == 2:
            p.pie(0.0, 1.0, 0.85, 270, 360, ink, outline=None)
        else:
            p.rect(0.0, 0.0, 0.5, 1.0, ink, outline=None)
        p.rect(0.0, 0.0, 1.0, 1.0, None, outline=(120, 110, 90), width=0.02)

    return draw


PROPS: dict[str, Callable[[Pen], None]] = {
    "player": player, "diamond": diamond, "chest": chest, "wall": wall,
    **{f"basket:{c}": basket(c) for c in ("blue", "green", "red", "yellow")},
    **{f"key:{c}": key(c) for c in ("blue", "red", "yellow")},
    **{f"door:{c}": door(c) for c in ("blue", "red", "yellow")},
    **{f"puzzle:{i}": _piece(i) for i in range(4)},
}
