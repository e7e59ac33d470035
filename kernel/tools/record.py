"""Record the bus traffic of a run to an MCAP file, and read such a file back.

The kernel only ever sees message headers (taps), never bodies, so recording is done by a node:
``launch run FILE --record`` adds a :class:`Recorder` whose one input, ``bus``, is wired from every
output of every node. It writes ``RUN/recording.mcap`` with the ``mcap`` package:

* one channel per ``<node>/<output>``, message encoding ``json``: an object ``{src, output, seq,
  step, ts, body}``; JSON because Foxglove shows it as is, and the body is tagged (see
  :func:`to_json`) so that it decodes back to exactly what was published;
* images found in a body (``uint8`` arrays H×W, H×W×1, ×3 or ×4) go as PNG in
  ``foxglove.CompressedImage`` messages on ``<node>/<output>/<key>`` (``env/obs/frame``), which
  Foxglove's Image panel shows; the body keeps a reference, and PNG is lossless, so a replay gets
  the same pixels back;
* the resolved launch file in the metadata record ``framebus.launch``; log time = publish time
  (the sender's clock in the header), ``sequence`` = the sender's bus ``seq``.

Chunks are zstd-compressed and closed at least every ``flush_s`` seconds, so a run that is killed
loses at most that much: :func:`read_recording` reads a file without its summary section (no
footer) up to the last complete chunk. The format is described for people in docs/record.md.
"""

from __future__ import annotations

import asyncio
import base64
import json
import math
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from kernel.launchfile import InputSpec, LaunchFile, NodeSpec, RestartSpec
from kernel.sdk.images import png_array, png_bytes
from kernel.sdk.node import Message, Node, on_input
from kernel.tools import rewrite
from kernel.tools.rewrite import RECORDER_USES

FORMAT = "framebus-mcap/1"
MESSAGE_SCHEMA = "framebus.Message"
IMAGE_SCHEMA = "foxglove.CompressedImage"
IMAGE_MIN_SIDE = 8  # smaller uint8 arrays are data, not pictures: they stay inline
DEFAULT_FILE = "recording.mcap"

_MESSAGE_JSON_SCHEMA = {
    "title": "framebus bus message",
    "type": "object",
    "properties": {
        "src": {"type": "string", "description": "the publishing node"},
        "output": {"type": "string"},
        "seq": {"type": "integer", "description": "the sender's bus sequence number"},
        "step": {"type": ["integer", "null"]},
        "ts": {"type": "number", "description": "publish time, Unix seconds"},
        "body": {"description": "the body; arrays, bytes and odd keys are tagged objects ($image, $ndarray, ...)"},
    },
}
_IMAGE_JSON_SCHEMA = {
    "title": "foxglove.CompressedImage",
    "type": "object",
    "properties": {
        "timestamp": {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}},
        "frame_id": {"type": "string"},
        "data": {"type": "string", "contentEncoding": "base64"},
        "format": {"type": "string"},
    },
}


# --------------------------------------------------------------------------------------------
# bodies <-> JSON


def is_image(value: Any) -> bool:
    """Arrays a person would call a picture; only these become PNG (lossless, so exact)."""
    if not isinstance(value, np.ndarray) or value.dtype != np.uint8:
        return False
    if value.ndim == 3 and value.shape[2] not in (1, 3, 4):
        return False
    return value.ndim in (2, 3) and value.shape[0] >= IMAGE_MIN_SIDE and value.shape[1] >= IMAGE_MIN_SIDE


def _has_pillow() -> bool:
    try:
        import PIL  # noqa: F401
    except ImportError:
        return False
    return True


