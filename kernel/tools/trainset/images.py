"""Where an export puts the pictures: files beside the data (the run's own bytes, linked or
copied), or inline as ``data:`` URLs; and VAB's one picture made of several stacked vertically."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from kernel.tools.trainset.runs import image_file

Mode = Literal["files", "inline"]
FOLDER = "images"


class ImageSink:
    """Pictures of the exported records: each once under ``OUT/images/<sha256>.png`` (``files``),
    or as a data URL (``inline``). Counted for the manifest."""

    def __init__(self, out: Path, mode: Mode = "files") -> None:
        self.out = out
        self.mode = mode
        self.written: set[str] = set()

    def ref(self, run: Path, part: Mapping[str, Any]) -> str:
        """What a record puts where a picture goes: its path relative to ``OUT``, or a data URL."""
        path = image_file(run, part)
        if self.mode == "inline":
            self.written.add(str(part["sha256"]))
            return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
        return self._place(str(part["sha256"]), path)

    def data(self, run: Path, part: Mapping[str, Any]) -> bytes:
        """The picture's bytes, as the run kept them."""
        self.written.add(str(part["sha256"]))
        return image_file(run, part).read_bytes()

    def stacked(self, run: Path, parts: Sequence[Mapping[str, Any]]) -> tuple[str, bytes]:
        """Several pictures as one, top to bottom (VAB's CSS training images): the new picture's
        sha256 and PNG bytes; one picture is returned as it is."""
        if len(parts) == 1:
            return str(parts[0]["sha256"]), self.data(run, parts[0])
        from PIL import Image

        pictures = [Image.open(image_file(run, p)).convert("RGB") for p in parts]
        width = max(p.width for p in pictures)
        canvas = Image.new("RGB", (width, sum(p.height for p in pictures)), (255, 255, 255))
        y = 0
        for p in pictures:
            canvas.paste(p, (0, y))
            y += p.height
        buf = io.BytesIO()
        canvas.save(buf, format="PNG", compress_level=6)
        data = buf.getvalue()
        return hashlib.sha256(data).hexdigest(), data

    def put(self, sha: str, data: bytes) -> str:
        """Bytes made here (a stacked picture) placed like a run's picture."""
        self.written.add(sha)
        if self.mode == "inline":
            return "data:image/png;base64," + base64.b64encode(data).decode()
        path = self.out / FOLDER / f"{sha}.png"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        return f"{FOLDER}/{sha}.png"

    def _place(self, sha: str, src: Path) -> str:
        self.written.add(sha)
        dst = self.out / FOLDER / f"{sha}.png"
        if not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)  # the same bytes, no copy: both files are never written again
            except OSError:
                shutil.copyfile(src, dst)
        return f"{FOLDER}/{sha}.png"
