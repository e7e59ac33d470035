"""An HTTP proxy in front of a real model server that injects the faults a hosted API shows.

The model node's retry logic is what the tests exercise; the answers still come from the real
server. A script decides per request: ``"pass"``, an HTTP status to return (``429``, ``503``),
``("sleep", seconds)`` before passing on, or ``"garbage"`` (a 200 whose body is not JSON). After
the script, ``rate`` of the requests (drawn from a seeded generator) get one of ``faults``.
"""

from __future__ import annotations

import random
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FaultProxy:
    def __init__(self, upstream: str, script: list[Any] | None = None, default: Any = "pass", *,
                 rate: float = 0.0, faults: list[Any] | None = None, seed: int = 0) -> None:
        self.upstream = upstream.rstrip("/")  # e.g. http://127.0.0.1:8000 (no /v1)
        self.script = list(script or [])
        self.default = default
        self.rate = rate
        self.faults = list(faults or [])
        self.rng = random.Random(seed)
        self.injected: list[Any] = []
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(*self._forward(None))

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy._lock:
                    proxy.requests += 1
                    if proxy.script:
                        action = proxy.script.pop(0)
                    elif proxy.rate and proxy.rng.random() < proxy.rate:
                        action = proxy.rng.choice(proxy.faults)
                    else:
                        action = proxy.default
                    if action != "pass":
                        proxy.injected.append(action)
                    proxy.in_flight += 1
                    proxy.max_in_flight = max(proxy.max_in_flight, proxy.in_flight)
                # A request stops counting as in flight before its answer is written: the client may
                # send its next request the moment it has read this one's answer, and that one must
                # not find this one still counted (which once read as 3 in flight under a limit of 2).
                try:
                    if isinstance(action, int):
                        status, payload = action, b'{"error": {"message": "injected fault", "type": "injected"}}'
                    elif action == "garbage":
                        status, payload = 200, b'{"id": "chatcmpl-x", "choices": [{"mess'  # cut off mid-object
                    else:
                        if isinstance(action, (tuple, list)) and action[0] == "sleep":
                            time.sleep(action[1])
                        status, payload = self._forward(body)
                finally:
                    with proxy._lock:
                        proxy.in_flight -= 1
                self._answer(status, payload)

            def _forward(self, body: bytes | None) -> tuple[int | None, bytes]:
                req = urllib.request.Request(proxy.upstream + self.path, data=body, method=self.command,
                                             headers={"Content-Type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=300) as r:
                        return r.status, r.read()
                except urllib.error.HTTPError as e:
                    return e.code, e.read()
                except OSError:
                    return None, b""  # the upstream is gone: the client sees the connection close

            def _answer(self, status: int | None, payload: bytes) -> None:
                if status is None:
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client went away (e.g. after its own timeout)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
