import asyncio
import os
import threading

import pytest

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")


class _QuietLog:
    def info(self, *a, **k):
        pass

    error = warning = debug = info


@pytest.fixture(scope="session")
def embedded_url():
    """The embedded model (SmolLM2-135M on vLLM's CPU build), started once for the whole session on
    its own event loop (about a minute on 2 cores) and shared by every test that needs a real model."""
    from nodes.model.server import ManagedServer

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = ManagedServer({"kind": "vllm-cpu", "startup_timeout_s": 900}, log=_QuietLog())
    url = asyncio.run_coroutine_threadsafe(server.start(), loop).result(timeout=960)
    yield url
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(timeout=30)
    assert server.process is not None and server.process.returncode is not None  # nothing left behind
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
