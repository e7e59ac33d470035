"""The graph env's loop host: the caller takes the loop back from the keeper thread every time,
also when the caller's thread is slow to wake (a loaded machine)."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest

from kernel.gym.env import IDLE_S, _LoopHost


class _SlowWaker:
    """A lock whose blocking acquire starts late, as a waiter the scheduler leaves asleep does."""

    def __init__(self, late: float) -> None:
        self._lock = threading.Lock()
        self.late = late

    def acquire(self, blocking: bool = True) -> bool:
        if blocking:
            time.sleep(self.late)
        return self._lock.acquire(blocking)

    def release(self) -> None:
        self._lock.release()


async def _one() -> int:
    await asyncio.sleep(0)
    return 1


@pytest.mark.timeout(60)
def test_the_caller_gets_the_loop_back_even_when_it_wakes_after_the_keeper_could_start_again():
    loop = asyncio.new_event_loop()
    host = _LoopHost(loop)
    host._lock = _SlowWaker(late=IDLE_S * 4)  # the keeper's next turn would begin before the caller wakes
    done = []

    def calls() -> None:
        for _ in range(5):
            time.sleep(IDLE_S * 3)  # away long enough for the keeper to serve the loop
            host.hold()
            try:
                done.append(host.wait(host.loop.create_task(_one()), 5))
            finally:
                host.release()

    caller = threading.Thread(target=calls, daemon=True)
    caller.start()
    caller.join(30)
    try:
        assert done == [1] * 5, f"the caller got the loop back {len(done)} of 5 times"
    finally:
        if not caller.is_alive():
            host.close()
            loop.close()
