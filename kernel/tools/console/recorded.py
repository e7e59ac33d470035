"""What a run's recordings (``RUN/recording*.mcap``, ``launch run --record``) hold per step, for the
console's replay: each observation's text and frame, and the environment's step record.

The console reads a recording while the recorder still writes it, and a page asks again and again
as it replays, so reading the whole file each time (as ``launch replay`` does) would not do: a
football run's recording grows by gigabytes of frames. So an :class:`Index` reads each file once,
from where it stopped last time to its newest complete record, keeping only what a step shows in
text and *where* each frame is (the chunk's offset in the file); a frame is read back when a page
asks for it, one chunk at a time. A record cut off at the end of the file (the recorder is writing
it) is read on the next refresh. Nothing here is thread-safe on its own: :class:`Recordings` takes
a lock, since the console calls it from worker threads (``asyncio.to_thread``).
"""

from __future__ import annotations

import base64
import io
import json
import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel.tools.recording_files import recordings, written_order

MAGIC = b"\x89MCAP0\r\n"
CHUNK, SCHEMA, CHANNEL, MESSAGE, DATA_END = 0x06, 0x03, 0x04, 0x05, 0x0F
IMAGE_SCHEMA = "foxglove.CompressedImage"  # kernel.tools.record.IMAGE_SCHEMA (that module loads the node SDK)
TEXT_CHARS = 4000  # an observation's text kept per step at most: a page shows it, it must not fill memory


@dataclass
class Seen:
    """One step as a recording has it: the observation (``node`` published it) and the step record."""

    node: str
    text: str = ""
    goal: str = ""
    frame: tuple[int, int, int] | None = None  # (chunk offset, channel id, sequence) of its picture
    step: dict[str, Any] | None = None  # the environment's step record: action, valid, reward, done, info


@dataclass
class Index:
    """One recording file, read incrementally (see the module docstring)."""

    path: Path
    pos: int = 0  # where the next unread record starts
    complete: bool = False  # the data section ended: the recorder closed the file
    schemas: dict[int, str] = field(default_factory=dict)
    channels: dict[int, tuple[str, str, dict[str, str]]] = field(default_factory=dict)  # id -> topic, schema, meta
    episodes: dict[str, dict[int, Seen]] = field(default_factory=dict)  # episode -> t -> what was seen
    _pictures: dict[tuple[str, int], dict[str, tuple[int, int, int]]] = field(default_factory=dict)

    def refresh(self) -> None:
        """Read what was written since the last call, up to the last complete record."""
        if self.complete or not self.path.exists():
            return
        with self.path.open("rb") as fh:
            if self.pos == 0:
                if fh.read(len(MAGIC)) != MAGIC:
                    return  # not (yet) an MCAP file: the recorder has not written its header
                self.pos = len(MAGIC)
            fh.seek(self.pos)
            while True:
                head = fh.read(9)
                if len(head) < 9:
                    return
                opcode, length = head[0], struct.unpack("<Q", head[1:])[0]
                content = fh.read(length)
                if len(content) < length:
                    return  # the recorder is writing this record
                if opcode == DATA_END:
                    self.complete = True
                    return
                self._record(opcode, content, self.pos)
                self.pos += 9 + length

    def _record(self, opcode: int, content: bytes, offset: int) -> None:
        from mcap.data_stream import ReadDataStream
        from mcap.records import Channel, Chunk, Message, Schema
        from mcap.stream_reader import breakup_chunk

        stream = ReadDataStream(io.BytesIO(content))
        if opcode == CHUNK:
            for record in breakup_chunk(Chunk.read(stream)):
                self._inner(record, offset)
        elif opcode == SCHEMA:
            self._inner(Schema.read(stream), offset)
        elif opcode == CHANNEL:
            self._inner(Channel.read(stream), offset)
        elif opcode == MESSAGE:
            self._inner(Message.read(stream, len(content)), offset)

    def _inner(self, record: Any, offset: int) -> None:
        kind = type(record).__name__
        if kind == "Schema":
            self.schemas[record.id] = record.name
        elif kind == "Channel":
            self.channels[record.id] = (record.topic, self.schemas.get(record.schema_id, ""), dict(record.metadata))
        elif kind == "Message" and record.channel_id in self.channels:
            topic, schema, meta = self.channels[record.channel_id]
            if schema == IMAGE_SCHEMA:  # written just before the message it belongs to
                slot = self._pictures.setdefault((meta.get("parent", ""), record.sequence), {})
                slot.setdefault(meta.get("key", "frame"), (offset, record.channel_id, record.sequence))
            elif topic.endswith("/obs") or topic.endswith("/step"):
                self._message(topic, record.sequence, record.data)

    def _message(self, topic: str, sequence: int, data: bytes) -> None:
        pictures = self._pictures.pop((topic, sequence), {})
        doc = json.loads(data)
        body = doc.get("body")
        if not isinstance(body, dict) or "episode" not in body:
            return
        node, _, output = topic.partition("/")
        t = body.get("t", doc.get("step"))
        if not isinstance(t, int):
            return
        steps = self.episodes.setdefault(str(body["episode"]), {})
        if output == "obs":
            seen = steps.setdefault(t, Seen(node))
            seen.node, seen.text, seen.goal = node, _text(body.get("text")), _text(body.get("goal"))
            seen.frame = pictures.get("frame") or next(iter(pictures.values()), None)
        else:
            kept = ("action", "valid", "reward", "done", "info")
            steps.setdefault(t, Seen(node)).step = {k: body.get(k) for k in kept}

    def pictures_at(self, offset: int) -> dict[tuple[int, int], bytes]:
        """Every picture of the chunk at ``offset``, by (channel id, sequence), as encoded (PNG)."""
        from mcap.data_stream import ReadDataStream
        from mcap.records import Chunk
        from mcap.stream_reader import breakup_chunk

        with self.path.open("rb") as fh:
            fh.seek(offset)
            head = fh.read(9)
            content = fh.read(struct.unpack("<Q", head[1:])[0]) if len(head) == 9 else b""
        if not content or head[0] != CHUNK:
            return {}
        found = {}
        for record in breakup_chunk(Chunk.read(ReadDataStream(io.BytesIO(content)))):
            if type(record).__name__ == "Message" and self.channels.get(record.channel_id, ("", ""))[1] == IMAGE_SCHEMA:
                found[(record.channel_id, record.sequence)] = base64.b64decode(json.loads(record.data)["data"])
        return found


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else "" if value is None else json.dumps(value)
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + f"… ({len(text)} chars)"


