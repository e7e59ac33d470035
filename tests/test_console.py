"""The live console (kernel/tools/console, docs/console.md): its pieces without a browser, then a
real Chromium on the page of running Sokoban and hello graphs."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from pathlib import Path

import pytest

from kernel import launchfile
from kernel.launchfile import LaunchError
from kernel.tools import console as ui
from kernel.tools.console.app import check_token, socket_refusal
from kernel.tools.console.hub import Hub, Page, find_frame, jpeg
from kernel.tools.report.shot import chromium
from tests.helpers import launch, launch_bg, wait_until


def _lf(name: str) -> launchfile.LaunchFile:
    return launchfile.load(launchfile.resolve_path(name))


# ------------------------------------------------------------------------------------------------
# pieces


def test_token_none_is_401_wrong_is_403():
    assert check_token("s3cret-token-0123456789", None) == 401
    assert check_token("s3cret-token-0123456789", "") == 401
    assert check_token("s3cret-token-0123456789", "nope") == 403
    assert check_token("s3cret-token-0123456789", "s3cret-token-0123456789") is None



def test_the_socket_needs_its_own_origin_and_the_token():
    token, port = "s3cret-token-0123456789", 41237
    own = socket_refusal(token, token, "http://127.0.0.1:41237", port)
    assert own is None and socket_refusal(token, token, "http://localhost:41237", port) is None
    # the cookie reaches the console from any port of the host: its token does not make the page own
    for origin in ("http://127.0.0.1:18765", "http://localhost:18765", "http://127.0.0.1:41237.evil.example",
                   "https://127.0.0.1:41237", "http://[::1]:41237", "null", "", None):
        refusal = socket_refusal(token, token, origin, port)
        assert refusal is not None and refusal[0] == 403 and "http://127.0.0.1:41237" in refusal[1], origin
    assert socket_refusal(token, None, "null", port) == (403, "origin 'null' is not this console's own "
                                                              "(http://127.0.0.1:41237)")
    assert socket_refusal(token, None, "http://127.0.0.1:41237", port) == (401, "no token")
    assert socket_refusal(token, "nope", "http://127.0.0.1:41237", port) == (403, "wrong token")

def test_console_reads_every_output_latest_one_input_each():
    lf = ui.with_console(_lf("hello"), 12345, "t" * 32)
    spec = lf.node("console")
    assert spec.uses == ui.CONSOLE_USES
    assert spec.params["sources"] == ["env/obs", "env/step", "agent/action"]
    assert {name: (i.sources, i.policy) for name, i in spec.inputs.items()} == {
        "in0": (["env/obs"], "latest"), "in1": (["env/step"], "latest"), "in2": (["agent/action"], "latest")}
    assert spec.params["humans"] == []


def test_human_swaps_the_agent_and_lifts_the_deadline():
    lf = ui.with_human(_lf("hello"), "agent")
    assert ui.is_web_agent(lf.node("agent"))
    assert lf.node("agent").inputs["obs"].sources == ["env/obs"]
    assert lf.node("env").clock.deadline is None
    assert ui.with_console(lf, 1, "t" * 32).node("console").params["humans"] == ["agent"]
    with pytest.raises(LaunchError, match="no node 'agnet'.*env, agent, judge"):
        ui.with_human(_lf("hello"), "agnet")
    with pytest.raises(LaunchError, match="no 'obs' input"):
        ui.with_human(_lf("hello"), "judge")


def test_frames_are_found_and_shrunk():
    import io

    import numpy as np
    from PIL import Image

    frame = np.zeros((360, 640, 3), np.uint8)
    assert find_frame({"frame": frame, "text": "x"}) is frame
    assert find_frame({"text": "x", "small": np.zeros((4, 4), np.uint8)}) is None
    data, size = jpeg(frame, 320, 70)
    assert size == [640, 360]
    assert Image.open(io.BytesIO(data)).size == (320, 180)


def test_a_slow_page_loses_old_values_counted():
    page = Page()
    page.put("frame:env", 1)
    page.put("frame:env", 2)
    page.put("status", {})
    assert page.dropped == 1
    assert asyncio.run(page.take()) == {"frame:env": 2, "status": {}}


def test_bad_page_requests_say_what_is_wrong():
    async def call(node, svc, body):
        return {"paused": True}

    hub = Hub(call, run_dir=None, humans=["player"])

    async def ask(msg):
        try:
            return await hub.command(msg)
        except ValueError as exc:
            return str(exc)

    assert "unknown op 'jump'" in asyncio.run(ask({"op": "jump"}))
    assert "unknown command 'pasue'" in asyncio.run(ask({"op": "ctl", "cmd": "pasue"}))
    assert "at least 1 (got 0)" in asyncio.run(ask({"op": "ctl", "cmd": "step", "n": 0}))
    assert "'agent' is no agent.web node" in asyncio.run(ask({"op": "act", "node": "agent", "action": "left"}))
    assert "replay_step: t must be a whole step number from 0 to 9223372036854775807 (got '-1')" in asyncio.run(
        ask({"op": "replay_step", "episode": "ep00000", "t": -1}))
    assert "replay: this console has no run folder" in asyncio.run(ask({"op": "replay", "episode": "ep00000"}))
    assert asyncio.run(ask({"op": "ctl", "cmd": "pause"}))["ok"] is True


def test_a_status_polled_before_a_command_is_not_shown_after_the_command_s_own():
    """The poll asked for the status, then a Pause was answered (paused) before the poll's reply
    came back (running): the page must keep showing paused."""
    paused = False
    polled = asyncio.Event()
    answer = asyncio.Event()

    async def call(node, svc, body):
        nonlocal paused
        if svc == "ctl.pause":
            paused = True
            return {"paused": True}
        if svc == "status":
            seen = paused
            polled.set()
            await answer.wait()
            return {"paused": seen}
        return {}

    async def scene():
        hub = Hub(call, run_dir=None, humans=[])
        page = hub.open_page()
        poll = asyncio.get_running_loop().create_task(hub._status_loop())
        await polled.wait()
        assert (await hub.command({"op": "ctl", "cmd": "pause"}))["status"]["paused"] is True
        answer.set()
        await asyncio.sleep(0.05)
        poll.cancel()
        return (await page.take())["status"]

    assert asyncio.run(scene())["paused"] is True


def test_ui_needs_the_local_backend_and_a_real_port():
    result = launch("run", "hello", "--ui", "70000")
    assert result.returncode == 2 and "--ui 70000: a port is a number from 1 to 65535" in result.stdout + result.stderr
    result = launch("run", "hello", "--human", "nobody")
    assert result.returncode == 2 and "--human nobody: the graph has no node 'nobody'" in result.stdout + result.stderr


# ------------------------------------------------------------------------------------------------
# a real browser

needs_chromium = pytest.mark.skipif(chromium() is None, reason="no Chromium on this machine")


def _console_url(proc, timeout: float = 240) -> str:
    found: list[str] = []

    def printed() -> bool:
        m = re.search(r"console: (http://127\.0\.0\.1:\d+/\?token=\S+)", proc.output())
        if m:
            found.append(m.group(1))
        return bool(m) or proc.poll() is not None

    assert wait_until(printed, timeout, 0.2), proc.output()[-3000:]
    assert found, proc.output()[-3000:]
    return found[0]


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except Exception:
            proc.kill()
            proc.wait(10)


@pytest.fixture
def browser(sync_chromium):
    return sync_chromium  # the test's own Chromium (conftest.py), by the name these tests use


def _sent(page, edge: str) -> int:
    return int(page.get_attribute(f'#edges tr[data-edge="{edge}"]', "data-sent"))


def _wait_sent_steady(page, edge: str, quiet_s: float = 2.5, timeout: float = 30) -> int:
    """The edge's sent count once it has stayed the same for ``quiet_s`` (counters move a second late)."""
    deadline = time.monotonic() + timeout
    last, since = _sent(page, edge), time.monotonic()
    while time.monotonic() < deadline:
        page.wait_for_timeout(250)
        now = _sent(page, edge)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return now
    raise AssertionError(f"{edge} kept moving for {timeout} s")