def to_json(value: Any, images: list[tuple[str, np.ndarray]] | None, key: str = "") -> Any:
    """A JSON-able twin of a bus body, exact enough to decode back (:func:`from_json`).

    JSON lacks arrays, bytes, non-string keys and non-finite floats, so those become one-key
    objects: ``{"$image": {"key", "index", "shape"}}`` (the pixels are the ``index``-th image of
    this message on channel ``<topic>/<key>``), ``{"$ndarray": {"dtype", "shape", "data"}}``,
    ``{"$bytes": b64}``, ``{"$map": [[k, v], ...]}``, ``{"$float": "nan"}``. ``images`` collects
    the image arrays; pass None to keep every array inline.
    """
    if isinstance(value, np.ndarray):
        if images is not None and is_image(value):
            suffix = key or "image"
            index = sum(1 for k, _ in images if k == suffix)
            images.append((suffix, value))
            return {"$image": {"key": suffix, "index": index, "shape": list(value.shape)}}
        data = np.ascontiguousarray(value).tobytes()
        return {"$ndarray": {"dtype": value.dtype.str, "shape": list(value.shape),
                             "data": base64.b64encode(data).decode()}}
    if isinstance(value, np.generic):
        return to_json(value.item(), images, key)
    if isinstance(value, float) and not math.isfinite(value):
        return {"$float": repr(value)}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode()}
    if isinstance(value, dict):
        plain = all(isinstance(k, str) for k in value) and not (len(value) == 1 and next(iter(value)).startswith("$"))
        if plain:
            return {k: to_json(v, images, f"{key}/{k}" if key else k) for k, v in value.items()}
        return {"$map": [[to_json(k, None), to_json(v, images, f"{key}/{k}" if key else str(k))]
                         for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return [to_json(v, images, key) for v in value]
    return value


def from_json(value: Any, images: dict[str, list[np.ndarray]] | None = None) -> Any:
    """Undo :func:`to_json`; ``images`` maps a key to that message's decoded images, in order."""
    if isinstance(value, list):
        return [from_json(v, images) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        tag, inner = next(iter(value.items()))
        if tag == "$image":
            found = (images or {}).get(inner["key"], [])
            if inner["index"] >= len(found):
                return None  # the image channel was cut off (a killed run): the picture is missing
            return found[inner["index"]].reshape(inner["shape"])
        if tag == "$ndarray":
            data = base64.b64decode(inner["data"])
            return np.frombuffer(data, dtype=np.dtype(inner["dtype"])).reshape(inner["shape"])
        if tag == "$bytes":
            return base64.b64decode(inner)
        if tag == "$float":
            return float(inner)
        if tag == "$map":
            return {_hashable(from_json(k, images)): from_json(v, images) for k, v in inner}
    return {k: from_json(v, images) for k, v in value.items()}


def _hashable(key: Any) -> Any:
    return tuple(_hashable(k) for k in key) if isinstance(key, list) else key


# --------------------------------------------------------------------------------------------
# writing


class RecordingWriter:
    """Bus messages into an MCAP file; also usable without a graph (tests, converters)."""

    def __init__(self, path: Path, *, chunk_size: int = 1 << 20, png_level: int = 1) -> None:
        from mcap.writer import CompressionType, Writer

        self.path = path
        self._file: IO[bytes] = path.open("wb")
        self._writer = Writer(self._file, chunk_size=chunk_size, compression=CompressionType.ZSTD)
        self._writer.start(profile="", library=FORMAT)
        self._message_schema = self._writer.register_schema(
            MESSAGE_SCHEMA, "jsonschema", json.dumps(_MESSAGE_JSON_SCHEMA).encode())
        self._image_schema = self._writer.register_schema(
            IMAGE_SCHEMA, "jsonschema", json.dumps(_IMAGE_JSON_SCHEMA).encode())
        self._channels: dict[str, int] = {}
        self._images = _has_pillow()
        self.png_level = png_level
        self.count = 0
        self.closed = False

    def _channel(self, topic: str, schema: int, metadata: dict[str, str]) -> int:
        if topic not in self._channels:
            self._channels[topic] = self._writer.register_channel(topic, "json", schema, metadata)
        return self._channels[topic]

    def add_metadata(self, name: str, data: dict[str, str]) -> None:
        self._writer.add_metadata(name, data)

    def add_attachment(self, name: str, media_type: str, data: bytes) -> None:
        now = time.time_ns()
        self._writer.add_attachment(now, now, name, media_type, data)

    def write(self, msg: Message) -> None:
        """One DATA message: its images on their own channels first, then the body."""
        topic = f"{msg.src}/{msg.topic}"
        ts = msg.ts or time.time()
        log_time = _nanoseconds(ts)
        seq = msg.seq & 0xFFFFFFFF
        images: list[tuple[str, np.ndarray]] | None = [] if self._images else None
        body = to_json(msg.body, images)
        for key, image in images or ():
            channel = self._channel(f"{topic}/{key}", self._image_schema, {"parent": topic, "key": key})
            data = png_bytes(image, self.png_level)  # level 1 by default: zstd chunks shrink PNG no further
            record = {"timestamp": {"sec": log_time // 1_000_000_000, "nsec": log_time % 1_000_000_000},
                      "frame_id": key, "data": base64.b64encode(data).decode(), "format": "png"}
            self._writer.add_message(channel, log_time, json.dumps(record).encode(), log_time, seq)
        channel = self._channel(topic, self._message_schema, {"src": msg.src, "output": msg.topic})
        record = {"src": msg.src, "output": msg.topic, "seq": msg.seq, "step": msg.step, "ts": ts, "body": body}
        self._writer.add_message(channel, log_time, json.dumps(record, allow_nan=False).encode(), log_time, seq)
        self.count += 1

    def flush(self) -> None:
        """Close the open chunk and hand it to the OS, so a killed process loses nothing before it."""
        self._writer.flush()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._writer.finish()
            self._file.close()


def _nanoseconds(ts: float) -> int:
    """Seconds and fraction apart: a float holds 1.7e18 ns only to the nearest 256."""
    sec = int(ts)
    return sec * 1_000_000_000 + round((ts - sec) * 1e9)


# --------------------------------------------------------------------------------------------
# the recorder node


class Recorder(Node):
    """Writes every message of its ``bus`` input to ``RUN/<file>`` (see the module docstring).

    Params: ``file`` (default ``recording.mcap``; an existing one is kept and ``recording-1.mcap``
    written, so a resumed or restarted recorder never overwrites), ``flush_s`` (2.0: at most this
    much is lost when the run is killed), ``chunk_size`` (bytes, 1 MiB), ``png_level`` (1).
    """

    inputs = ("bus",)
    launching_host = True  # it writes RUN/recording.mcap itself: under Ray it runs where the run folder is

    async def setup(self) -> None:
        if self.run_dir is None:
            raise RuntimeError("the recorder needs a run folder (launch run sets one)")
        if self._rt.ships:
            raise RuntimeError("the recorder writes the run folder's recording itself, so it must run on the "
                               "launching machine; its placement: puts it on another one (without a placement, "
                               "--backend ray puts it there)")
        name = str(self.params.get("file", DEFAULT_FILE))
        self.path = _free_path(self.run_dir / name)
        self.flush_s = float(self.params.get("flush_s", 2.0))
        self.writer = RecordingWriter(self.path, chunk_size=int(self.params.get("chunk_size", 1 << 20)),
                                      png_level=int(self.params.get("png_level", 1)))
        launch = self.run_dir / "launch.yaml"
        self.writer.add_metadata("framebus.launch", {
            "yaml": launch.read_text() if launch.exists() else "",
            "recorder": self.id,
        })
        self.writer.add_metadata("framebus.run", {
            "format": FORMAT, "run_dir": str(self.run_dir), "seed": str(self.seed),
            "started_at": str(time.time()),
        })
        self.writer.flush()
        # PNG and zstd encoding and the chunk writes take milliseconds a frame: one thread does them
        # all, in order, so this node's loop keeps draining its input and sending heartbeats.
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="recorder")
        self._flusher = asyncio.get_running_loop().create_task(self._flush_every())
        self.log.info("recording", file=str(self.path))

    @on_input("bus")
    async def record(self, msg: Message) -> None:
        await asyncio.get_running_loop().run_in_executor(self._pool, self.writer.write, msg)

    async def _flush_every(self) -> None:
        while True:
            await asyncio.sleep(self.flush_s)
            await asyncio.get_running_loop().run_in_executor(self._pool, self.writer.flush)

    async def teardown(self) -> None:
        self._flusher.cancel()
        self._pool.shutdown(wait=True)  # a write or flush already under way finishes first
        # What arrived but was not handled yet (the runtime stops the handler before teardown).
        while (msg := self.recv_nowait("bus")) is not None:
            self.writer.write(msg)
        episodes = self.run_dir / "episodes.jsonl" if self.run_dir else None
        if episodes is not None and episodes.exists():
            self.writer.add_attachment("episodes.jsonl", "application/x-ndjson", episodes.read_bytes())
        self.writer.close()
        self.log.info("recording closed", file=str(self.path), messages=self.writer.count)


def _free_path(path: Path) -> Path:
    n = 0
    candidate = path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


def recordable_outputs(lf: LaunchFile) -> list[str]:
    """Every ``node/output`` of the graph: what each Python node class declares, plus what the
    wiring reads (the only outputs known of a ``cmd:`` node). Wiring an output the node does not
    declare would make the kernel reject it, so nothing is guessed."""
    from kernel.sdk.registry import load_node_class

    found: dict[str, None] = {}
    for spec in lf.nodes:
        if spec.uses is None or spec.uses == RECORDER_USES:
            continue
        try:
            outputs = load_node_class(spec.uses).outputs
        except Exception:  # preflight reports a class that does not load; the wiring still counts
            outputs = ()
        for output in outputs:
            found[f"{spec.id}/{output}"] = None
    for src_node, output, _, _ in lf.edges():
        if lf.node(src_node).uses != RECORDER_USES:
            found[f"{src_node}/{output}"] = None
    return list(found)


def with_recorder(lf: LaunchFile, *, node_id: str = "recorder", policy: str = "block", size: int = 256,
                  params: dict[str, Any] | None = None) -> LaunchFile:
    """The launch file plus a recorder wired from every output (unchanged if it has one already).

    ``block`` by default: a recording that silently misses messages would replay to something
    else. A sender waits only when the recorder is ``size`` messages behind it.
    """
    if any(n.uses == RECORDER_USES for n in lf.nodes):
        return lf
    sources = recordable_outputs(lf)
    if not sources:
        return lf
    spec = NodeSpec(id=rewrite.free_id(lf, node_id), uses=RECORDER_USES, params=dict(params or {}),
                    inputs={"bus": InputSpec(sources=sources, policy=policy, size=size)},  # type: ignore[arg-type]
                    restart=RestartSpec(policy="on-failure"), observer=True)
    return rewrite.add_node(lf, spec)


# --------------------------------------------------------------------------------------------
# reading


@dataclass
class Recorded:
    """One recorded bus message; images stay PNG bytes until :meth:`body` is asked for."""

    topic: str
    src: str
    output: str
    seq: int
    step: int | None
    log_time: int
    raw: Any  # the JSON body (tagged)
    images: dict[str, list[bytes]] = field(default_factory=dict)

    def body(self) -> Any:
        decoded = {key: [png_array(p) for p in pngs] for key, pngs in self.images.items()}
        return from_json(self.raw, decoded)

    def png(self, key: str = "frame", index: int = 0) -> bytes | None:
        pngs = self.images.get(key) or []
        return pngs[index] if index < len(pngs) else None


@dataclass
class Recording:
    path: Path
    metadata: dict[str, dict[str, str]]
    messages: list[Recorded]  # in publish (log time) order
    topics: dict[str, str]  # topic -> schema name
    attachments: dict[str, bytes]
    complete: bool  # False: the file has no summary (the run was killed while recording)

    @property
    def launch_yaml(self) -> str:
        return self.metadata.get("framebus.launch", {}).get("yaml", "")

    def on(self, topic: str) -> list[Recorded]:
        return [m for m in self.messages if m.topic == topic]


class RecordingError(ValueError):
    """A file that is not a framebus recording (not MCAP, or MCAP written by something else)."""


def read_recording(path: Path) -> Recording:
    """Read a recording front to back; a file cut short (a killed run) is read up to its last
    complete record, and ``complete`` says whether the summary was there. A file that is no
    recording at all raises RecordingError, naming the file and what is wrong with it."""
    try:
        return _read_recording(path)
    except OSError as exc:
        raise RecordingError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except Exception as exc:  # the mcap reader's and our own decoding's errors alike
        raise RecordingError(f"{path} is not a framebus recording (an MCAP file written by `launch run` with "
                             f"record:): {type(exc).__name__}: {exc}") from None


def _read_recording(path: Path) -> Recording:
    schemas: dict[int, str] = {}
    channels: dict[int, tuple[str, str, dict[str, str]]] = {}
    metadata: dict[str, dict[str, str]] = {}
    attachments: dict[str, bytes] = {}
    messages: list[tuple[int, int, Recorded]] = []
    pending: dict[tuple[str, int], dict[str, list[bytes]]] = {}  # images wait for their body
    complete = False
    with path.open("rb") as fh:
        for record in _records(fh):
            kind = type(record).__name__
            if kind == "Schema":
                schemas[record.id] = record.name
            elif kind == "Channel":
                channels[record.id] = (record.topic, schemas.get(record.schema_id, ""), dict(record.metadata))
            elif kind == "Message":
                topic, schema, meta = channels[record.channel_id]
                doc = json.loads(record.data)
                if schema == IMAGE_SCHEMA:
                    slot = pending.setdefault((meta.get("parent", ""), record.sequence), {})
                    slot.setdefault(meta.get("key", "frame"), []).append(base64.b64decode(doc["data"]))
                    continue
                images = pending.pop((topic, record.sequence), {})
                rec = Recorded(topic, doc.get("src", ""), doc.get("output", ""), int(doc.get("seq", 0)),
                               doc.get("step"), record.log_time, doc.get("body"), images)
                messages.append((record.log_time, len(messages), rec))
            elif kind == "Metadata":
                metadata[record.name] = dict(record.metadata)
            elif kind == "Attachment":
                attachments[record.name] = bytes(record.data)
            elif kind == "Footer":
                complete = True
    messages.sort(key=lambda item: (item[0], item[1]))
    topics = {topic: schema for topic, schema, _ in channels.values()}
    return Recording(path, metadata, [m for _, _, m in messages], topics, attachments, complete)


def _records(fh: IO[bytes]) -> Iterator[Any]:
    """MCAP records in file order. Past the header, a record that cannot be read is the tail of
    a write that was interrupted (the process was killed): reading stops there, quietly."""
    from mcap.stream_reader import StreamReader

    records = StreamReader(fh, skip_magic=False).records
    yield next(records)  # a file that is not MCAP at all raises here
    try:
        yield from records
    except Exception:  # EndOfFile, a torn zstd chunk, a half-written length: all mean "cut here"
        return
