"""Per-input queues with an explicit policy, so no message is ever dropped without being counted.

The queue lives in the receiving node: messages travel peer to peer, and the receiver is the only
place that knows whether its consumer keeps up.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from typing import Callable, Literal

from kernel.bus.protocol import Message

Policy = Literal["latest", "fifo", "block"]


class InputQueue:
    """A bounded queue for one wired input.

    * ``latest`` keeps only the newest message (an older unread one is dropped and counted);
    * ``fifo`` keeps up to ``size`` and drops the oldest when full (counted);
    * ``block`` never drops: senders hold credits and wait (back-pressure), see kernel.sdk.runtime.
    """

    __slots__ = ("name", "policy", "size", "_items", "_waiter", "received", "dropped", "on_take")

    def __init__(self, name: str, policy: Policy = "fifo", size: int = 16) -> None:
        self.name = name
        self.policy: Policy = policy
        self.size = 1 if policy == "latest" else max(1, size)
        self._items: deque[Message] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self.received: Counter[str] = Counter()  # per source "node/output": one input may read several
        self.dropped: Counter[str] = Counter()
        # Called with each message a consumer takes: `block` inputs return a credit to its sender.
        self.on_take: Callable[[Message], None] | None = None

    def __len__(self) -> int:
        return len(self._items)

    def put(self, msg: Message) -> None:
        self.received[f"{msg.src}/{msg.topic}"] += 1
        if len(self._items) >= self.size and self.policy != "block":
            old = self._items.popleft()
            self.dropped[f"{old.src}/{old.topic}"] += 1
        self._items.append(msg)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def get_nowait(self) -> Message | None:
        return self._take() if self._items else None

    def arrival(self, waiter: asyncio.Future[None]) -> asyncio.Future[None]:
        """``waiter`` (a new future), done once a message is queued (at once where one is): for a
        caller that runs the loop itself only until then (kernel.gym), with no coroutine. It
        replaces a waiter given before."""
        self._waiter = waiter
        if self._items:
            waiter.set_result(None)
        return waiter

    async def get(self) -> Message:
        while not self._items:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._take()

    def _take(self) -> Message:
        msg = self._items.popleft()
        if self.on_take is not None:
            self.on_take(msg)
        return msg

    def stats(self) -> dict[str, dict[str, int]]:
        return {src: {"received": self.received[src], "dropped": self.dropped[src]} for src in self.received}
