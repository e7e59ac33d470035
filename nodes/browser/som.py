"""Set-of-Marks: the page's interactable elements numbered 1..N, boxed on the screenshot and listed
as text, VisualWebArena's way (spec §2.2, "SoM as implemented").

The page side is one script (``COLLECT_JS``) that returns every interactable or text element in
DOM order with its box in viewport pixels; the rules that decide what is numbered, drawn and listed
are plain Python over those records (``mark_page``), so they are tested without a browser; the
drawing (``draw_marks``) is Pillow and runs off the event loop.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

try:  # not a dependency of the browser pack (gfootball brings it): used when present, same pixels
    import cv2

    _CV_RGB: int | None = getattr(cv2, "IMREAD_COLOR_RGB", None)  # OpenCV >= 4.10
except ImportError:  # pragma: no cover - depends on the install
    _CV_RGB = None

__all__ = ["ALT_JS", "COLLECT_JS", "INTERACTABLE", "Mark", "SomPage", "draw_marks", "mark_page", "screenshot_array"]

INTERACTABLE: tuple[str, ...] = (
    'a[href]:not(:has(img))', 'a[href] img', 'button', 'input:not([type="hidden"])', 'textarea', 'select',
    '[tabindex]:not([tabindex="-1"])', '[contenteditable="true"]', '[role="button"]', '[role="link"]',
    '[role="checkbox"]', '[role="menuitem"]', '[role="tab"]', '[draggable="true"]', '.btn',
    'a[href="/notifications"]', 'a[href="/submit"]', '.fa.fa-star.is-rating-item', 'input[type="checkbox"]',
)
"""VWA's selectors of the elements an agent can act on."""

TEXT_TAGS: tuple[str, ...] = ("p", "span", "div:not(:has(*))", "h1", "h2", "h3", "h4", "h5", "h6", "li", "article")
"""VWA's selectors of plain text, listed as ``[] [StaticText] [...]`` when not inside an interactable."""

MAX_AREA_FRACTION = 0.8  # boxes covering more of the viewport than this are page furniture, not targets
MIN_SIDE = 8  # boxes smaller than this (px) keep their number but are neither drawn nor listed
TEXT_LIMIT = 200

_TEXT_SELECTOR = ", ".join(f":not({', '.join(INTERACTABLE)}):not(style) > {t}" for t in TEXT_TAGS)

# Rewrites every <img>'s alt to "<original alt>[, description: <caption>], url: <src>" (the original
# kept in data-fb-alt so the rewrite is idempotent), as VWA does before any observation: the
# accessibility tree reads the same alt text.
_ALT_BODY = """
  for (const img of document.querySelectorAll('img')) {
    if (img.dataset.fbAlt === undefined) img.dataset.fbAlt = img.getAttribute('alt') || '';
    const caption = captions[img.src];
    img.alt = img.dataset.fbAlt + (caption ? ', description: ' + caption : '') + ', url: ' + img.src;
  }
"""
ALT_JS = "(captions) => {" + _ALT_BODY + "}"

# The alt rewrite, then every interactable or text element in DOM order with its viewport box.
COLLECT_JS = """
([interactable, textSel, captions]) => {""" + _ALT_BODY + """
  const out = [];
  for (const el of document.querySelectorAll(interactable + ', ' + textSel)) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const alt = el.getAttribute('alt') || '';
    out.push([el.tagName, el.matches(interactable), r.left, r.top, r.width, r.height,
              (alt ? alt + ' ' : '') + (el.textContent || '')]);
  }
  return out;
}
"""

COLLECT_ARGS = (", ".join(INTERACTABLE), _TEXT_SELECTOR)

# matplotlib's default colour cycle (tab10), which VWA's marks use: colour = id index mod 10
PALETTE: tuple[tuple[int, int, int], ...] = tuple(
    (int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16))
    for h in ("1f77b4", "ff7f0e", "2ca02c", "d62728", "9467bd", "8c564b", "e377c2", "7f7f7f", "bcbd22", "17becf"))


@dataclass(frozen=True, slots=True)
class Mark:
    """One numbered element: its box in viewport pixels (x0, y0, x1, y1) and the point a click hits
    (the centre of the box's visible part)."""

    id: int
    tag: str
    text: str
    box: tuple[float, float, float, float]
    center: tuple[float, float]
    shown: bool  # drawn and listed (False: smaller than MIN_SIDE, numbered only)