@needs_chromium
@pytest.mark.timeout(300)
def test_sokoban_page_frames_pause_step_and_token(tmp_path: Path, browser):
    proc = launch_bg("run", "sokoban_random", "--set", "env.frames=true", "--episodes", "1000", "--ui",
                     "--out", str(tmp_path / "run"))
    try:
        url = _console_url(proc)
        base = url.split("?")[0]
        # refused without the token (401) and with a wrong one (403), the socket too
        stranger = browser.new_context()
        page = stranger.new_page()
        assert page.goto(base).status == 401
        assert page.goto(base + "?token=wrong").status == 403
        assert page.goto(base + "static/console.js").status == 401
        closed = page.evaluate("""(u) => new Promise((done) => {
            const ws = new WebSocket(u); let got = 0;
            ws.onmessage = () => got++; ws.onclose = (e) => done({code: e.code, got}); })""",
                               base.replace("http", "ws") + "ws")
        assert closed["got"] == 0 and closed["code"] != 1000
        stranger.close()

        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector("#env-env img.frame[data-serial]", timeout=60_000)
        first = int(page.get_attribute("#env-env img.frame", "data-serial"))
        page.wait_for_function(f"+document.querySelector('#env-env img.frame').dataset.serial > {first}",
                               timeout=30_000)
        assert page.locator("#env-env .obs-text").inner_text().startswith("#")  # the text rendering

        edge = "env/step -> judge/step"
        page.wait_for_selector(f'#edges tr[data-edge="{edge}"]')
        page.click("#btn-pause")
        page.wait_for_selector("#run-state[data-state=paused]")
        paused_at = _wait_sent_steady(page, edge)
        page.wait_for_timeout(2000)
        assert _sent(page, edge) == paused_at, "a step happened while paused"

        page.fill("#step-n", "3")
        page.click("#btn-step")
        page.wait_for_function(f"""+document.querySelector('#edges tr[data-edge="{edge}"]').dataset.sent >= {paused_at + 3}""",
                               timeout=30_000)
        assert _wait_sent_steady(page, edge) == paused_at + 3
        assert page.locator("#run-state").get_attribute("data-state") == "paused"

        page.keyboard.press("Shift+R")
        page.wait_for_function(f"""+document.querySelector('#edges tr[data-edge="{edge}"]').dataset.sent > {paused_at + 10}""",
                               timeout=30_000)
        page.click("#btn-stop")
        assert proc.wait(60) == 0
        assert not errors, errors
    finally:
        _stop(proc)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "stopped"


