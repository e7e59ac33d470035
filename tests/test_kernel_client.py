"""``KernelClient``, the synchronous client of ``launch ctl``, against a kernel that answers late."""

from __future__ import annotations

import threading
import time

import pytest
import zmq

from kernel.bus import protocol
from kernel.bus.protocol import REP
from kernel.tools.client import KernelClient

pytestmark = pytest.mark.unit


def test_late_replies_to_an_earlier_call_do_not_stretch_the_wait_of_the_next(tmp_path) -> None:
    """A kernel that keeps answering only a call the client gave up on: the next call still ends
    at its own timeout, instead of restarting its wait at every stale reply."""
    endpoint = f"ipc://{tmp_path}/kernel.sock"
    router = zmq.Context.instance().socket(zmq.ROUTER)
    router.setsockopt(zmq.LINGER, 0)
    router.bind(endpoint)
    stop = threading.Event()

    def kernel() -> None:
        peer = None
        while not stop.is_set():
            if router.poll(50):
                peer, *_ = router.recv_multipart()
            if peer is not None:  # answer call 1 again and again, never call 2
                router.send_multipart([peer, *protocol.encode(REP, "kernel", "status", {"late": True}, cid=1)])

    thread = threading.Thread(target=kernel, daemon=True)
    with KernelClient(endpoint, timeout=0.5) as client:
        client._cid = 1  # as if call 1 had timed out: the next call is call 2, whose reply never comes
        thread.start()
        try:
            t0 = time.monotonic()
            with pytest.raises(TimeoutError, match="did not answer 'status' within 0.5 s"):
                client.call("status")
            assert time.monotonic() - t0 < 2.0
        finally:
            stop.set()
            thread.join(5)
            router.close(0)
