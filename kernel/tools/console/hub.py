"""What the console pages see, newest first: the hub keeps the latest of everything and fans it
out to each page's mailbox. A page that does not keep up loses the older value of a key (counted),
never holds the run back; frames are downscaled and JPEG-encoded in a thread, at most ``fps`` a
second per environment, and only while a page is open."""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgpack
import numpy as np

from kernel.tools.console.bodies import plain
from kernel.tools.console.replay import Replays

Call = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Ask a service: ``call("kernel.stats", {})``, ``call("human.web.act", {...})`` (node, then service)."""


def jpeg(frame: np.ndarray, max_px: int, quality: int) -> tuple[bytes, list[int]]:
    """A frame downscaled to ``max_px`` on its longer side, as JPEG; and its original size."""
    from PIL import Image

    arr = np.ascontiguousarray(frame)
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    image = Image.fromarray(arr)
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    h, w = arr.shape[:2]
    scale = max_px / max(h, w)
    if scale < 1:
        image = image.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.BILINEAR)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=quality)
    return out.getvalue(), [w, h]


def find_frame(body: Any) -> np.ndarray | None:
    """The picture of an observation: ``frame`` by the convention, else the first uint8 image."""
    if not isinstance(body, dict):
        return None
    keys = ["frame", "image", "screenshot", *[k for k in body if isinstance(k, str)]]
    for key in keys:
        value = body.get(key)
        if isinstance(value, np.ndarray) and value.dtype == np.uint8 and value.ndim in (2, 3) \
                and min(value.shape[:2]) >= 8:
            return value
    return None


#: the last step number a page may ask for: steps are SQLite INTEGERs (signed 64-bit), and the driver
#: raises OverflowError on a bigger Python int (msgpack carries up to 2^64-1, a URL any length)
LAST_STEP = 2**63 - 1


def step_number(t: Any, what: str) -> int:
    """``t`` (an int, or the digits of a URL) as a step number, or a ValueError naming ``what`` and the range."""
    value = int(t) if isinstance(t, str) and t.isascii() and t.isdigit() and len(t) <= 20 else t
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= LAST_STEP:
        raise ValueError(f"{what}: t must be a whole step number from 0 to {LAST_STEP} (got {str(t)[:40]!r})")
    return value


class Page:
    """One open page: a mailbox of the newest value per key, sent by its own task."""

    def __init__(self) -> None:
        self.mailbox: dict[str, Any] = {}
        self.ready = asyncio.Event()
        self.dropped = 0
        self.sent = 0

    def put(self, key: str, value: Any) -> None:
        if key in self.mailbox:
            self.dropped += 1  # the page had not taken the older one yet
        self.mailbox[key] = value
        self.ready.set()

    async def take(self) -> dict[str, Any]:
        await self.ready.wait()
        self.ready.clear()
        out, self.mailbox = self.mailbox, {}
        return out


def pack(message: dict[str, Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


class Hub:
    """The console's state; ``call`` reaches the kernel's and nodes' services."""

    def __init__(self, call: Call, *, run_dir: Path | None, humans: list[str], fps: float = 8.0,
                 max_px: int = 480, quality: int = 70, has_data: bool = True) -> None:
        self.call = call
        self.run_dir = run_dir
        self.humans = list(humans)
        self.fps = fps
        self.max_px = max_px
        self.quality = quality
        self.has_data = has_data
        self.pages: set[Page] = set()
        self.latest: dict[str, Any] = {}  # key -> newest value, for a page that opens later
        self.frames: dict[str, tuple[int, np.ndarray]] = {}  # env -> (serial, newest frame copy)
        self.encoded: dict[str, int] = {}  # env -> serial of the frame last encoded
        self.counts = {"frames_in": 0, "frames_sent": 0, "frames_skipped": 0,
                       "refused": 0}  # requests and sockets refused (no token, wrong token, foreign origin)
        self.episodes: list[dict[str, Any]] = []
        self.usage: dict[str, Any] = {"tokens": 0, "cost_usd": 0.0, "decisions": 0}
        self._episode_rowid = 0
        self._step_rowid = 0
        self.tasks: list[asyncio.Task[Any]] = []
        self.replays = Replays(run_dir) if run_dir is not None else None
        self._raw: dict[str, tuple[str, str, Any, int | None]] = {}  # node/output -> its newest message, not shown yet
        self._ctl_serial = 0  # commands answered so far, each with the status it left

    # input ------------------------------------------------------------------------------------
    def on_message(self, src: str, output: str, body: Any, step: int | None) -> None:
        """A bus message the console reads (called on the node's loop: only cheap work here)."""
        frame = find_frame(body) if output == "obs" else None
        if frame is not None:
            self.counts["frames_in"] += 1
            serial = self.frames.get(src, (0, frame))[0] + 1
            self.frames[src] = (serial, frame.copy())  # a shared-memory frame is gone once we return
        # The rest waits for the next flush (at most 10 a second, and only while a page is open):
        # a body is made small for the page once per flush, not once per message.
        # Top-level arrays are left out now: a view of a shared-memory frame would keep the sender's
        # slot taken until the flush.
        if isinstance(body, dict) and any(isinstance(v, np.ndarray) for v in body.values()):
            body = {k: (plain(v) if isinstance(v, np.ndarray) else v) for k, v in body.items()}
        self._raw[f"{src}/{output}"] = (src, output, body, step)

    def flush(self) -> None:
        """Turn the newest message of each output into what the pages show."""
        raw, self._raw = self._raw, {}
        for src, output, body, step in raw.values():
            self._show(src, output, body, step)

    def _show(self, src: str, output: str, body: Any, step: int | None) -> None:
        if output == "obs" and isinstance(body, dict):
            self.publish(f"obs:{src}", {"node": src, "step": step, "episode": body.get("episode"), "t": body.get("t"),
                                        "text": plain(body.get("text")), "goal": plain(body.get("goal")),
                                        "actions": plain(body.get("actions")), "done": body.get("done")})
        elif output == "prompt" and src in self.humans:
            self.publish(f"human:{src}", {"node": src, **plain(body if isinstance(body, dict) else {"prompt": body})})
        else:
            self.publish(f"out:{src}/{output}", {"node": src, "output": output, "step": step,
                                                 "body": plain(body, max_str=1000)})

    def publish(self, key: str, value: Any) -> None:
        self.latest[key] = value
        for page in self.pages:
            page.put(key, value)

    # pages ------------------------------------------------------------------------------------
    def open_page(self) -> Page:
        self.flush()
        page = Page()
        self.pages.add(page)
        page.put("hello", {"humans": self.humans, "has_data": self.has_data, "fps": self.fps})
        for key, value in self.latest.items():
            page.put(key, value)
        page.put("episodes", {"rows": self.episodes, "reset": True})
        page.put("usage", dict(self.usage))
        for env in self.frames:
            self.encoded.pop(env, None)  # the new page gets the newest frame too
        return page

    def close_page(self, page: Page) -> None:
        self.pages.discard(page)

    def dropped(self) -> int:
        return sum(p.dropped for p in self.pages)

    async def command(self, msg: dict[str, Any]) -> dict[str, Any]:
        """A page's request: ``ctl`` (pause, resume, step, stop), ``act`` (a human's action),
        ``mode`` (take over, hand back), ``steps`` (an episode's step records as stored),
        ``replay`` (an episode's outline) and ``replay_step`` (one step of it, ``t``). Returns the
        reply sent back to that page."""
        op = msg.get("op")
        if op == "ctl":
            cmd = msg.get("cmd")
            if cmd not in ("pause", "resume", "step", "stop"):
                raise ValueError(f"ctl: unknown command {cmd!r}; use pause, resume, step or stop")
            n = msg.get("n", 1)
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"ctl step: n must be a whole number of decisions, at least 1 (got {n!r})")
            status = await self.call("kernel", f"ctl.{cmd}", {"n": n})
            self._ctl_serial += 1  # a status the poll fetched before this one is older: it is not shown
            self.publish("status", plain(status))
            return {"ok": True, "status": plain(status)}
        if op == "act":
            node = msg.get("node")
            if node not in self.humans:
                raise ValueError(f"act: {node!r} is no agent.web node of this run (those are: "
                                 f"{', '.join(self.humans) or 'none'})")
            reply = await self.call(node, "web.act", {"action": msg.get("action")})
            return {"ok": True, "reply": plain(reply)}
        if op == "mode":
            node = msg.get("node")
            if node not in self.humans:
                raise ValueError(f"mode: {node!r} is no agent.web node of this run (those are: "
                                 f"{', '.join(self.humans) or 'none'})")
            reply = await self.call(node, "web.mode", {"mode": msg.get("mode")})
            return {"ok": True, "reply": plain(reply)}
        if op == "steps":
            episode = msg.get("episode")
            if not isinstance(episode, str):
                raise ValueError(f"steps: episode must be an episode id string (got {episode!r})")
            steps = await asyncio.to_thread(self.replays.records, episode) if self.replays is not None else []
            return {"ok": True, "episode": episode, "steps": steps}
        if op in ("replay", "replay_step"):
            return {"ok": True, **await self._replay(op, msg)}
        raise ValueError(f"unknown op {op!r}; a page may send ctl, act, mode, steps, replay or replay_step")

    async def _replay(self, op: str, msg: dict[str, Any]) -> dict[str, Any]:
        episode = msg.get("episode")
        if not isinstance(episode, str):
            raise ValueError(f"{op}: episode must be an episode id string (got {episode!r})")
        t = step_number(msg.get("t"), op) if op == "replay_step" else None
        if self.replays is None:
            raise ValueError(f"{op}: this console has no run folder, so there is nothing to replay")
        if op == "replay":
            return await asyncio.to_thread(self.replays.episode, episode)
        return await asyncio.to_thread(self.replays.step, episode, t)

    # loops ------------------------------------------------------------------------------------
    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.tasks = [loop.create_task(self._flush_loop()), loop.create_task(self._frames_loop()), loop.create_task(self._status_loop()),
                      loop.create_task(self._store_loop())]

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _flush_loop(self, every_s: float = 0.1) -> None:
        while True:
            await asyncio.sleep(every_s)
            if self.pages and self._raw:
                self.flush()

    async def _frames_loop(self) -> None:
        while True:
            await asyncio.sleep(1.0 / self.fps)
            if not self.pages:
                continue
            for env, (serial, frame) in list(self.frames.items()):
                if self.encoded.get(env) == serial or frame.size == 0:
                    continue
                skipped = serial - self.encoded.get(env, serial - 1) - 1
                self.counts["frames_skipped"] += max(0, skipped)
                self.encoded[env] = serial
                data, size = await asyncio.to_thread(jpeg, frame, self.max_px, self.quality)
                self.counts["frames_sent"] += 1
                self.publish(f"frame:{env}", {"node": env, "jpeg": data, "size": size, "serial": serial})

    async def _status_loop(self) -> None:
        while True:
            try:
                serial = self._ctl_serial
                status, stats = await self.call("kernel", "status", {}), await self.call("kernel", "stats", {})
                if serial == self._ctl_serial:
                    self.publish("status", plain(status))
                self.publish("stats", plain(stats))
            except Exception as exc:  # the kernel is going away, or slow: say so and try again
                self.publish("error", {"message": f"kernel status: {exc}"})
            self.publish("console", {**self.counts, "page_dropped": self.dropped(), "pages": len(self.pages)})
            await asyncio.sleep(1.0)

    async def _store_loop(self) -> None:
        if self.run_dir is None:
            return
        while True:
            await asyncio.sleep(1.0)
            try:
                episodes, steps = await asyncio.to_thread(self._read_store)
            except sqlite3.Error as exc:
                self.publish("error", {"message": f"results store: {exc}"})
                continue
            if episodes:
                self.episodes.extend(episodes)
                self.publish("episodes", {"rows": self.episodes, "reset": True})
            for node, record in steps.items():
                self.publish(f"agent:{node}", {"node": node, "record": plain(record, max_str=6000)})
            if steps:
                self.publish("usage", dict(self.usage))

    def _add_usage(self, record: dict[str, Any]) -> None:
        """Tokens and cost over the run, from the agents' step records (``usage``, ``cost_usd``)."""
        usage = record.get("usage")
        if isinstance(usage, dict):
            total = usage.get("total_tokens")
            if not isinstance(total, (int, float)):
                total = sum(v for k, v in usage.items() if k in ("prompt_tokens", "completion_tokens")
                            and isinstance(v, (int, float)))
            self.usage["tokens"] += int(total)
        if isinstance(record.get("cost_usd"), (int, float)):
            self.usage["cost_usd"] += float(record["cost_usd"])
        self.usage["decisions"] += 1

    def _db(self) -> sqlite3.Connection | None:
        assert self.run_dir is not None
        path = self.run_dir / "results.sqlite"
        if not path.exists():
            return None
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0)

    def _read_store(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        db = self._db()
        if db is None:
            return [], {}
        try:
            rows = db.execute("SELECT rowid, episode_id, idx, status, node, retries, ended_at, metrics FROM episodes "
                              "WHERE rowid > ? ORDER BY rowid", (self._episode_rowid,)).fetchall()
            episodes = []
            for rowid, eid, idx, status, node, retries, ended, metrics in rows:
                self._episode_rowid = max(self._episode_rowid, rowid)
                episodes.append({"episode": eid, "index": idx, "status": status, "node": node, "retries": retries,
                                 "ended_at": ended, "metrics": json.loads(metrics or "{}")})
            steps: dict[str, Any] = {}
            for rowid, node, record in db.execute("SELECT rowid, node, record FROM steps WHERE rowid > ? "
                                                  "ORDER BY rowid", (self._step_rowid,)):
                self._step_rowid = max(self._step_rowid, rowid)
                parsed = json.loads(record)
                if isinstance(parsed, dict) and parsed.get("decision") is False:
                    continue  # an env's record of an episode's rewards: no agent's decision to draw
                steps[node] = parsed
                self._add_usage(parsed)
            return episodes, steps
        finally:
            db.close()


def now() -> float:
    return time.time()