# a page on another loopback port, in the same browser as the console (issue 35, item 2)

_HOSTILE = """<!doctype html><title>nothing to see</title>
<script>{msgpack}</script>
<script>
// what a page on any other loopback port can try once the browser holds the console's cookie
window.attack = (port, node) => new Promise((done) => {{
  const out = {{opened: false, replies: [], code: null}};
  const ws = new WebSocket(`ws://127.0.0.1:${{port}}/ws`);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => {{
    out.opened = true;
    ws.send(MsgPack.encode({{id: 1, op: "ctl", cmd: "pause"}}));
    ws.send(MsgPack.encode({{id: 2, op: "act", node, action: "right"}}));
  }};
  ws.onmessage = (ev) => {{
    const m = MsgPack.decode(ev.data);
    if (m.type === "reply") {{ out.replies.push(m); if (out.replies.length === 2) ws.close(); }}
  }};
  ws.onclose = (ev) => {{ out.code = ev.code; done(out); }};
}});
// the console framed under a decoy, for a click the person did not mean (its own origin, its cookie)
window.frameIt = (port) => new Promise((done) => {{
  const f = document.createElement("iframe");
  f.src = `http://127.0.0.1:${{port}}/`;
  f.onload = () => done(true);
  document.body.append(f);
}});
</script>"""


def _serve_hostile(html: str):
    """A page on another loopback port (a thread of this process): the attacker's site."""
    import http.server
    import threading

    body = html.encode()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@needs_chromium
@pytest.mark.timeout(180)
def test_a_page_on_another_port_cannot_steer_the_console(tmp_path: Path, browser):
    from kernel.tools.console.app import STATIC

    hostile = _serve_hostile(_HOSTILE.format(msgpack=(STATIC / "msgpack.js").read_text()))
    run = tmp_path / "run"
    proc = launch_bg("run", "hello", "--episodes", "2", "--human", "agent", "--out", str(run))
    try:
        url = _console_url(proc)
        port = int(re.search(r":(\d+)/", url).group(1))
        context = browser.new_context()
        own = context.new_page()
        own.goto(url)  # the person's console: its socket connects, the browser now holds its cookie
        own.wait_for_selector('#human-agent[data-waiting=true][data-episode="ep00000"][data-t="0"]', timeout=60_000)
        assert [c["name"] for c in context.cookies()] == ["framebus_console"]

        evil = context.new_page()
        evil.goto(f"http://127.0.0.1:{hostile.server_address[1]}/")
        got = evil.evaluate("([port, node]) => attack(port, node)", [port, "agent"])
        assert got["opened"] is False and got["replies"] == [], got  # refused at the handshake
        own.wait_for_function("document.querySelector('#counters').textContent.includes('refused 1')",
                              timeout=10_000)

        evil.evaluate("(port) => frameIt(port)", port)
        framed = evil.frames[1]
        assert framed.locator("#run-state").count() == 0, "the console page rendered inside another site's frame"

        status = json.loads(launch("ctl", "status", "--run", str(run)).stdout)
        assert status["paused"] is False
        own.click("#btn-stop")  # the console's own page still steers
        assert proc.wait(60) == 0, proc.output()[-3000:]
    finally:
        _stop(proc)
        hostile.shutdown()
    assert json.loads((run / "summary.json").read_text())["status"] == "stopped"
    steps = run / "steps" / "agent.jsonl"
    assert not steps.exists() or steps.read_text() == "", "a move was made for the human player"


