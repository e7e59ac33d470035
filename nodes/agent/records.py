"""Step records: what an agent saw, asked, got back and did, one record per decision.

They are written as each step happens, to the run's results database (``steps`` table) and as a
JSON line in ``RUN/steps/<agent>.jsonl``, so a crashed run still explains itself and ``jq`` or
pandas read them. The pictures of a prompt are kept once each, as the PNG a model node sends
(``RUN/steps/images/<sha256>.png``, named by the hash of those bytes), so a training set exported
from the records (``launch export --format chat``) holds the very image the model was shown. Both
writes are queued to threads (kernel.bus.resultsdb, kernel.bus.outlet), or shipped to the kernel from
an agent on another machine (kernel.bus.outbox): the agent's loop never waits on the disk. (A node on
another machine keeps its pictures in its own folder there: they are not shipped.)
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from kernel.sdk.images import MODEL_PNG_LEVEL, png_bytes
from kernel.sdk.node import Node

IMAGES_DIR = "steps/images"
"""Where a run keeps the pictures of its agents' prompts, relative to the run folder."""


def printable(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages with every image part replaced by a short note of its size."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [{"type": "image", "image": f"<{np.asarray(p['image']).shape[1]}x{np.asarray(p['image']).shape[0]} "
                                                  f"image>"} if p.get("type") == "image" else p for p in content]
        out.append({**m, "content": content})
    return out


class ImageKeeper:
    """The pictures of an agent's prompts as files: each distinct frame once, as
    ``RUN/steps/images/<sha256>.png``; the record's image part names the file and the hash.

    A frame shown again in a later prompt (the history) is recognised by a cheap hash of its
    pixels and not encoded again. Call :meth:`keep` from a worker thread: PNG encoding takes
    milliseconds."""

    MEMORY = 4096  # pixel hashes remembered: a long episode's history, not a whole run's

    def __init__(self, run_dir: Path) -> None:
        self.folder = run_dir / IMAGES_DIR
        self._known: OrderedDict[bytes, str] = OrderedDict()  # pixel hash -> PNG sha256

    def keep(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` as a record keeps them: each image part becomes its size, file and hash."""
        out = []
        for m in messages:
            content = m.get("content")
            if isinstance(content, list):
                content = [self._part(np.asarray(p["image"])) if p.get("type") == "image" else p for p in content]
            out.append({**m, "content": content})
        return out

    def _part(self, frame: np.ndarray) -> dict[str, Any]:
        pixels = hashlib.blake2b(np.ascontiguousarray(frame).data, digest_size=16)
        pixels.update(repr((frame.shape, frame.dtype.str)).encode())
        key = pixels.digest()
        sha = self._known.get(key)
        if sha is None:
            data = png_bytes(frame, MODEL_PNG_LEVEL)
            sha = hashlib.sha256(data).hexdigest()
            path = self.folder / f"{sha}.png"
            if not path.exists():
                self.folder.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(data)
                os.replace(tmp, path)  # a reader never sees half a file; two writers write the same bytes
            self._known[key] = sha
            if len(self._known) > self.MEMORY:
                self._known.popitem(last=False)
        else:
            self._known.move_to_end(key)
        return {"type": "image", "image": f"<{frame.shape[1]}x{frame.shape[0]} image>", "sha256": sha,
                "file": f"{IMAGES_DIR}/{sha}.png"}


class StepRecords:
    """An agent's step records, through its node (``Node.record_step``): the run's store and
    ``RUN/steps/<node>.jsonl``, written by a thread of this process, or by the kernel when the agent
    runs on another machine; no run folder means no records."""

    def __init__(self, node: Node) -> None:
        self._node: Node | None = node
        self._keeper: ImageKeeper | None = None

    async def prompt(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` as a record keeps them: with a run folder, each picture as its file and hash
        (encoded off the loop); without one, as a note of its size."""
        run_dir = self._node.run_dir if self._node is not None else None
        has_images = any(isinstance(m.get("content"), list) and any(p.get("type") == "image" for p in m["content"])
                         for m in messages)
        if run_dir is None or not has_images:
            return printable(messages)
        if self._keeper is None:
            self._keeper = ImageKeeper(Path(run_dir))
        return await asyncio.to_thread(self._keeper.keep, messages)

    def write(self, record: dict[str, Any]) -> None:
        if self._node is not None:
            self._node.record_step(record)

    def close(self) -> None:
        """No more records from this agent (the runtime closes the files when the node ends)."""
        self._node = None


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