class Recordings:
    """Every recording of a run folder (a resumed run or a restarted recorder writes
    ``recording-1.mcap`` beside the first); where two have an episode, the later one's is shown,
    as ``launch report`` does. The pictures of the last few chunks read back are kept, so playing an
    episode (or stepping back and forth) decompresses each chunk once."""

    CACHE = 4  # chunks (1 MiB each by default) whose pictures are kept

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.files: dict[Path, Index] = {}
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[Path, int], dict[tuple[int, int], bytes]] = OrderedDict()

    def refresh(self) -> None:
        with self._lock:
            for path in recordings(self.run_dir):
                self.files.setdefault(path, Index(path)).refresh()
            self.files = dict(sorted(self.files.items(), key=lambda item: written_order(item[0])))

    @property
    def names(self) -> list[str]:
        with self._lock:
            return [p.name for p in self.files]

    @property
    def writing(self) -> bool:
        """Whether a recorder may still add to a file (it is not closed yet)."""
        with self._lock:
            return any(not index.complete for index in self.files.values())

    def episode(self, episode: str) -> dict[int, Seen]:
        """The steps of ``episode`` in the last file that has it (a copy: a refresh may add to them)."""
        with self._lock:
            index = self._holder(episode)
            return dict(index.episodes[episode]) if index is not None else {}

    def _holder(self, episode: str) -> Index | None:
        return next((i for i in reversed(self.files.values()) if episode in i.episodes), None)

    def picture(self, episode: str, t: int) -> bytes | None:
        """The frame of step ``t`` as recorded (PNG), or None where the recording has none."""
        with self._lock:
            index = self._holder(episode)
            seen = index.episodes[episode].get(t) if index is not None else None
            if index is None or seen is None or seen.frame is None:
                return None
            offset, channel, sequence = seen.frame
            key = (index.path, offset)
            if key not in self._cache:
                self._cache[key] = index.pictures_at(offset)
                if len(self._cache) > self.CACHE:
                    self._cache.popitem(last=False)
            self._cache.move_to_end(key)
            return self._cache[key].get((channel, sequence))
