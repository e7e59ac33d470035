"""The model node against the real embedded model (SmolLM2-135M on vLLM's CPU build).

One server is started for the whole module (about 3 minutes on 2 cores); faults are injected by a
proxy in front of it, so every answer still comes from the real model.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import subprocess
import textwrap

import numpy as np
import pytest
from PIL import Image

from kernel.sdk.node import RemoteError
from kernel.testing import Harness
from nodes.model.images import to_data_url
from tests.fault_proxy import FaultProxy
from tests.helpers import LAUNCH, ROOT, launch

CHAT = {"messages": [{"role": "user", "content": "Say hello in one word."}], "sampling": {"max_tokens": 8}}


def _model(h: Harness, url: str, **params) -> None:
    h.add("model", "nodes.model.client:ChatModel", params={
        "base_url": url, "api_key_env": "none", "model": "smollm2-135m-instruct", "vision": False,
        "backoff_s": 0.05, **params})


async def test_chat_answers_and_accounts_for_tokens(embedded_url):
    async with Harness(quiet=True, episodes=1) as h:
        _model(h, embedded_url, prices={"prompt_per_1m": 1.0, "completion_per_1m": 2.0})
        probe = h.probe()
        await h.start()
        ep = await probe.next_episode()
        reply = await probe.request("model", "chat", {**CHAT, "episode": ep.id}, timeout=120)
        assert reply["text"].strip()
        usage = reply["usage"]
        assert usage["prompt_tokens"] > 5 and 0 < usage["completion_tokens"] <= 8
        assert reply["cost_usd"] == pytest.approx(usage["prompt_tokens"] * 1e-6 + usage["completion_tokens"] * 2e-6)
        await asyncio.sleep(0.5)
        model = h.kernel.summary_sections()["model"]
        assert model["requests"] == 1 and model["retries"] == 0 and model["failures"] == 0
        assert model["prompt_tokens"] == usage["prompt_tokens"]
        await probe.end_episode(ep)
        assert h.kernel.book.records[ep.id]["metrics"]["model_completion_tokens"] == usage["completion_tokens"]


async def test_cache_makes_a_rerun_free(embedded_url, tmp_path):
    async with Harness(quiet=True) as h:
        _model(h, embedded_url, cache=True, cache_path=str(tmp_path / "cache.sqlite"),
               prices={"prompt_per_1m": 5.0, "completion_per_1m": 15.0})
        probe = h.probe()
        await h.start()
        first = await probe.request("model", "chat", CHAT, timeout=120)
        second = await probe.request("model", "chat", CHAT, timeout=120)
        other = await probe.request("model", "chat", {**CHAT, "sampling": {"max_tokens": 9}}, timeout=120)
        assert not first["cached"] and second["cached"] and not other["cached"]
        assert second["text"] == first["text"] and second["cost_usd"] == 0.0
        await asyncio.sleep(0.5)
        assert h.kernel.summary_sections()["model"]["cache_hits"] == 1


async def test_retries_with_backoff_on_429_5xx_and_timeouts(embedded_url):
    # The timeout must be longer than a real answer (1.3-1.6 s for 8 tokens on this 2-core VM, so
    # 1.5 s once failed the "pass" attempt too) and shorter than the injected stall.
    proxy = FaultProxy(embedded_url.removesuffix("/v1"), script=[429, 503, ("sleep", 15.0), "pass"])
    try:
        async with Harness(quiet=True) as h:
            _model(h, proxy.url, timeout_s=6.0, max_retries=4)
            probe = h.probe()
            await h.start()
            reply = await probe.request("model", "chat", CHAT, timeout=120)
            assert reply["retries"] == 3 and reply["text"].strip()
            await asyncio.sleep(0.5)
            assert h.kernel.summary_sections()["model"]["retries"] == 3
    finally:
        proxy.close()


async def test_bounded_retries_then_a_clear_failure(embedded_url):
    proxy = FaultProxy(embedded_url.removesuffix("/v1"), default=503)
    try:
        async with Harness(quiet=True) as h:
            _model(h, proxy.url, max_retries=2)
            probe = h.probe()
            await h.start()
            with pytest.raises(RemoteError, match="gave up after 2 retries"):
                await probe.request("model", "chat", CHAT, timeout=60)
            assert proxy.requests == 3
            await asyncio.sleep(0.5)
            model = h.kernel.summary_sections()["model"]
            assert model["failures"] == 1 and model["retries"] == 2
    finally:
        proxy.close()


async def test_concurrency_limit_per_node(embedded_url):
    proxy = FaultProxy(embedded_url.removesuffix("/v1"))
    try:
        async with Harness(quiet=True) as h:
            _model(h, proxy.url, max_concurrency=2)
            probe = h.probe()
            await h.start()
            replies = await asyncio.gather(*(probe.request("model", "chat", CHAT, timeout=180) for _ in range(6)))
            assert all(r["text"] for r in replies)
            assert proxy.max_in_flight == 2
    finally:
        proxy.close()


async def test_a_text_only_model_refuses_images_clearly(embedded_url):
    async with Harness(quiet=True) as h:
        _model(h, embedded_url)
        probe = h.probe()
        await h.start()
        frame = np.zeros((32, 32, 3), np.uint8)
        msg = {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image", "image": frame}]}
        with pytest.raises(RemoteError, match="takes no images"):
            await probe.request("model", "chat", {"messages": [msg]})


def test_frames_become_resized_data_urls():
    frame = np.zeros((720, 1280, 3), np.uint8)
    frame[:, :640] = 255
    url = to_data_url(frame, "jpeg", long_edge=640)
    assert url.startswith("data:image/jpeg;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert image.size == (640, 360)
    assert to_data_url(frame[:10, :10], "png").startswith("data:image/png;base64,")


def test_missing_api_key_stops_the_run_before_anything_starts(tmp_path, monkeypatch):
    path = tmp_path / "gpt.yaml"
    path.write_text(textwrap.dedent("""
        name: gpt
        nodes:
          - id: model
            uses: nodes.model.client:ChatModel
            params: {model: gpt-4o, api_key_env: FRAMEBUS_TEST_MISSING_KEY}
    """))
    monkeypatch.delenv("FRAMEBUS_TEST_MISSING_KEY", raising=False)
    res = launch("run", str(path), "--out", str(tmp_path / "run"))
    assert res.returncode == 2
    assert "gpt.yaml: node 'model': environment variable FRAMEBUS_TEST_MISSING_KEY is not set" in res.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("serve, said", [
    ("{kind: vllm-cpux}", "serve: unknown server kind 'vllm-cpux'; allowed: vllm-cpu, vllm, command"),
    ("{kind: vllm}", "serve: kind vllm needs model"),
    ("{kind: command, command: []}", "serve: kind command needs command: a non-empty list"),
])
def test_a_wrong_serve_is_refused_at_validate_with_its_position(tmp_path, serve, said):
    path = tmp_path / "served.yaml"
    path.write_text(textwrap.dedent(f"""
        name: served
        nodes:
          - id: model
            uses: model.chat
            params:
              api_key_env: none
              serve: {serve}
    """))
    res = launch("validate", str(path))
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"served.yaml:8:14: nodes.model.params.{said}" in res.stderr


async def test_managed_server_is_restarted_by_its_node_then_by_the_node_policy(tmp_path):
    import os
    import signal
    import sqlite3
    import sys

    from tests.helpers import children_of, wait_until

    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "models").write_text(json.dumps({"data": [{"id": "static"}]}))
    serve = {"kind": "command", "served_name": "static", "startup_timeout_s": 30, "max_restarts": 1,
             "restart_backoff_s": 0.1, "command": [sys.executable, "-m", "http.server", "{port}", "--bind",
                                                   "127.0.0.1", "--directory", str(tmp_path)]}

    def one_server_other_than(old: int) -> list[int]:
        found = children_of(h.pid("model"))
        return found if len(found) == 1 and found[0] != old else []

    async with Harness(quiet=True) as h:
        h.add("model", "nodes.model.client:ChatModel", params={"serve": serve, "api_key_env": "none"},
              restart={"policy": "on-failure", "max_restarts": 1, "backoff": 0.1})
        h.probe()
        await h.start(ready_timeout=60)
        servers = children_of(h.pid("model"))
        assert len(servers) == 1
        os.kill(servers[0], signal.SIGKILL)  # the server dies: the node starts it again and stays up
        assert await asyncio.to_thread(wait_until, lambda: one_server_other_than(servers[0]), 30)
        second = children_of(h.pid("model"))[0]

        def on_record() -> list[str]:
            db = sqlite3.connect(h.kernel.run_dir / "results.sqlite")
            try:
                return [k for (k,) in db.execute("SELECT kind FROM errors WHERE node = 'model' ORDER BY ts")]
            finally:
                db.close()

        assert await asyncio.to_thread(wait_until, lambda: len(on_record()) >= 2, 10)
        assert on_record() == ["server_died", "server_restarted"]
        assert await asyncio.to_thread(wait_until, lambda: (h.kernel.summary_sections().get("model") or {})
                                       .get("server_restarts") == 1, 10)
        assert h.kernel.nodes["model"].incarnation == 1 and not h.exits
        os.kill(second, signal.SIGKILL)  # its max_restarts is spent: the node exits, and its own policy restarts it
        assert await asyncio.to_thread(wait_until, lambda: h.kernel.nodes["model"].incarnation == 2, 30)
        assert h.exits[0][:2] == ("model", 1)
        new_servers = await asyncio.to_thread(lambda: wait_until(lambda: len(children_of(h.pid("model"))) == 1, 30)
                                              and children_of(h.pid("model")))
        pid = h.pid("model")
    assert not any(os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/stat").read().split()[2] != "Z"
                   for p in [pid, *new_servers])  # stopping the graph stopped the server too


@pytest.mark.parametrize("name", ["football_gpt4o", "sokoban_gpt4o", "kidgym_gpt4o"])
def test_bundled_gpt4o_runs_stop_at_once_without_the_key(tmp_path, name):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    res = subprocess.run([*LAUNCH, "run", f"{name}.yaml", "--out", str(tmp_path / "run")], env={
        **env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert f"{name}.yaml: node 'model': environment variable OPENAI_API_KEY is not set" in res.stderr
    assert not (tmp_path / "run").exists()  # nothing started, nothing written
