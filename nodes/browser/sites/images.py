"""Pictures drawn in code, with the attributes they were drawn from.

A picture shows ``count`` copies of one shape (``kind``) in one ``colour`` on a plain
``background``, with an optional ``text`` banner. Everything a visual question could ask about
is therefore a stored fact, not a guess; the drawing is a pure function of the attributes."""

from __future__ import annotations

import io
import math
import random
from dataclasses import asdict, dataclass

from PIL import Image, ImageDraw, ImageFont

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 40), "green": (30, 160, 60), "blue": (30, 70, 210), "yellow": (245, 210, 20),
    "orange": (245, 130, 20), "purple": (130, 40, 170), "pink": (240, 120, 180), "black": (20, 20, 20),
    "brown": (120, 70, 30), "grey": (128, 128, 128),
}
BACKGROUNDS: dict[str, tuple[int, int, int]] = {
    "white": (250, 250, 250), "cream": (245, 235, 210), "light blue": (210, 230, 250), "light green": (215, 240, 215),
}
KINDS = ("circle", "square", "triangle", "star", "hexagon", "diamond", "cross")
SIZE = 256


@dataclass(frozen=True)
class Picture:
    """What an image shows; its drawing is determined by these fields alone."""

    kind: str
    colour: str
    count: int
    text: str
    background: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def random_picture(rng: random.Random, text: str = "", kind: str | None = None) -> Picture:
    """A picture chosen with ``rng`` (the caller's seeded stream, so content stays reproducible)."""
    return Picture(kind=kind or rng.choice(KINDS), colour=rng.choice(sorted(COLOURS)), count=rng.randint(1, 4),
                   text=text, background=rng.choice(sorted(BACKGROUNDS)))


def _polygon(cx: float, cy: float, r: float, sides: int, turn: float = -math.pi / 2) -> list[tuple[float, float]]:
    return [(cx + r * math.cos(turn + 2 * math.pi * i / sides), cy + r * math.sin(turn + 2 * math.pi * i / sides))
            for i in range(sides)]


def _star(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    points = []
    for i in range(10):
        radius = r if i % 2 == 0 else r * 0.45
        angle = -math.pi / 2 + math.pi * i / 5
        points.append((cx + radius * math.cos(angle), cy + radius * math.sin(angle)))
    return points


def _shape(draw: ImageDraw.ImageDraw, kind: str, cx: float, cy: float, r: float, fill: tuple[int, int, int]) -> None:
    outline = (0, 0, 0)
    if kind == "circle":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill, outline=outline, width=2)
    elif kind == "square":
        draw.rectangle((cx - r * 0.85, cy - r * 0.85, cx + r * 0.85, cy + r * 0.85), fill=fill, outline=outline, width=2)
    elif kind == "triangle":
        draw.polygon(_polygon(cx, cy + r * 0.15, r, 3), fill=fill, outline=outline, width=2)
    elif kind == "star":
        draw.polygon(_star(cx, cy, r), fill=fill, outline=outline, width=2)
    elif kind == "hexagon":
        draw.polygon(_polygon(cx, cy, r, 6), fill=fill, outline=outline, width=2)
    elif kind == "diamond":
        draw.polygon([(cx, cy - r), (cx + r * 0.7, cy), (cx, cy + r), (cx - r * 0.7, cy)], fill=fill,
                     outline=outline, width=2)
    elif kind == "cross":
        w = r * 0.35
        draw.polygon([(cx - w, cy - r), (cx + w, cy - r), (cx + w, cy - w), (cx + r, cy - w), (cx + r, cy + w),
                      (cx + w, cy + w), (cx + w, cy + r), (cx - w, cy + r), (cx - w, cy + w), (cx - r, cy + w),
                      (cx - r, cy - w), (cx - w, cy - w)], fill=fill, outline=outline, width=2)
    else:
        raise ValueError(f"unknown picture kind {kind!r}; allowed: {', '.join(KINDS)}")


_SLOTS = {1: [(0.5, 0.45)], 2: [(0.28, 0.45), (0.72, 0.45)], 3: [(0.25, 0.3), (0.75, 0.3), (0.5, 0.65)],
          4: [(0.28, 0.28), (0.72, 0.28), (0.28, 0.66), (0.72, 0.66)]}


def draw(picture: Picture, size: int = SIZE) -> bytes:
    """The picture as PNG bytes."""
    if picture.count not in _SLOTS:
        raise ValueError(f"picture count {picture.count} is out of range; allowed: 1 to 4")
    image = Image.new("RGB", (size, size), BACKGROUNDS[picture.background])
    pen = ImageDraw.Draw(image)
    radius = size * (0.3 if picture.count == 1 else 0.17)
    for fx, fy in _SLOTS[picture.count]:
        _shape(pen, picture.kind, fx * size, fy * size, radius, COLOURS[picture.colour])
    if picture.text:
        font = ImageFont.load_default(size=max(12, size // 11))
        pen.rectangle((0, size * 0.84, size, size), fill=(255, 255, 255))
        pen.text((size / 2, size * 0.92), picture.text, fill=(0, 0, 0), font=font, anchor="mm")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False)
    return out.getvalue()