@needs_chromium
@pytest.mark.timeout(300)
def test_hello_played_from_the_page(tmp_path: Path, browser):
    proc = launch_bg("run", "hello", "--episodes", "2", "--human", "agent", "--out", str(tmp_path / "run"))
    try:
        page = browser.new_page()
        page.goto(_console_url(proc))
        player = "#human-agent"
        page.wait_for_selector(f"{player}[data-waiting=true]", timeout=60_000)
        assert page.locator(f"{player} .actions button").all_inner_texts() == ["left", "right", "stay"]
        # a bad typed action is refused with the actions on offer
        page.fill(f"{player} input[name=action]", "jump")
        page.press(f"{player} input[name=action]", "Enter")
        page.wait_for_function("document.querySelector('#error').textContent.includes('jump')")
        assert "left, right, stay" in page.locator("#error").inner_text()
        # each episode: walk to the goal, in the first with the buttons, in the second with the arrow keys
        sent = []
        for episode, how in (("ep00000", "click"), ("ep00001", "key")):
            card = f'{player}[data-waiting=true][data-episode="{episode}"]'
            page.wait_for_selector(f'{card}[data-t="0"]', timeout=30_000)
            at, goal = map(int, re.search(r"You are at (\d+) .* the goal is at (\d+)",
                                          page.locator(f"{player} .human-text").inner_text()).groups())
            move = "right" if goal > at else "left"
            for t in range(abs(goal - at)):
                page.wait_for_selector(f'{card}[data-t="{t}"]', timeout=30_000)
                if how == "click":
                    page.click(f"{player} button[data-action={move}]")
                else:
                    page.keyboard.press("ArrowRight" if move == "right" else "ArrowLeft")
                sent.append(move)
            if episode == "ep00000":
                page.wait_for_selector('#episodes tr[data-episode="ep00000"]', timeout=30_000)
                assert "success=1" in page.locator('#episodes tr[data-episode="ep00000"]').inner_text()
        assert proc.wait(90) == 0, proc.output()[-3000:]
    finally:
        _stop(proc)
    run = tmp_path / "run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 2
    records = [json.loads(line) for line in (run / "steps" / "agent.jsonl").read_text().splitlines()]
    assert [r["sent"] for r in records] == sent
    assert {r["decided_by"] for r in records} == {"human"}


def test_takeover_rewrite_keeps_the_agent_as_auto():
    lf = ui.with_takeover(_lf("hello"), "agent")
    web, auto = lf.node("agent"), lf.node("agent-auto")
    assert ui.is_web_agent(web) and web.params == {"auto": True}
    assert web.inputs["auto"].sources == ["agent-auto/action"] and web.inputs["obs"].sources == ["env/obs"]
    assert auto.uses == "hello.agent" and auto.inputs["obs"].sources == ["env/obs"]
    assert lf.node("env").inputs["action"].sources == ["agent/action"]
    with pytest.raises(LaunchError, match="--takeover judge: that node has no 'obs' input"):
        ui.with_takeover(_lf("hello"), "judge")


@needs_chromium
@pytest.mark.timeout(300)
def test_take_over_an_agent_mid_episode_and_hand_back(tmp_path: Path, browser):
    proc = launch_bg("run", "hello", "--episodes", "100000", "--takeover", "agent", "--out", str(tmp_path / "run"))
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(_console_url(proc))
        player = "#human-agent"
        page.wait_for_selector(f"{player} .mode[data-mode=auto] button.mode-toggle", timeout=60_000)
        page.click(f"{player} button.mode-toggle")  # take over
        page.wait_for_selector(f"{player}[data-waiting=true] .mode[data-mode=human]", timeout=30_000)
        for _ in range(2):
            t = int(page.get_attribute(player, "data-t"))
            episode = page.get_attribute(player, "data-episode")
            page.keyboard.press("Space")  # hello's idle action: stay
            page.wait_for_function(f"""(() => {{ const c = document.querySelector('{player}');
                return c.dataset.waiting === 'true' && (c.dataset.t !== '{t}' || c.dataset.episode !== '{episode}'); }})()""",
                                   timeout=30_000)
        page.keyboard.press("Shift+T")  # hand back
        page.wait_for_selector(f"{player} .mode[data-mode=auto]", timeout=30_000)
        page.wait_for_function("document.querySelector('#progress').textContent.match(/episodes ([1-9]\\d*)\\//)",
                               timeout=60_000)
        page.click("#btn-stop")
        assert proc.wait(60) == 0, proc.output()[-3000:]
        assert not errors, errors
    finally:
        _stop(proc)
    records = [json.loads(line) for line in (tmp_path / "run" / "steps" / "agent.jsonl").read_text().splitlines()]
    by = [r["decided_by"] for r in records]
    first_human = by.index("human")
    assert by[first_human:first_human + 2] == ["human", "human"]
    assert set(by[:first_human]) == {"agent-auto"} and "agent-auto" in by[first_human + 2:]
    assert [r["sent"] for r in records if r["decided_by"] == "human"] == ["stay", "stay"]


