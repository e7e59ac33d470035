"""A small synchronous client for the kernel's services, for ``launch ctl``, scripts and tests."""

from __future__ import annotations

import os
import time
import uuid
from typing import Any, Mapping

import zmq

from kernel.bus import protocol
from kernel.bus.curve import KeyPair, client
from kernel.bus.protocol import REP, REQ


class KernelClient:
    def __init__(self, endpoint: str, timeout: float = 5.0, curve: Mapping[str, str] | None = None) -> None:
        self.endpoint = endpoint
        self.timeout = timeout
        self.sock = zmq.Context.instance().socket(zmq.DEALER)
        self.name = f"ctl-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self.sock.setsockopt(zmq.IDENTITY, self.name.encode())
        self.sock.setsockopt(zmq.LINGER, 0)
        if curve:  # a CURVE-protected bus: the keys from the run's announcement (kernel.bus.curve)
            client(self.sock, KeyPair(curve["public"], curve["secret"]), curve["server"])
        self.sock.connect(endpoint)
        self._cid = 0

    def call(self, svc: str, body: Any = None, timeout: float | None = None) -> Any:
        """The kernel's answer to ``svc``; TimeoutError past ``timeout`` (default: the client's)."""
        timeout = self.timeout if timeout is None else timeout
        self._cid += 1
        self.sock.send_multipart(protocol.encode(REQ, self.name, svc, body, dst="kernel", cid=self._cid))
        deadline = time.monotonic() + timeout
        # a late reply to an earlier call that timed out is skipped, without restarting the wait
        while self.sock.poll(max(0, int((deadline - time.monotonic()) * 1000))):
            msg = protocol.decode(self.sock.recv_multipart())
            if msg.cid != self._cid:
                continue
            if msg.kind == REP:
                return msg.body
            raise RuntimeError(f"kernel.{svc}: {msg.body.get('error') if isinstance(msg.body, dict) else msg.body}")
        raise TimeoutError(f"the kernel at {self.endpoint} did not answer {svc!r} within {timeout} s")

    def close(self) -> None:
        self.sock.close(linger=0)

    def __enter__(self) -> "KernelClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
