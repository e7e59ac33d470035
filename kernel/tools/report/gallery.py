"""The report's "Images" section: the pictures nodes kept for their episodes (``Node.attach_images``).

One card per episode, in the episodes' order: the episode's status and results, then each set a
node wrote as a row of labelled pictures side by side (a target beside what the agent made). The
report stays one file, so the pictures are inlined small (PNG or JPEG, whichever is smaller); each also links to its full-size
file in the run folder, which works while the page sits beside it. Bounded by ``max_episodes``
and ``max_rows`` so a long run cannot grow the page without end.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from kernel.sdk.images import data_url, png_bytes
from kernel.sdk.media import read_sets

BOX = (560, 760)  # the largest inlined picture (width, height): a page stays legible, the file small
MAX_ROWS = 6  # sets per episode at most
METRICS = 6
HINTS = ("score", "success", "reward", "aes", "distance", "improve", "return", "agreement", "goal")


@dataclass
class Shown:
    label: str
    uri: str  # the inlined thumbnail, a data: URL
    link: str  # the full-size file, relative to the page
    size: tuple[int, int]  # the full-size file's width and height


@dataclass
class Row:
    caption: str
    node: str
    pictures: list[Shown]


@dataclass
class Gallery:
    episode: str
    status: str
    metrics: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    hidden_rows: int = 0


def shrink(path: Path, box: tuple[int, int] = BOX) -> str | None:
    """A picture file fitted into ``box`` as a ``data:`` URL; None when it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image = image.convert("RGB")
            image.thumbnail(box, Image.Resampling.LANCZOS)
            # a page of flat colours keeps its text sharp in a palette PNG; a page of photos is
            # smaller as JPEG: the page inlines many, so take the smaller
            small = image.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).convert("RGB")
            png = png_bytes(np.asarray(small), level=9)
            out = io.BytesIO()
            image.save(out, format="JPEG", quality=80)
            jpeg = out.getvalue()
            return data_url(jpeg, "image/jpeg") if len(jpeg) < len(png) else data_url(png)
    except (OSError, UnidentifiedImageError, ValueError):
        return None


def _shown_metrics(metrics: dict[str, Any], wanted: list[str]) -> dict[str, Any]:
    """The metrics a node asked for, or else the results among the episode's scalars."""
    scalars = {k: v for k, v in metrics.items() if not isinstance(v, (dict, list))}
    if wanted:
        return {k: scalars[k] for k in wanted if k in scalars}
    ranked = sorted(scalars, key=lambda k: not any(h in k for h in HINTS))
    return {k: scalars[k] for k in ranked[:METRICS] if any(h in k for h in HINTS)}


def galleries(run_dir: Path, episodes: list[dict[str, Any]], page_dir: Path, *, max_episodes: int = 12,
              max_rows: int = MAX_ROWS) -> tuple[list[Gallery], int]:
    """The cards of the first ``max_episodes`` episodes with pictures, and how many have pictures."""
    sets = read_sets(run_dir)
    by_episode: dict[str, list[dict[str, Any]]] = {}
    for line in sets:
        by_episode.setdefault(str(line["episode"]), []).append(line)
    order = [str(ep.get("episode_id")) for ep in episodes if str(ep.get("episode_id")) in by_episode]
    order += [e for e in by_episode if e not in order]  # not ended (a run cut short): still worth a look
    ended = {str(ep.get("episode_id")): ep for ep in episodes}
    out: list[Gallery] = []
    for eid in order[:max_episodes]:
        ep = ended.get(eid, {"status": "not ended", "metrics": {}})
        lines = by_episode[eid]
        wanted = list(dict.fromkeys(m for line in lines for m in line.get("metrics") or []))
        card = Gallery(eid, str(ep.get("status", "")), _shown_metrics(dict(ep.get("metrics") or {}), wanted),
                       hidden_rows=max(0, len(lines) - max_rows))
        for line in lines[:max_rows]:
            row = Row(str(line.get("caption", "")), str(line.get("node", "")), [])
            for pic in line.get("pictures") or []:
                path = run_dir / str(pic.get("path", ""))
                uri = shrink(path)
                if uri is None:
                    continue
                link = quote(Path(os.path.relpath(path, page_dir)).as_posix())
                row.pictures.append(Shown(str(pic.get("label", "")), uri, link,
                                          (int(pic.get("width", 0)), int(pic.get("height", 0)))))
            if row.pictures:
                card.rows.append(row)
        if card.rows:
            out.append(card)
    return out, len(order)