@needs_chromium
@pytest.mark.timeout(300)
def test_launch_ui_attaches_to_a_running_graph(tmp_path: Path, browser):
    from tests.helpers import LONG_HELLO

    with_ui = launch_bg("run", *LONG_HELLO, "--ui", "--out", str(tmp_path / "a"))
    plain_run = launch_bg("run", *LONG_HELLO, "--out", str(tmp_path / "b"))
    attached = None
    try:
        url = _console_url(with_ui)
        assert wait_until(lambda: "running hello" in plain_run.output(), 240, 0.2), plain_run.output()[-2000:]
        # a run with a console: `launch ui` prints its address
        printed = launch("ui", str(tmp_path / "a"))
        assert printed.returncode == 0 and url in printed.stdout.replace("\n", "")
        # a run without one: `launch ui` serves a console from the kernel's services (no frames)
        attached = launch_bg("ui", str(tmp_path / "b"))
        page = browser.new_page()
        page.goto(_console_url(attached, 60))
        page.wait_for_selector('#nodes tr[data-node="env"]', timeout=30_000)
        page.click("#btn-pause")
        try:
            page.wait_for_selector("#run-state[data-state=paused]", timeout=60_000)
        except Exception:
            shown = page.evaluate("[document.querySelector('#run-state').dataset.state, "
                                  "document.querySelector('#error').textContent]")
            raise AssertionError(f"the page shows {shown}; the console printed: {attached.output()[-2000:]}") from None
        status = launch("ctl", "status", "--run", str(tmp_path / "b"))
        assert json.loads(status.stdout)["paused"] is True
        page.click("#btn-stop")
        assert plain_run.wait(60) == 0
        assert attached.wait(30) == 0  # the console ends with its run
    finally:
        for proc in (with_ui, plain_run, attached):
            if proc is not None:
                _stop(proc)


# ------------------------------------------------------------------------------------------------
# the replay view: an episode played back from the run folder


def _fake_run(run: Path, *, frames: bool, steps: int = 3, close: bool = True) -> list:
    """A run folder as an agent.web run leaves it: the results store with an ended episode and its
    step records, and (``frames``) a recording of its observations with frames. Returns the frames."""
    import numpy as np

    from kernel.bus import resultsdb
    from kernel.bus.protocol import Message
    from kernel.tools.record import RecordingWriter

    run.mkdir(parents=True, exist_ok=True)
    db = resultsdb.connect(run / resultsdb.FILENAME)
    db.execute("INSERT INTO episodes (episode_id, idx, status, node, retries, ended_at, metrics) "
               "VALUES ('ep00000', 0, 'completed', 'env', 0, 0, ?)",
               (json.dumps({"score": 100.0, "steps": steps}),))
    pictures = []
    writer = RecordingWriter(run / "recording.mcap") if frames else None
    for t in range(steps):
        record = {"episode": "ep00000", "t": t, "decided_by": "human" if t % 2 else "agent-auto", "valid": True,
                  "sent": ["left", "right"][t % 2]}
        db.execute("INSERT INTO steps (ts, node, episode_id, t, record) VALUES (?, 'agent', 'ep00000', ?, ?)",
                   (t, t, json.dumps(record)))
        if writer is not None:
            frame = np.full((16, 24, 3), 20 * t, np.uint8)
            pictures.append(frame)
            obs = {"episode": "ep00000", "t": t, "text": f"observation {t}", "goal": "the end", "frame": frame}
            writer.write(Message("data", "env", "obs", obs, seq=2 * t + 1, ts=1e9 + t, step=t))
            step = {"episode": "ep00000", "t": t, "action": record["sent"], "valid": True, "reward": float(t),
                    "done": t == steps - 1, "info": {}}
            writer.write(Message("data", "env", "step", step, seq=2 * t + 2, ts=1e9 + t + 0.5, step=t))
            writer.flush()
    db.close()
    if writer is not None and close:
        writer.close()
    return pictures


