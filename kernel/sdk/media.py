"""Pictures a node keeps for an episode, in the run folder: the format its writer and readers share.

A judge that renders pages to score them (a generated web page beside its target) has pictures
worth showing, but a score in episodes.jsonl cannot hold them and the streams should not carry
them. So the node writes them itself, under ``RUN/media/<node>/<episode>/``, and lists each set in
``RUN/media/<node>/index.jsonl`` (one file per node: two processes never append to one file). The
report (``launch report``) reads that index; the kernel never looks at it, so it knows nothing of
what the pictures are. A node on another machine than the run folder encodes the set itself and
ships it to the kernel (kernel.bus.outbox), which writes it with ``store_set``, as the node would.

One call is one set, a row in the report: its pictures side by side under its caption. A set is
named by its ``row`` (the caption when none is given, but a caption may carry a score that changes
between tries): a set with the name of an earlier set of the same node and episode replaces it
(its files are rewritten and readers keep the last line), which is what a replayed episode needs.
"""

from __future__ import annotations

import io
import json
import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Union

import numpy as np

from kernel.sdk.images import png_bytes

__all__ = ["MEDIA_DIR", "INDEX", "MAX_PX", "Picture", "encode", "encode_set", "read_sets", "store_set", "write_set"]

MEDIA_DIR = "media"
INDEX = "index.jsonl"
SUFFIXES = (".png", ".jpg")
MAX_PX = 1280  # pictures are for people to look at, not to score: a full-page capture need not keep every pixel

Picture = Union[bytes, np.ndarray]
"""An encoded picture (PNG, JPEG: anything Pillow opens) or a uint8 frame."""

_LOCK = threading.Lock()  # one node may write sets from several threads (asyncio.to_thread)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def slug(text: str, default: str = "images") -> str:
    """A file name part made of ``text``: never a path, never empty."""
    return _UNSAFE.sub("_", text).strip("._")[:60] or default


def encode(frame: np.ndarray) -> tuple[bytes, str]:
    """The frame as PNG, or as JPEG where that is less than half the bytes (a page full of photos):
    a page of flat colours and text stays sharp, and a run of photo pages does not fill the disk.
    The file's suffix comes with it."""
    from PIL import Image

    png = png_bytes(frame, level=6)
    out = io.BytesIO()
    Image.fromarray(frame).convert("RGB").save(out, format="JPEG", quality=88)
    return (out.getvalue(), ".jpg") if len(out.getvalue()) * 2 < len(png) else (png, ".png")


def _fit(picture: Picture, max_px: int | None) -> tuple[np.ndarray, int, int]:
    """The picture as a frame, no larger than ``max_px`` on its longer side, and its size."""
    from PIL import Image

    if isinstance(picture, np.ndarray):
        frame = picture
    else:
        with Image.open(io.BytesIO(picture)) as image:
            frame = np.asarray(image.convert("RGBA" if "A" in image.getbands() else "RGB"))
    height, width = frame.shape[:2]
    if max_px is not None and max(width, height) > max_px:
        image = Image.fromarray(frame)
        image.thumbnail((max_px, max_px), Image.Resampling.LANCZOS)
        frame = np.asarray(image)
        height, width = frame.shape[:2]
    return frame, width, height


Encoded = tuple[str, bytes, str, int, int]
"""One picture ready to be written: its label, its file's bytes, the suffix (``.png``, ``.jpg``),
its width and height."""


def encode_set(pictures: Sequence[tuple[str, Picture]], max_px: int | None = MAX_PX) -> list[Encoded]:
    """Shrink and encode a set's pictures (the CPU work; ``store_set`` does the disk's)."""
    if not pictures:
        raise ValueError("a set of pictures needs at least one picture")
    out: list[Encoded] = []
    for label, picture in pictures:
        frame, width, height = _fit(picture, max_px)
        data, suffix = encode(frame)
        out.append((str(label), data, suffix, width, height))
    return out


def store_set(run_dir: Path, node: str, episode: str, encoded: Sequence[Encoded], *, caption: str = "",
              row: str | None = None, metrics: Sequence[str] = (), when: float | None = None) -> list[Path]:
    """Write an encoded set's files and append its index line; blocking. The kernel calls it for a
    node on another machine (kernel.bus.outbox), with the node's ``when``."""
    if not encoded:
        raise ValueError("a set of pictures needs at least one picture")
    folder = run_dir / MEDIA_DIR / slug(node)
    episode_dir = folder / slug(episode, "episode")
    episode_dir.mkdir(parents=True, exist_ok=True)
    name = caption if row is None else row
    stem = slug(name)
    written: list[Path] = []
    listed: list[dict[str, Any]] = []
    for i, (label, data, suffix, width, height) in enumerate(encoded):
        if suffix not in SUFFIXES:
            raise ValueError(f"a picture's suffix is one of {SUFFIXES}, not {suffix!r}")
        path = episode_dir / f"{stem}-{i}-{slug(label, 'picture')}{suffix}"
        for old in episode_dir.glob(f"{stem}-{i}-*"):  # a replaced set's file, maybe in the other format
            old.unlink()
        path.write_bytes(data)
        written.append(path)
        listed.append({"label": str(label), "path": str(path.relative_to(run_dir)), "width": width, "height": height})
    line = {"episode": episode, "node": node, "row": name, "caption": caption, "metrics": list(metrics),
            "pictures": listed, "time": time.time() if when is None else when}
    with _LOCK, open(folder / INDEX, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
    return written


def write_set(run_dir: Path, node: str, episode: str, pictures: Sequence[tuple[str, Picture]], *,
              caption: str = "", row: str | None = None, metrics: Sequence[str] = (),
              max_px: int | None = MAX_PX) -> list[Path]:
    """Write one set and append its index line; blocking (a node calls it through a thread)."""
    return store_set(run_dir, node, episode, encode_set(pictures, max_px), caption=caption, row=row,
                     metrics=metrics)


def set_paths(run_dir: Path, node: str, episode: str, encoded: Sequence[Encoded], *, caption: str = "",
              row: str | None = None) -> list[Path]:
    """Where ``store_set`` writes an encoded set's files (what a node that ships its pictures is told)."""
    folder = run_dir / MEDIA_DIR / slug(node) / slug(episode, "episode")
    stem = slug(caption if row is None else row)
    return [folder / f"{stem}-{i}-{slug(label, 'picture')}{suffix}" for i, (label, _, suffix, _, _) in enumerate(encoded)]


def read_sets(run_dir: Path) -> list[dict[str, Any]]:
    """Every node's sets in the order they were written, a replaced set (same node, episode and
    row) at the place of its last writing; lines cut short by a crash are skipped."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    for index in sorted((run_dir / MEDIA_DIR).glob(f"*/{INDEX}")):
        for text in index.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                line = json.loads(text)
                key = (str(line["node"]), str(line["episode"]), str(line.get("row", line.get("caption", ""))))
            except (ValueError, KeyError, TypeError):
                continue
            found.pop(key, None)
            found[key] = line
    return sorted(found.values(), key=lambda line: float(line.get("time", 0)))
