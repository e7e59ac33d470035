"""Shared memory for large arrays between nodes on one machine.

Measured here (bench/bus.py): a 1280x720x3 frame costs ~1.3 ms through a ZeroMQ ipc socket, almost
all of it copies and page faults inside the socket path. Through shared memory it costs one copy
into a slot plus a small message. So a sender places arrays of at least ``THRESHOLD`` bytes in a
slot of a shared segment and sends only a reference; each receiver gets a read-only numpy view on
the slot (no copy) and the slot is released back to the sender when the receiver's last reference
to the array is gone. Slots are counted per holder, so a receiver that dies or restarts gives its
slots back, and a sender that runs out of slots falls back to sending the bytes inline.
"""

from __future__ import annotations

import ctypes
import math
import mmap
import os
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

THRESHOLD = 256 * 1024
MAX_POOL_BYTES = int(os.environ.get("FRAMEBUS_SHM_POOL_BYTES", str(512 * 1024 * 1024)))
_ALIGN = 4096


def shm_dir() -> Path | None:
    """/dev/shm where it exists (Linux); None turns the shared-memory path off."""
    path = Path(os.environ.get("FRAMEBUS_SHM_DIR", "/dev/shm"))
    return path if path.is_dir() and os.access(path, os.W_OK) else None


@dataclass
class _Slot:
    id: int
    segment: str
    offset: int
    size: int
    view: memoryview
    holders: set[str] = field(default_factory=set)


class ShmPool:
    """The sending side: slots in segment files, reused once every holder released them."""

    def __init__(self, prefix: str, directory: Path) -> None:
        self.prefix = prefix  # unique per node incarnation, e.g. "fb-abc123-env-4242"
        self.directory = directory
        self._free: dict[int, list[_Slot]] = {}  # size class -> free slots
        self._slots: dict[int, _Slot] = {}
        self._maps: list[tuple[Path, mmap.mmap]] = []
        self._bytes = 0
        self._placed: list[_Slot] = []  # since the last hold_placed: the slots of the message being sent
        self.fallbacks = 0  # arrays sent inline because the pool was exhausted

    def place(self, array: np.ndarray) -> dict[str, Any] | None:
        """Copy ``array`` into a free slot and return its reference, or None to send it inline (an
        array under ``THRESHOLD``, or no slot left)."""
        if array.nbytes < THRESHOLD:
            return None
        size = -(-array.nbytes // _ALIGN) * _ALIGN
        free = self._free.setdefault(size, [])
        if not free and not self._grow(size):
            self.fallbacks += 1
            return None
        slot = free.pop()
        self._placed.append(slot)
        np.frombuffer(slot.view, np.uint8, array.nbytes)[:] = array.reshape(-1).view(np.uint8)
        return {"shm": slot.segment, "off": slot.offset, "slot": slot.id}

    @property
    def placing(self) -> bool:
        """Whether the message being encoded put an array in a slot."""
        return bool(self._placed)

    def hold_placed(self, holders: set[str]) -> None:
        """Record who received the slots placed since the last call; with no holder they are free again at once."""
        for slot in self._placed:
            slot.holders = set(holders)
            if not holders:
                self._free[slot.size].append(slot)
        self._placed.clear()

    @property
    def slot_count(self) -> int:
        """Slot ids are 0 .. slot_count - 1: a receiver's release names no other."""
        return len(self._slots)

    def release(self, slot_id: int, holder: str) -> None:
        slot = self._slots.get(slot_id)
        if slot is None or holder not in slot.holders:
            return
        slot.holders.discard(holder)
        if not slot.holders:
            self._free[slot.size].append(slot)

    def release_holder(self, holder: str) -> None:
        """A receiver died or restarted: it holds nothing any more."""
        for slot in self._slots.values():
            if holder in slot.holders:
                self.release(slot.id, holder)

    def _grow(self, size: int) -> bool:
        count = max(1, min(8, (64 * 1024 * 1024) // size))
        if self._bytes + size * count > MAX_POOL_BYTES:
            count = (MAX_POOL_BYTES - self._bytes) // size
            if count <= 0:
                return False
        name = f"{self.prefix}-{len(self._maps)}"
        path = self.directory / name
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
        try:
            os.ftruncate(fd, size * count)
            mm = mmap.mmap(fd, size * count)
        finally:
            os.close(fd)
        self._maps.append((path, mm))
        self._bytes += size * count
        view = memoryview(mm)
        for i in range(count):
            slot = _Slot(len(self._slots), name, i * size, size, view[i * size:(i + 1) * size])
            self._slots[slot.id] = slot
            self._free[size].append(slot)
        return True

    def close(self) -> None:
        for slot in self._slots.values():
            slot.view.release()
        self._slots.clear()
        for path, mm in self._maps:
            try:
                mm.close()
            except BufferError:
                pass  # a view still exported in this process; the mapping goes with the process
            path.unlink(missing_ok=True)
        self._maps.clear()

    def stats(self) -> dict[str, int]:
        free = sum(len(v) for v in self._free.values())
        return {"slots": len(self._slots), "free": free, "bytes": self._bytes, "fallbacks": self.fallbacks}


def remove_segments(tag: str) -> None:
    """Delete what a run's nodes left in shared memory (a SIGKILLed node cannot clean up)."""
    directory = shm_dir()
    if directory is not None and tag:
        for path in directory.glob(f"{tag}-*"):
            path.unlink(missing_ok=True)


class ShmReader:
    """The receiving side: maps senders' segments and hands out leased, read-only array views."""

    def __init__(self, directory: Path, on_release: Callable[[str, int], None]) -> None:
        self.directory = directory
        self.on_release = on_release  # (sender node, slot id), called when the last view is gone
        self._maps: dict[str, mmap.mmap] = {}

    def attach(self, src: str, dtype: np.dtype, shape: list[int], ref: dict[str, Any]) -> np.ndarray:
        segment = ref["shm"]
        if "/" in segment or segment.startswith("."):
            raise ValueError(f"bad shared-memory segment name {segment!r}")
        mm = self._maps.get(segment)
        if mm is None:
            with open(self.directory / segment, "r+b") as fh:
                mm = mmap.mmap(fh.fileno(), 0)
            self._maps[segment] = mm
        if not all(type(n) is int and 0 <= n for n in shape):  # math.prod, not np.prod: 1 µs, not 6
            raise ValueError(f"bad shape {shape!r}: dimensions are integers >= 0")
        count = math.prod(shape) * dtype.itemsize
        # A ctypes array owns the lease: numpy views (and views of views) keep it alive, and its
        # finalizer returns the slot when the last of them is gone.
        lease = (ctypes.c_char * count).from_buffer(mm, int(ref["off"]))
        weakref.finalize(lease, self.on_release, src, int(ref["slot"]))
        array = np.frombuffer(lease, dtype=dtype).reshape(shape)
        array.flags.writeable = False
        return array