def test_replay_joins_step_records_and_the_recording(tmp_path: Path):
    from kernel.sdk.images import png_bytes
    from kernel.tools.console.replay import NO_FRAMES, Replays

    pictures = _fake_run(tmp_path / "run", frames=True)
    replays = Replays(tmp_path / "run")
    outline = replays.episode("ep00000")
    assert [s["t"] for s in outline["steps"]] == [0, 1, 2] and outline["stored"] == 3
    assert outline["frames"] and not outline["pending"] and outline["recordings"] == ["recording.mcap"]
    assert [(s["action"], s["reward"], s["decided_by"]) for s in outline["steps"]] == [
        ("left", 0.0, ["agent-auto"]), ("right", 1.0, ["human"]), ("left", 2.0, ["agent-auto"])]
    step = replays.step("ep00000", 1)
    assert step["obs"]["text"] == "observation 1" and step["frame"] and step["records"][0]["record"]["sent"] == "right"
    assert replays.frame("ep00000", 2) == png_bytes(pictures[2], 1)  # the recorder's own PNG, byte for byte
    with pytest.raises(LookupError, match=r"no step t=3 in episode ep00000: it has 3 steps, t=0..2"):
        replays.step("ep00000", 3)
    with pytest.raises(LookupError, match=r"no step t=7 .* t=0..2"):
        replays.frame("ep00000", 7)
    with pytest.raises(LookupError, match=r"no episode 'ep9'.*the ended episodes are ep00000 \(1 in all\)"):
        replays.episode("ep9")

    _fake_run(tmp_path / "bare", frames=False)
    outline = Replays(tmp_path / "bare").episode("ep00000")
    assert len(outline["steps"]) == 3 and not outline["frames"] and outline["frames_note"] == NO_FRAMES
    with pytest.raises(LookupError, match="no frame of ep00000 t=0: this run kept no frames"):
        Replays(tmp_path / "bare").frame("ep00000", 0)


def test_the_steps_request_lists_an_episodes_step_records(tmp_path: Path):
    async def call(node, svc, body):
        return {}

    _fake_run(tmp_path / "run", frames=False)
    reply = asyncio.run(Hub(call, run_dir=tmp_path / "run", humans=[]).command({"op": "steps", "episode": "ep00000"}))
    assert [(s["node"], s["t"], s["record"]["sent"]) for s in reply["steps"]] == [
        ("agent", 0, "left"), ("agent", 1, "right"), ("agent", 2, "left")]
    no_folder = Hub(call, run_dir=None, humans=[])
    assert asyncio.run(no_folder.command({"op": "steps", "episode": "ep00000"}))["steps"] == []


def test_replay_reads_a_recording_while_it_is_written(tmp_path: Path):
    """A recording is read up to its newest complete record, and on from there as it grows."""
    from kernel.tools.console.replay import Replays

    _fake_run(tmp_path / "full", frames=True)
    data = (tmp_path / "full" / "recording.mcap").read_bytes()
    _fake_run(tmp_path / "run", frames=False)
    replays = Replays(tmp_path / "run")
    seen = []
    for n in [*range(0, len(data), 97), len(data)]:
        (tmp_path / "run" / "recording.mcap").write_bytes(data[:n])
        outline = replays.episode("ep00000")
        seen.append(sum(s["frame"] for s in outline["steps"]))
        assert outline["pending"] == (n < len(data) and seen[-1] < 3)
    assert seen == sorted(seen) and seen[-1] == 3
    assert replays.recordings.files[tmp_path / "run" / "recording.mcap"].complete
    assert replays.frame("ep00000", 0).startswith(b"\x89PNG")


def test_frames_and_replay_steps_past_sqlites_integers_are_refused_with_the_range(tmp_path: Path):
    """A step number past 2^63-1 reached SQLite and came back as a 500 (``/frame``) or as the driver's
    OverflowError text (``replay_step``, whose msgpack carries up to 2^64-1)."""
    import msgpack
    from starlette.testclient import TestClient

    from kernel.tools.console.app import build_app

    async def call(node, svc, body):
        return {}

    _fake_run(tmp_path / "run", frames=True)
    port = 8765  # the app's own origin; TestClient does not listen
    web = TestClient(build_app(Hub(call, run_dir=tmp_path / "run", humans=[]), "tok", port),
                     raise_server_exceptions=False)
    for t in (10**30, 2**63, "9" * 5000):
        got = web.get(f"/frame/ep00000/{t}?token=tok")
        assert got.status_code == 400 and "frame: t must be a whole step number from 0 to 9223372036854775807" \
            in got.text, (got.status_code, got.text[:200])
    got = web.get("/frame/ep00000/500?token=tok")
    assert got.status_code == 404 and "no step t=500 in episode ep00000: it has 3 steps, t=0..2" in got.text
    assert web.get("/frame/ep00000/2?token=tok").content.startswith(b"\x89PNG")
    with web.websocket_connect("/ws?token=tok", headers={"origin": f"http://127.0.0.1:{port}"}) as ws:
        for n, t in enumerate((2**63, 2**64 - 1, 500)):
            ws.send_bytes(msgpack.packb({"op": "replay_step", "id": n, "episode": "ep00000", "t": t}))
            while (reply := msgpack.unpackb(ws.receive_bytes()))["type"] != "reply":
                pass
            assert reply["id"] == n and not reply["ok"]
            assert ("it has 3 steps" if t == 500 else "t must be a whole step number from 0 to") in reply["error"]


