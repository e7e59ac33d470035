"""Large arrays through shared memory: zero-copy, never overwritten while held, slots reused."""

from __future__ import annotations

import asyncio

import pytest

from kernel.bus.shm import shm_dir
from kernel.testing import Harness
from tests.nodes import Emitter, Hoarder

pytestmark = pytest.mark.skipif(shm_dir() is None, reason="no /dev/shm on this machine")
MB = 1024 * 1024


async def _shm_stats(h: Harness, node: str) -> dict:
    await asyncio.sleep(0.5)  # a heartbeat carries the sender's pool counters
    return h.kernel.nodes[node].stats["shm"]


async def test_slots_are_reused_once_receivers_let_go():
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("sink", Hoarder, params={"keep": False}, inputs={"in": {"from": "src/out", "policy": "block", "size": 4}})
        probe = h.probe()
        await h.start()
        await probe.request("src", "emit", {"n": 200, "array_bytes": MB}, timeout=60)
        stats = await _shm_stats(h, "src")
        assert stats["fallbacks"] == 0
        assert stats["bytes"] <= 64 * MB  # 200 MB went through a pool that never grew past its first segment
        assert stats["free"] == stats["slots"]  # every slot came back


async def test_held_arrays_stay_intact_and_a_full_pool_falls_back_to_inline(monkeypatch):
    monkeypatch.setenv("FRAMEBUS_SHM_POOL_BYTES", str(16 * MB))
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("sink", Hoarder, inputs={"in": {"from": "src/out", "policy": "block", "size": 4}})
        probe = h.probe()
        await h.start()
        await probe.request("src", "emit", {"n": 40, "array_bytes": MB}, timeout=60)
        await asyncio.sleep(0.3)
        check = await probe.request("sink", "check")
        assert check == {"count": 40, "intact": True, "writeable": False}
        stats = await _shm_stats(h, "src")
        assert stats["bytes"] <= 16 * MB and stats["fallbacks"] >= 40 - 16  # the rest went inline, none lost
        assert await probe.request("sink", "forget") == 40
        await asyncio.sleep(0.6)
        assert (await _shm_stats(h, "src"))["free"] == stats["slots"]  # dropping the arrays freed the slots


async def test_a_dead_receiver_gives_its_slots_back():
    async with Harness(quiet=True) as h:
        h.add("src", Emitter)
        h.add("sink", Hoarder, inputs={"in": {"from": "src/out", "policy": "fifo", "size": 64}},
              restart={"policy": "on-failure", "max_restarts": 2, "backoff": 0.1})
        probe = h.probe()
        await h.start()
        await probe.request("src", "emit", {"n": 10, "array_bytes": MB})
        await asyncio.sleep(0.3)
        held = await _shm_stats(h, "src")
        assert held["slots"] - held["free"] == 10
        h.kill("sink")
        for _ in range(40):  # restarted and re-registered: the sender releases what the old one held
            await asyncio.sleep(0.25)
            if h.kernel.nodes["sink"].incarnation == 2 and (await _shm_stats(h, "src"))["free"] == held["slots"]:
                break
        assert (await _shm_stats(h, "src"))["free"] == held["slots"]


@pytest.mark.parametrize("forged", [
    {"shape": ["720", 1280, 3]},           # a dimension that is not an integer
    {"shape": [-720, 1280, 3]},            # a negative dimension
    {"shape": [True, 1280, 3]},            # a bool is not a dimension
    {"shape": [72000, 1280, 3]},           # more bytes than the segment holds
    {"off": 1 << 40},                      # an offset past the segment's end
    {"shm": "../../etc/passwd"},           # a path, not a segment name
    {"shm": "fb-nobody-0"},                # a segment that does not exist
])
def test_a_forged_shared_memory_reference_is_a_protocol_error_not_a_view(tmp_path, forged):
    """A peer names the segment, offset and shape of a shared array: whatever it claims is checked
    against the real mapping before a view is made, and a wrong claim costs the receiver one error."""
    import msgpack
    import numpy as np

    from kernel.bus.protocol import ProtocolError, decode, encode
    from kernel.bus.shm import ShmPool, ShmReader

    pool = ShmPool("fb-test-src-1", tmp_path)
    frame = np.arange(720 * 1280 * 3, dtype=np.uint8).reshape(720, 1280, 3)
    frames = encode("data", "src", "out", {"frame": frame}, place=pool.place)
    released: list[tuple[str, int]] = []
    reader = ShmReader(tmp_path, lambda src, slot: released.append((src, slot)))

    honest = decode(frames, attach=reader.attach).body["frame"]
    assert np.array_equal(honest, frame) and not honest.flags.writeable

    header = msgpack.unpackb(frames[0])
    dtype, shape, ref = header["arr"][0]
    if "shape" in forged:
        shape = forged["shape"]
    ref = {**ref, **{k: v for k, v in forged.items() if k != "shape"}}
    header["arr"] = [[dtype, shape, ref]]
    with pytest.raises(ProtocolError, match="bad array"):
        decode([msgpack.packb(header), frames[1]], attach=reader.attach)
