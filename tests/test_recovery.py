"""The fault proxy's own count of requests in flight (what test_model's concurrency test reads)."""

from __future__ import annotations

import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.fault_proxy import FaultProxy


# -- the test proxy's own count ---------------------------------------------------------------------

def test_the_fault_proxy_stops_counting_a_request_before_answering_it():
    """Two clients that each wait for their answer before the next request never have more than two
    requests in flight. The proxy once counted three under test_concurrency_limit_per_node's limit
    of two: it wrote an answer before it stopped counting the request, and while the handler thread
    waited for the GIL (the test's in-process kernel held it), the client read the answer and its
    next request arrived. A thread that keeps the GIL busy here makes that ordering likely (the old
    proxy failed 5 of 5 tries), but the count must hold whatever the ordering."""

    class Upstream(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = FaultProxy(f"http://127.0.0.1:{upstream.server_address[1]}")
    busy = threading.Event()

    def hold_the_gil() -> None:
        while not busy.is_set():
            sum(range(1000))

    threading.Thread(target=hold_the_gil, daemon=True).start()
    try:
        def client() -> None:
            for _ in range(150):
                req = urllib.request.Request(proxy.url + "/chat/completions", data=b"{}", method="POST")
                with urllib.request.urlopen(req, timeout=30) as r:
                    r.read()

        threads = [threading.Thread(target=client) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert proxy.requests == 300
        assert proxy.max_in_flight <= 2
    finally:
        busy.set()
        proxy.close()
        upstream.shutdown()
        upstream.server_close()
