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
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from kernel.sdk.images import data_url, png_bytes
from kernel.sdk.media import INDEX, MEDIA_DIR, read_sets, slug

BOX = (560, 760)  # the largest inlined picture (width, height): a page stays legible, the file small
MAX_ROWS = 6  # sets per episode at most
METRICS = 6
HINTS = ("score", "success", "reward", "aes", "distance", "improve", "return", "agreement", "goal")
MAX_BYTES = 64 << 20  # the largest picture file read: the writer keeps pictures at most 1280 px on a side
#: what a picture file's name promises, and what its first bytes and Pillow must then find
KINDS = {".png": (b"\x89PNG\r\n\x1a\n", "PNG"), ".jpg": (b"\xff\xd8\xff", "JPEG")}


class Skipped(Exception):
    """A picture the index names that the report will not show; the message says why."""


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
    skipped: list[str] = field(default_factory=list)  # index entries not shown, each with why


def read_picture(run_dir: Path, entry: str) -> tuple[Path, bytes]:
    """The file a media index entry names, as a path under ``run_dir`` and its bytes.

    The index is data anyone who can write the run folder (or a node on another machine) wrote, so
    an entry is confined to the run folder (after ``..`` and symbolic links), must be a regular file
    (a FIFO would block the report forever) and must start as its suffix says. Raises Skipped."""
    try:
        path = run_dir / entry  # an absolute entry replaces run_dir here: caught just below
        real, root = path.resolve(), run_dir.resolve()
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL byte, a symlink loop
        raise Skipped(f"not a usable path ({exc})") from None
    if not real.is_relative_to(root):
        raise Skipped(f"it lies outside the run folder {root}")
    kind = KINDS.get(real.suffix.lower())
    if kind is None:
        raise Skipped(f"its name ends in {real.suffix or 'no suffix'}, and a picture's in {' or '.join(KINDS)}")
    try:  # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise Skipped(f"it cannot be opened ({exc.strerror})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        os.close(fd)
        raise Skipped("it is not a regular file (a FIFO, a device or a folder)" if not stat.S_ISREG(info.st_mode)
                      else f"it is {info.st_size:,} bytes, more than the {MAX_BYTES:,} a picture may have")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_BYTES + 1)
    if not data.startswith(kind[0]):
        raise Skipped(f"it is not a {kind[1]} picture, as its name {real.name!r} says")
    return path, data


def shrink(data: bytes, kind: str, box: tuple[int, int] = BOX) -> str:
    """A picture file's bytes (``kind``: Pillow's format name) fitted into ``box`` as a ``data:`` URL.
    Raises Skipped when Pillow cannot read it, or reads it as another format."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != kind:
                raise Skipped(f"it is a {image.format} picture named as a {kind} one")
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
    except (OSError, UnidentifiedImageError, ValueError, Image.DecompressionBombError) as exc:
        raise Skipped(f"Pillow cannot read it as a {kind} picture ({exc})") from None


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
                entry = str(pic.get("path", ""))
                try:
                    path, data = read_picture(run_dir, entry)
                    uri = shrink(data, KINDS[path.suffix.lower()][1])
                except Skipped as why:
                    index = f"{MEDIA_DIR}/{slug(str(line.get('node', '')))}/{INDEX}"
                    card.skipped.append(f"{index}: picture {str(pic.get('label', ''))!r} of row {row.caption!r} "
                                        f"(path {entry[:200]!r}) skipped: {why}")
                    continue
                link = quote(Path(os.path.relpath(path, page_dir)).as_posix())
                row.pictures.append(Shown(str(pic.get("label", "")), uri, link,
                                          (int(pic.get("width", 0)), int(pic.get("height", 0)))))
            if row.pictures:
                card.rows.append(row)
        if card.rows or card.skipped:
            out.append(card)
    return out, len(order)