@dataclass(slots=True)
class SomPage:
    marks: list[Mark] = field(default_factory=list)
    text: str = ""

    def centers(self) -> dict[int, tuple[float, float]]:
        return {m.id: m.center for m in self.marks}


def _clean(text: str) -> str:
    return " ".join(text.split())[:TEXT_LIMIT]


def mark_page(records: list[list[Any]], width: int, height: int) -> SomPage:
    """Number, filter and list the collected elements of a ``width`` x ``height`` viewport."""
    page = SomPage()
    lines: list[str] = []
    seen_text: set[str] = set()
    limit = MAX_AREA_FRACTION * width * height
    for tag, interactable, x, y, w, h, raw in records:
        x0, y0, x1, y1 = float(x), float(y), float(x) + float(w), float(y) + float(h)
        if x1 <= 0 or y1 <= 0 or x0 >= width or y0 >= height:  # outside the viewport
            continue
        if w * h > limit:
            continue
        text = _clean(str(raw))
        shown = w >= MIN_SIDE and h >= MIN_SIDE
        if interactable:
            vx0, vy0, vx1, vy1 = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
            mark = Mark(len(page.marks) + 1, str(tag).upper(), text, (x0, y0, x1, y1),
                        ((vx0 + vx1) / 2, (vy0 + vy1) / 2), shown)
            page.marks.append(mark)
            if shown:
                lines.append(f"[{mark.id}] [{mark.tag}] [{text}]")
        elif shown and text and text not in seen_text:
            seen_text.add(text)
            lines.append(f"[] [StaticText] [{text}]")
    page.text = "\n".join(lines)
    return page


@lru_cache(maxsize=1)
def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    # VWA draws SourceCodePro-SemiBold 16; Debian's DejaVu Sans Mono Bold is the nearest font we have
    path = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf")
    return ImageFont.truetype(str(path), 16) if path.exists() else ImageFont.load_default(16)


def screenshot_array(image: bytes) -> np.ndarray:
    """A PNG or JPEG screenshot as an RGB uint8 array (H x W x 3).

    OpenCV decodes straight to RGB in about half Pillow's time on a 1280x2048 screenshot (the same
    pixels for PNG), and this decode sits on every step's path; Pillow reads what OpenCV cannot,
    and everything where OpenCV is not installed."""
    if _CV_RGB is not None:
        decoded = cv2.imdecode(np.frombuffer(image, np.uint8), _CV_RGB)
        if decoded is not None:
            return decoded
    with Image.open(io.BytesIO(image)) as img:
        return np.asarray(img if img.mode == "RGB" else img.convert("RGB"))


def draw_marks(frame: np.ndarray, page: SomPage) -> np.ndarray:
    """The screenshot with each shown mark boxed (2 px) and labelled with its id in white on the
    box's colour, labels placed where they stay inside the picture and overlap no earlier label."""
    img = Image.fromarray(frame)
    draw = ImageDraw.Draw(img)
    font = _font()
    width, height = img.size
    placed: list[tuple[float, float, float, float]] = []
    for mark in page.marks:
        if not mark.shown:
            continue
        colour = PALETTE[(mark.id - 1) % len(PALETTE)]
        x0, y0, x1, y1 = mark.box
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=colour, width=2)
        label = str(mark.id)
        left, top, right, bottom = draw.textbbox((0, 0), label, font=font)
        lw, lh = right - left + 4, bottom - top + 4  # padding 2 on each side
        candidates = [(x0, y0 - lh), (x0, y0), (x1 - lw, y0 - lh), (x1 - lw, y0),
                      (x0, y1), (x0, y1 - lh), (x1 - lw, y1), (x1 - lw, y1 - lh)]
        spot = next((c for c in candidates if _fits(c, lw, lh, width, height, placed)), candidates[1])
        box = (spot[0], spot[1], spot[0] + lw, spot[1] + lh)
        placed.append(box)
        draw.rectangle(box, fill=colour)
        draw.text((spot[0] + 2 - left, spot[1] + 2 - top), label, fill=(255, 255, 255), font=font)
    return np.asarray(img)


def _fits(spot: tuple[float, float], lw: float, lh: float, width: int, height: int,
          placed: list[tuple[float, float, float, float]]) -> bool:
    x, y = spot
    if x < 0 or y < 0 or x + lw > width or y + lh > height:
        return False
    return not any(x < bx1 and bx0 < x + lw and y < by1 and by0 < y + lh for bx0, by0, bx1, by1 in placed)

