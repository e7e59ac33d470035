"""A tiny vector pen: every KidGym sprite is drawn by code in unit coordinates, then rasterised.

This pack ships no image files (the authors' assets are not ours to copy), so each sprite is a
short function of ellipses, polygons and lines on a square from (0, 0) to (1, 1). Drawing at four
times the target size and shrinking with a Lanczos filter gives smooth edges at 32, 64 or 96 px
per cell alike.
"""

from __future__ import annotations

import math
from typing import Sequence

from PIL import Image, ImageDraw

Color = tuple[int, int, int] | tuple[int, int, int, int]
Point = tuple[float, float]

SUPERSAMPLE = 4
INK: Color = (45, 35, 35)  # the outline colour of every sprite


class Pen:
    """Draws on a transparent square canvas; ``image()`` returns it at the requested size."""

    def __init__(self, size: int, width: int | None = None, height: int | None = None) -> None:
        self.size = size
        self.w = (width or size) * SUPERSAMPLE
        self.h = (height or size) * SUPERSAMPLE
        self.n = size * SUPERSAMPLE
        self.canvas = Image.new("RGBA", (self.w, self.h), (0, 0, 0, 0))
        self.draw = ImageDraw.Draw(self.canvas)

    def _xy(self, p: Point) -> tuple[float, float]:
        return p[0] * self.n, p[1] * self.n

    def _w(self, width: float) -> int:
        return max(1, round(width * self.n))

    def ellipse(self, cx: float, cy: float, rx: float, ry: float, fill: Color | None,
                outline: Color | None = INK, width: float = 0.025) -> None:
        box = [self._xy((cx - rx, cy - ry)), self._xy((cx + rx, cy + ry))]
        self.draw.ellipse(box, fill=fill, outline=outline, width=self._w(width) if outline else 0)

    def circle(self, cx: float, cy: float, r: float, fill: Color | None, outline: Color | None = INK,
               width: float = 0.025) -> None:
        self.ellipse(cx, cy, r, r, fill, outline, width)

    def poly(self, points: Sequence[Point], fill: Color | None, outline: Color | None = INK,
             width: float = 0.025) -> None:
        pts = [self._xy(p) for p in points]
        self.draw.polygon(pts, fill=fill, outline=outline, width=self._w(width) if outline else 0)

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: Color | None, outline: Color | None = INK,
             width: float = 0.025, radius: float = 0.0) -> None:
        box = [self._xy((x0, y0)), self._xy((x1, y1))]
        self.draw.rounded_rectangle(box, radius=radius * self.n, fill=fill, outline=outline,
                                    width=self._w(width) if outline else 0)

    def line(self, points: Sequence[Point], color: Color = INK, width: float = 0.025) -> None:
        self.draw.line([self._xy(p) for p in points], fill=color, width=self._w(width), joint="curve")

    def arc(self, cx: float, cy: float, rx: float, ry: float, start: float, end: float, color: Color = INK,
            width: float = 0.025) -> None:
        box = [self._xy((cx - rx, cy - ry)), self._xy((cx + rx, cy + ry))]
        self.draw.arc(box, start, end, fill=color, width=self._w(width))

    def pie(self, cx: float, cy: float, r: float, start: float, end: float, fill: Color | None,
            outline: Color | None = INK, width: float = 0.025) -> None:
        box = [self._xy((cx - r, cy - r)), self._xy((cx + r, cy + r))]
        self.draw.pieslice(box, start, end, fill=fill, outline=outline, width=self._w(width) if outline else 0)

    def image(self) -> Image.Image:
        return self.canvas.resize((self.w // SUPERSAMPLE, self.h // SUPERSAMPLE), Image.Resampling.LANCZOS)


def arc_points(cx: float, cy: float, rx: float, ry: float, start: float, end: float, n: int = 16) -> list[Point]:
    """Points along an elliptic arc, angles in degrees clockwise from east (PIL's convention)."""
    return [(cx + rx * math.cos(math.radians(a)), cy + ry * math.sin(math.radians(a)))
            for a in (start + (end - start) * i / (n - 1) for i in range(n))]


def shade(color: Color, factor: float) -> Color:
    """A darker (factor < 1) or lighter (factor > 1) version of a colour."""
    r, g, b = color[:3]
    if factor <= 1:
        return (int(r * factor), int(g * factor), int(b * factor))
    return tuple(int(v + (255 - v) * (factor - 1)) for v in (r, g, b))  # type: ignore[return-value]