class _InProcessConsole:
    """A console served from this process on a run folder, with no graph behind it (the kernel's
    services answered here): the page's replay needs only the run folder."""

    def __init__(self, run_dir: Path) -> None:
        import threading

        from kernel.tools.console.app import build_app, serve

        async def call(node, svc, body):
            if svc == "status":
                return {"run": run_dir.name, "paused": True, "nodes": {}, "episodes": {"completed": 1, "total": 1}}
            return {"edges": []}

        self.hub = Hub(call, run_dir=run_dir, humans=[])
        self.token, port = ui.new_token(), ui.free_port()
        self.base = f"http://127.0.0.1:{port}/"
        self.url = ui.url(port, self.token)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start():
            self.server = await serve(build_app(self.hub, self.token, port), port)
            self.hub.start()

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(30)

    def close(self) -> None:
        async def stop():
            await self.hub.stop()
            self.server.should_exit = True
            await asyncio.gather(self.server.framebus_task, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)



def test_a_foreign_origin_is_refused_at_the_handshake(tmp_path: Path):
    """The console's real server, and a WebSocket client that says what a browser would."""
    import urllib.request

    import msgpack
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    console = _InProcessConsole(tmp_path)
    try:
        port = int(console.base.rsplit(":", 1)[1].strip("/"))
        ws, own = f"ws://127.0.0.1:{port}/ws", f"http://127.0.0.1:{port}"
        cookie = {"Cookie": f"framebus_console={console.token}"}

        def refused(url: str, **kw) -> tuple[int, str]:
            with pytest.raises(InvalidStatus) as exc:
                connect(url, open_timeout=10, **kw).close()
            return exc.value.response.status_code, exc.value.response.body.decode()

        # a page on another loopback port, with the cookie the browser sends along: refused, saying why
        assert refused(ws, origin="http://127.0.0.1:18765", additional_headers=cookie) == (
            403, f"origin 'http://127.0.0.1:18765' is not this console's own ({own})\n")
        assert refused(f"{ws}?token={console.token}", origin="http://localhost:18765")[0] == 403
        assert refused(f"{ws}?token={console.token}")[0] == 403  # no Origin at all
        assert refused(ws, origin=own) == (401, "no token\n")
        assert refused(f"{ws}?token=wrong", origin=own) == (403, "wrong token\n")
        # the console's own page: with the token in the address, or the cookie
        for url, kw in ((f"{ws}?token={console.token}", {"origin": own}),
                        (ws, {"origin": f"http://localhost:{port}", "additional_headers": cookie})):
            with connect(url, open_timeout=10, **kw) as sock:
                sock.send(msgpack.packb({"id": 7, "op": "nope"}))
                while (msg := msgpack.unpackb(sock.recv(timeout=10)))["type"] != "reply":
                    pass
                assert msg["id"] == 7 and "unknown op 'nope'" in msg["error"]
        assert console.hub.counts["refused"] == 5
        # and no other site may frame the page (a decoy over it would click for the person)
        with urllib.request.urlopen(console.url, timeout=10) as response:
            assert response.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
            assert response.headers["X-Frame-Options"] == "DENY"
    finally:
        console.close()

