"""Test nodes that leave results in the run folder (step records, pictures, log lines, trace spans),
for tests/test_results_shipping.py: the same node writing them itself or shipping them to the kernel."""

from __future__ import annotations

import asyncio

import numpy as np

from kernel.sdk.node import Node, service


class Reporter(Node):
    """A driver that, per episode, writes ``steps`` step records (numpy values among them, as agents'
    records have), one set of two pictures, a log line, and a traced span, then ends it."""

    async def run(self) -> None:
        steps = int(self.params.get("steps", 3))
        while (episode := await self.next_episode()) is not None:
            for t in range(steps):
                self.record_step({"ts": 1000.0 + t, "episode": episode.id, "t": t, "sent": ["left", "right"][t % 2],
                                  "score": np.float32(0.5) * t, "grid": np.arange(3), "note": "é" * t})
            frame = np.zeros((40, 60, 3), np.uint8)
            frame[:, : 10 * (episode.index + 1)] = (200, 30, 30)
            await self.attach_images(episode, [("target", frame), ("made", frame[::-1].copy())],
                                     caption=f"try {episode.index}", row="pages", metrics=["score"])
            self.log.info("played", episode=episode.id, steps=steps)
            await self.end_episode(episode, score=float(steps))



class Sender(Node):
    """Sends results batches of the caller's making to the kernel (service ``send``)."""

    @service("send")
    async def send(self, body: dict) -> str:
        """Says how the kernel answered the batch: ``taken``, or the kind of its refusal."""
        try:
            await self.request("kernel", "results", body.get("batch"))
        except Exception as exc:  # the test wants the kind of refusal
            return getattr(exc, "remote_type", None) or type(exc).__name__
        return "taken"


class Flooder(Node):
    """Writes ``n`` step records of ``size`` bytes as fast as it can, as one burst: far more than the
    kernel's writer takes at once."""

    async def run(self) -> None:
        episode = await self.next_episode()
        assert episode is not None
        pad = "x" * int(self.params.get("size", 100_000))
        for t in range(int(self.params.get("n", 400))):
            self.record_step({"ts": float(t), "episode": episode.id, "t": t, "pad": pad})
            if t % 50 == 0:
                await asyncio.sleep(0)
        outbox = self._rt.outbox  # all of it at the kernel before the run may end
        while outbox is not None and (outbox.stats()["queued"] or outbox.in_flight):
            await asyncio.sleep(0.05)
        await self.end_episode(episode)


class Broken(Node):
    """Fails its set-up, as a node whose model or browser cannot start does."""

    async def setup(self) -> None:
        self.log.info("setting up")
        raise RuntimeError("no such model")