def _get(url: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.headers.get("Content-Type", "")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@needs_chromium
@pytest.mark.timeout(120)
def test_replay_page_says_when_a_run_kept_no_frames(tmp_path: Path, browser):
    _fake_run(tmp_path / "run", frames=False)
    console = _InProcessConsole(tmp_path / "run")
    try:
        # frames are served like everything else: the token or nothing
        assert _get(console.base + "frame/ep00000/0")[0] == 401
        assert _get(console.base + "frame/ep00000/0?token=wrong")[0] == 403
        status, text = _get(console.base + f"frame/ep00000/0?token={console.token}")
        assert status == 404 and "this run kept no frames" in text
        status, text = _get(console.base + f"frame/ep00000/9?token={console.token}")
        assert status == 404 and "it has 3 steps, t=0..2" in text
        status, text = _get(console.base + f"frame/ep00000/-1?token={console.token}")
        assert status == 400 and "whole step number" in text
        status, text = _get(console.base + f"frame/nope/0?token={console.token}")
        assert status == 404 and "the ended episodes are ep00000" in text

        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(console.url)
        page.click('#episodes tr[data-episode="ep00000"]', timeout=30_000)
        page.wait_for_selector('#replay[open][data-steps="3"][data-t="0"]')
        assert "this run kept no frames" in page.locator("#replay .r-noframe").inner_text()
        assert page.locator("#replay img.r-frame").is_hidden()
        assert page.locator("#replay .r-decided").inner_text() == "decided by agent-auto"
        page.keyboard.press("ArrowRight")
        page.wait_for_selector('#replay[data-t="1"]')
        assert page.locator("#replay .r-decided").inner_text() == "decided by human"
        assert "no observation recorded" in page.locator("#replay .r-obs").inner_text()
        reply = page.evaluate("framebusConsole.send('replay_step', {episode: 'ep00000', t: 5})")
        assert not reply["ok"] and "it has 3 steps, t=0..2" in reply["error"]
        page.keyboard.press("Escape")
        page.wait_for_selector("#replay:not([open])", state="attached")
        assert not errors, errors
    finally:
        console.close()


WALK_YAML = """\
name: walk
nodes:
  - id: env
    uses: tests.nodes_frames:FramedHelloEnv
    params: {length: 8, max_steps: 20, frames: true, target: 4}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 10.0, default_action: stay}
  - id: agent
    uses: agent.llm
    params: {model: model, template: hello, images: false}
    inputs: {obs: {from: env/obs, policy: latest}}
  - id: model
    uses: tests.nodes_frames:LineModel
  - id: judge
    uses: hello.judge
    inputs: {step: {from: env/step, policy: block, size: 64}}
run: {episodes: 100000, seed: 0}
"""


@needs_chromium
@pytest.mark.timeout(180)
def test_replay_an_episode_of_a_recorded_run(tmp_path: Path, browser):
    """agent.llm walks the line world from 0 to 4 (four steps an episode) under --record --ui; the
    page replays the first episode: its step records from the store and its recorded frames."""
    import io
    import sqlite3

    import numpy as np
    from PIL import Image

    from tests.nodes_frames import draw

    (tmp_path / "walk.yaml").write_text(WALK_YAML)
    run = tmp_path / "run"
    proc = launch_bg("run", str(tmp_path / "walk.yaml"), "--record", "--ui", "--out", str(run))
    try:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(_console_url(proc))
        page.wait_for_selector("#run-state[data-state=running]", timeout=30_000)  # the socket is open
        page.click("#btn-pause")  # wherever it is: 8 more decisions end the first episode at the latest
        page.wait_for_selector("#run-state[data-state=paused]", timeout=30_000)
        page.fill("#step-n", "8")
        page.click("#btn-step")
        page.click('#episodes tr[data-episode="ep00000"]', timeout=30_000)
        page.wait_for_selector('#replay[open][data-t="0"]', timeout=30_000)

        def store() -> list[tuple[int, dict]]:
            with sqlite3.connect(run / "results.sqlite") as db:
                return [(t, json.loads(r)) for t, r in db.execute(
                    "SELECT t, record FROM steps WHERE episode_id = 'ep00000' AND node = 'agent' ORDER BY t")]

        assert wait_until(lambda: len(store()) == 4, 10)  # the agent's writer thread commits on its own time
        stored = store()
        assert [t for t, _ in stored] == [0, 1, 2, 3]
        assert page.get_attribute("#replay", "data-steps") == str(len(stored))

        def at(t: int) -> None:
            """Step t is shown: its number, its action, its observation, its step record and its frame."""
            page.wait_for_selector(f'#replay[data-t="{t}"] img.r-frame[data-t="{t}"]', timeout=30_000)
            assert page.locator("#replay .r-pos").inner_text() == f"step {t + 1} of 4, t={t}"
            assert page.locator("#replay .r-action").inner_text() == stored[t][1]["sent"] == "right"
            assert page.locator("#replay .r-obs").inner_text() == f"You are at {t} on a line from 0 to 7; the goal is at 4."
            reply = page.locator("#replay .r-record[data-node=agent] .r-reply").inner_text()
            assert reply == f"reply: 4 is above {t}, so: right"
            assert f"You are at {t} " in page.locator("#replay .r-record[data-node=agent] .r-prompt").inner_text()
            src = page.get_attribute("#replay img.r-frame", "src")
            png = page.request.get(page.url.split("?")[0] + src).body()
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))), draw(t, 4, 8))  # the walker at t

        at(0)  # the recorder writes every 2 s: until then the page says so and asks again
        page.wait_for_selector('#replay[data-pending="false"][data-frames="true"]', timeout=30_000)
        page.click("#replay .r-next")
        at(1)
        page.click("#replay .r-next")
        at(2)
        page.click("#replay .r-prev")
        at(1)
        page.locator("#replay .r-slider").fill("3")
        at(3)
        assert page.locator("#replay .r-done").inner_text() == "episode ends here"
        assert page.locator("#replay .r-reward").inner_text() == "reward 1, return 1"
        page.click("#replay .r-first")
        at(0)
        page.select_option("#replay .r-speed", "16")
        page.click("#replay .r-play")
        page.wait_for_selector('#replay[data-playing="false"][data-t="3"] img.r-frame[data-t="3"]', timeout=30_000)

        page.keyboard.press("Escape")
        page.click("#btn-stop")
        assert proc.wait(60) == 0, proc.output()[-3000:]
        assert not errors, errors
    finally:
        _stop(proc)
