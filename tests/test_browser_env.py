"""The browser environment (nodes/browser) against a real Chromium and a real local web site
(tests/browser_site.py): the action grammar, the Set-of-Marks and accessibility-tree rules, the
sandbox, every action and observation kind through EnvNode's own loop, and one run of a real graph.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from kernel.testing import FakeRuntime
from nodes.browser import axtree, som
from nodes.browser.actions import ActionError, parse_action, playwright_keys
from nodes.browser.env import BrowserEnv, spec_from_task
from nodes.browser.sandbox import Sandbox
from tests.browser_site import VIEW_H, VIEW_W, outside_site, serve, site
from tests.helpers import launch

pytestmark = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium")


# -- the pieces on their own ------------------------------------------------------------------------
def test_the_parser_reads_vwa_s_grammar():
    a = parse_action("click [12]")
    assert (a.name, a.element) == ("click", 12)
    assert parse_action("hover[3]").element == 3
    t = parse_action("type [4] [red shoes]")
    assert (t.element, t.text, t.enter) == (4, "red shoes", True)  # Enter unless [0]
    t = parse_action("type [4] [a [b] c] [0]")
    assert (t.text, t.enter) == ("a [b] c", False)
    assert parse_action("press [Ctrl+v]").text == "Ctrl+v"
    assert parse_action("scroll [down]").text == "down" and parse_action("scroll up").text == "up"
    assert parse_action("goto [http://x.test/a?b=1]").text == "http://x.test/a?b=1"
    assert parse_action("tab_focus [2]").tab == 2
    assert [parse_action(n).name for n in ("new_tab", "close_tab", "go_back", "go_forward")] == \
        ["new_tab", "close_tab", "go_back", "go_forward"]
    assert parse_action("stop [$25.99]").text == "$25.99" and parse_action("stop").text == ""
    assert parse_action("stop []").text == "" and parse_action("stop[]").name == "stop"  # VWA's empty answer
    assert parse_action("  click [7]  trailing words").element == 7
    assert parse_action("type [1] [hi] [2]").text == "hi] [2"  # as VWA: only [0] and [1] are flags
    for bad, says in [("tab_close", "unknown action"), ("dance [1]", "unknown action"), ("click [x]", "click [id]"),
                      ("type [1]", "type [id] [text]"),
                      ("scroll [left]", "scroll [up]"), ("", "empty"), ("goto", "goto [url]")]:
        with pytest.raises(ActionError, match=re.escape(says)):
            parse_action(bad)
    with pytest.raises(ActionError, match="not int"):
        parse_action(5)
    assert playwright_keys("Meta+a") == "Control+a" and playwright_keys("ctrl+Shift+K") == "Control+Shift+K"
    assert playwright_keys("Enter") == "Enter" and playwright_keys("Control++") == "Control++"


def test_set_of_marks_numbers_filters_and_lists_as_vwa_does():
    records = [
        ["H1", False, 0, 0, 300, 40, "Title\n\t here"],
        ["A", True, 10, 50, 100, 20, "first"],
        ["A", True, 10, 5000, 100, 20, "below the viewport"],       # not in view: no number
        ["A", True, 120, 50, 4, 4, "tiny"],                         # numbered, not listed
        ["DIV", True, 0, 0, 800, 600, "everything"],               # > 80% of the viewport: dropped
        ["IMG", True, 790, 590, 64, 64, "A disc, url: http://s/d.png"],  # partly in view
        ["P", False, 0, 100, 100, 20, "Title here"],                # repeated text: listed once
        ["SPAN", False, 0, 130, 100, 20, "x" * 300],
    ]
    page = som.mark_page(records, 800, 600)
    assert [(m.id, m.tag, m.shown) for m in page.marks] == [(1, "A", True), (2, "A", False), (3, "IMG", True)]
    assert page.text.splitlines() == ["[] [StaticText] [Title here]", "[1] [A] [first]",
                                      "[3] [IMG] [A disc, url: http://s/d.png]", f"[] [StaticText] [{'x' * 200}]"]
    assert page.marks[2].center == (795.0, 595.0)  # the centre of the visible part
    frame = som.draw_marks(np.zeros((600, 800, 3), np.uint8), page)
    assert tuple(frame[50, 60]) == som.PALETTE[0]  # mark 1's outline, in the first colour of the cycle
    assert tuple(frame[100, 60]) == (0, 0, 0)  # static text is not drawn
    assert not frame[45:56, 118:126].any()  # the tiny mark 2 is not drawn


def test_the_accessibility_tree_is_pruned_and_limited_to_the_viewport():
    def node(nid, role, name="", children=(), backend=None, **extra):
        return {"nodeId": str(nid), "role": {"value": role}, "name": {"value": name},
                "childIds": [str(c) for c in children], "backendDOMNodeId": backend, **extra}
    nodes = [node(1, "RootWebArea", "Page", (2, 3, 6, 8), 100, properties=[
                 {"name": "focusable", "value": {"value": True}}, {"name": "url", "value": {"value": "http://s/"}}]),
             node(2, "generic", "", (4,), 101), node(4, "link", "Shoes", (5,), 103), node(5, "StaticText", "Shoes", (), 104),
             node(3, "heading", "Far away", (), 102), node(6, "list", "", (7,), 105), node(7, "button", "Buy", (), 106),
             node(8, "paragraph", "", (), 107, ignored=True)]
    bounds = {100: (0, 0, 800, 3000), 101: (0, 0, 800, 50), 102: (0, 2500, 800, 30), 103: (10, 10, 50, 20),
              104: (10, 10, 50, 20), 105: (0, 60, 800, 100), 106: (20, 70, 40, 20), 107: (0, 200, 10, 10)}
    tree = axtree.render(nodes, bounds, (0.0, 0.0), (800, 600))
    assert tree.text.splitlines() == ["[1] RootWebArea 'Page' url: http://s/", "\t[4] link 'Shoes'", "\t[7] button 'Buy'"]
    assert tree.centers[4] == (35.0, 20.0) and 3 not in tree.centers
    scrolled = axtree.render(nodes, bounds, (0.0, 2400.0), (800, 600))
    assert "[3] heading 'Far away'" in scrolled.text and "Shoes" not in scrolled.text
    assert scrolled.centers[3] == (400.0, 115.0)


def test_the_sandbox_allows_only_the_configured_sites():
    box = Sandbox(["http://127.0.0.1:9980/", "localhost:8000"])
    assert box.refusal("http://127.0.0.1:9980/index.php?page=item&id=3") is None
    assert box.refusal("http://LOCALHOST:8000/x") is None and box.refusal("about:blank") is None
    assert "outside" in box.refusal("http://127.0.0.1:9981/")
    assert "outside" in box.refusal("https://127.0.0.1/")  # the same host on another port (443)
    assert "file://" in box.refusal("file:///etc/passwd")
    assert "javascript" in box.refusal("javascript:alert(1)")
    assert "data" in box.refusal("data:text/html,<b>hi</b>")
    assert box.refusal("data:image/png;base64,AAAA", navigation=False) is None  # a page's inline image


def test_a_task_in_vwa_s_fields_becomes_an_episode_set_up():
    hosts = {"__CLASSIFIEDS__": "http://127.0.0.1:9980/", "__WIKIPEDIA__": "http://127.0.0.1:8888"}
    spec = spec_from_task({"task_id": 7, "start_url": "__CLASSIFIEDS__/index.php |AND| __WIKIPEDIA__",
                           "viewport_size": {"width": 430}, "intent": "Find it", "image": "http://x/i.png"},
                          hosts, (1280, 2048))
    assert spec.start_urls == ("http://127.0.0.1:9980/index.php", "http://127.0.0.1:8888")
    assert spec.viewport == (430, 2048) and spec.intent == "Find it" and spec.images == ("http://x/i.png",)
    with pytest.raises(ValueError, match=r"task 8: start_url names __REDDIT__ but no base URL"):
        spec_from_task({"task_id": 8, "start_url": "__REDDIT__"}, hosts, (1280, 2048))


# -- the environment, driven by EnvNode's loop in this process -------------------------------------
def make_env(episodes: int = 0, script: list[Any] | None = None, **params: Any) -> tuple[BrowserEnv, FakeRuntime]:
    """The environment driven by EnvNode's loop in this process, on kernel.testing's in-memory runtime."""
    env = BrowserEnv()
    rt = FakeRuntime(env, "env", params={"viewport": (VIEW_W, VIEW_H), **params}, actions=script or [], episodes=episodes)
    return env, rt


async def play(script: list[Any], episodes: int = 1, keep_open: bool = False, **params: Any
               ) -> tuple[BrowserEnv, FakeRuntime]:
    env, rt = make_env(episodes, script, **params)
    await rt.play(teardown=not keep_open)
    return env, rt


def mark(obs: dict[str, Any], text: str, tag: str | None = None) -> int:
    """The SoM id of the element listed with ``text``."""
    for line in obs["som"].splitlines():
        found = re.match(r"\[(\d+)\] \[(\w+)\] \[(.*)\]$", line)
        if found and text in found.group(3) and (tag is None or found.group(2) == tag):
            return int(found.group(1))
    raise AssertionError(f"{text!r} is not listed:\n{obs['som']}")


def ax(obs: dict[str, Any], role: str, name: str) -> int:
    found = re.search(rf"\[(\d+)\] {role} '{re.escape(name)}'", obs["axtree"])
    assert found, f"{role} {name!r} is not in the tree:\n{obs['axtree']}"
    return int(found.group(1))


@pytest.fixture(scope="module")
def sites() -> Iterator[tuple[str, str, list[str]]]:
    hits: list[str] = []
    with serve(outside_site(hits)) as outside, serve(site(outside)) as base:
        yield base, outside, hits


def click(text: str, tag: str | None = None) -> Callable[[dict[str, Any]], str]:
    return lambda obs: f"click [{mark(obs, text, tag)}]"


async def test_every_observation_kind_and_the_set_of_marks_on_a_real_page(sites):
    base, _, _ = sites
    env, rt = await play(["stop [seen]"], start_url=f"{base}/", intent="Look around", frames=True,
                         observe=["som", "axtree", "html", "url", "tabs"])
    obs = rt.bodies("obs")[0]
    assert obs["env"] == "browser" and obs["goal"] == "Look around" and obs["idle"] is None
    assert obs["actions"] == ["click", "hover", "type", "press", "scroll", "new_tab", "tab_focus", "close_tab",
                              "goto", "go_back", "go_forward", "stop"]
    assert obs["url"] == f"{base}/" and obs["tabs"] == ["Home"] and obs["tab"] == 0
    assert obs["last_action_error"] == "" and obs["text"] == obs["som"]
    assert "<h1>Test site home</h1>" in obs["html"]
    listed = [line for line in obs["som"].splitlines() if not line.startswith("[]")]
    ids = [int(re.match(r"\[(\d+)\]", line).group(1)) for line in listed]
    assert obs["som"].splitlines()[:2] == ["[] [StaticText] [Test site home]", "[] [StaticText] [Welcome to the test site.]"]
    assert listed[0] == "[1] [A] [Go to the form]" and "[8] [BUTTON] [Click me]" in listed
    assert ids == [*range(1, 10)]  # the 4x4 link takes number 10 but is not listed
    assert len(env.capture.targets) == 10
    assert "Far below" not in obs["som"] and "Huge" not in obs["som"] and "secret" not in obs["som"]
    assert "\t[" in obs["axtree"] and "link 'Go to the form'" in obs["axtree"] and "Far below" not in obs["axtree"]
    frame = obs["frame"]
    assert frame.shape == (VIEW_H, VIEW_W, 3) and frame.dtype == np.uint8
    assert env.capture.marks is not None
    button = env.capture.marks.marks[7]
    assert button.id == 8 and button.tag == "BUTTON"
    right_edge = frame[int(button.center[1]), int(button.box[2]) - 2]
    assert tuple(right_edge) == som.PALETTE[7]  # mark 8's outline, in the 8th colour, is drawn on the picture
    assert rt.bodies("step")[-1]["done"] and rt.bodies("step")[-1]["info"]["answer"] == "seen"
    assert rt.ended()[0]["metrics"]["answered"] == 1.0 and rt.ended()[0]["metrics"]["steps"] == 1


async def test_every_action_kind_on_a_real_site(sites):
    base, _, _ = sites
    script = [
        click("Click me"),                                            # 0 click
        lambda o: f"hover [{mark(o, 'Hover over me')}]",              # 1 hover
        click("Go to the form"),                                      # 2
        lambda o: f"type [{mark(o, '', 'INPUT')}] [Ada] [0]",          # 3 type without Enter
        lambda o: f"type [{mark(o, '', 'INPUT')}] [ Lovelace]",        # 4 type appends, then Enter
        "go_back", "go_forward",                                      # 5, 6
        f"goto [{base}/long]", "scroll [down]", "scroll [up]",        # 7, 8, 9
        f"goto [{base}/form]",                                        # 10
        lambda o: f"type [{mark(o, '', 'INPUT')}] [Bob] [0]",          # 11
        "press [Enter]",                                              # 12 press
        "new_tab", "tab_focus [0]", "close_tab",                      # 13, 14, 15
        f"goto [{base}/]", click("Open in a new tab"),                # 16, 17: a link opening a tab
        f"goto [{base}/late]",                                        # 18: content after the load event
        "stop [All done]",                                            # 19
    ]
    _, rt = await play(script, start_url=f"{base}/", observe=["som", "url", "tabs"])
    obs, steps = rt.bodies("obs"), rt.bodies("step")
    assert all(s["valid"] and s["info"]["action_error"] is None for s in steps[:-1]), \
        [(s["t"], s["info"]) for s in steps if s["info"].get("action_error")]
    assert "Clicked 1 times" in obs[1]["som"]
    assert "Hover tip shown" in obs[2]["som"]
    assert obs[3]["url"] == f"{base}/form"
    assert "Hello Ada Lovelace" in obs[5]["som"] and obs[5]["url"] == f"{base}/submit"
    assert obs[6]["url"] == f"{base}/form" and obs[7]["url"] == f"{base}/submit"
    assert "Section 1" in obs[8]["som"] and "Section 2" not in obs[8]["som"]
    assert "Section 2" in obs[9]["som"] and "Section 1" not in obs[9]["som"]  # one viewport down
    assert "Section 1" in obs[10]["som"]
    assert "Hello Bob" in obs[13]["som"]
    assert obs[14]["tabs"] == ["Thanks", ""] and obs[14]["tab"] == 1 and obs[14]["url"] == "about:blank"
    assert obs[15]["tab"] == 0 and obs[15]["url"] == f"{base}/submit"
    assert obs[16]["tabs"] == [""] and obs[16]["url"] == "about:blank"  # the focused tab (0) was closed
    assert obs[18]["tabs"] == ["Home", "New tab page"] and obs[18]["tab"] == 1  # focus follows the new tab
    assert "Arrived late" in obs[19]["som"]
    assert steps[-1]["done"] and steps[-1]["info"]["answer"] == "All done"


async def test_work_a_page_schedules_is_waited_for_though_the_quiet_window_is_short(sites):
    base, _, _ = sites
    _, rt = await play([click("Show later"), "stop [done]"], start_url=f"{base}/delayed", observe=["som"],
                       frames=True, frame="screenshot", frame_quality=80, quiet_ms=30)
    first, after = rt.bodies("obs")
    assert "A fetched disc" in first["som"]  # fetched after load, then drawn in: the first obs waited for it
    disc = re.search(r"\[IMG\] \[A fetched disc", first["som"])
    assert disc is not None and first["frame"].shape == (VIEW_H, VIEW_W, 3)  # a JPEG frame, decoded
    assert first["frame"].dtype == np.uint8 and first["frame"].mean() > 200  # the white page, not a blank
    assert "Shown later" in after["som"] and "Not yet" not in after["som"]  # a 200 ms timer after the click


async def test_invalid_actions_and_the_sandbox_are_steps_with_a_message_never_a_crash(sites):
    base, outside, hits = sites
    script = ["dance [1]", "click [999]", 42, "type [1]",               # 0-3: invalid steps
              f"goto [{outside}/secret]", "goto [file:///etc/passwd]",  # 4, 5: refused
              click("Outside link"),                                    # 6: a link out is blocked
              "tab_focus [5]", "press [Control+Nope]",                  # 7, 8: cannot be applied
              click("Download a file"),                                 # 9: downloads are refused
              None,                                                     # 10: no action
              {"stop": True, "reason": "giving up"}]
    _, rt = await play(script, start_url=f"{base}/", observe=["som", "url"])
    obs, steps = rt.bodies("obs"), rt.bodies("step")
    assert [s["valid"] for s in steps[:11]] == [False] * 4 + [True] * 7
    errors = [o["last_action_error"] for o in obs[1:12]]
    assert "unknown action 'dance'" in errors[0]
    assert "element [999] is not on the current page" in errors[1]
    assert "not int" in errors[2] and "type [id] [text]" in errors[3]
    assert "outside the sites" in errors[4] and "file://" in errors[5]
    assert "was blocked" in errors[6] and "outside the sites" in errors[6]
    assert "there is no tab 5" in errors[7] and "Nope" in errors[8]
    assert errors[10] == ""
    assert hits == []  # nothing ever reached the outside host
    assert all(o["url"] == f"{base}/" for o in obs[1:12])
    assert steps[-1]["done"] and steps[-1]["info"]["stopped"] == "giving up"
    assert rt.ended()[0]["metrics"]["invalid"] == 4 and rt.ended()[0]["metrics"]["stopped"] is True


async def test_accessibility_tree_ids_services_for_judges_and_several_tabs(sites):
    base, outside, _ = sites
    script = [lambda o: f"click [{ax(o, 'link', 'Pictures')}]", "stop [ok]",   # episode 0
              "tab_focus [1]", "stop [two]"]                                   # episode 1
    env, rt = await play(script, episodes=2, keep_open=True, text="axtree", observe=["axtree", "url", "tabs"],
                         start_url="__SITE__/ |AND| __SITE__/long", hosts={"__SITE__": base}, intent="Two tabs")
    try:
        first, pictures = rt.bodies("obs")[0], rt.bodies("obs")[1]
        assert first["text"].startswith("Tab 0 (current): Home | Tab 1: Long page\n\n[")
        assert "som" not in first and first["tabs"] == ["Home", "Long page"] and first["goal"] == "Two tabs"
        assert pictures["url"] == f"{base}/images"
        assert f"image 'A red disc, url: {base}/img/red.png'" in pictures["axtree"]  # alt rewritten with the url
        assert rt.bodies("obs")[3]["tab"] == 1 and rt.bodies("obs")[3]["url"] == f"{base}/long"
        # the first episode's final page is still there for its judge, the second's too
        assert await env.page_url({"episode": "ep00000"}) == f"{base}/images"
        assert await env.page_url({"episode": "ep00001"}) == f"{base}/long" == await env.page_url(None)
        assert await env.page_images({"episode": "ep00000", "selector": ".gallery"}) == \
            [f"{base}/img/red.png", f"{base}/img/blue.png"]
        assert len(await env.page_images({"episode": "ep00000", "selector": ""})) == 3
        assert await env.page_evaluate({"episode": "ep00000", "expression": "document.title"}) == "Pictures"
        assert "A red disc" in await env.page_content({"episode": "ep00000"})
        png = await env.page_screenshot({"episode": "ep00000"})
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and som.screenshot_array(png).shape == (VIEW_H, VIEW_W, 3)
        with Image.open(io.BytesIO(png)) as img:  # the fast decode gives Pillow's pixels exactly
            assert np.array_equal(som.screenshot_array(png), np.asarray(img.convert("RGB")))
        assert await env.page_goto({"episode": "ep00000", "url": f"{base}/form"}) == f"{base}/form"
        for bad, says in [({"episode": "ep00000", "expression": 7}, "expression must be a string"),
                          ({"episode": "ep9"}, "not open here"), ("x", "is a mapping"),
                          ({"episode": "ep00000", "url": f"{outside}/"}, "outside the sites")]:
            with pytest.raises(ValueError, match=says):
                await (env.page_goto(bad) if "url" in str(bad) else env.page_evaluate(bad))
        assert await env.page_release({"episode": "ep00000"}) is True
        with pytest.raises(ValueError, match="not open here"):
            await env.page_url({"episode": "ep00000"})
        assert env.describe({})["ids"] == "axtree"
    finally:
        await env.teardown()


async def test_a_task_dict_starts_an_episode_and_a_bad_one_is_named(sites):
    base, _, _ = sites
    env, _ = make_env()
    await env.setup()
    try:
        with pytest.raises(ValueError, match="task 3: start_url names __SITE__"):
            await env.start_task("t1", {"task_id": 3, "start_url": "__SITE__/form"})
        await env.start_task("t2", {"task_id": 4, "start_url": f"{base}/form", "intent": "Fill the form",
                                    "viewport_size": {"width": 640, "height": 480}, "image": ["in.png"]})
        obs = env.observe()
        assert obs["goal"] == "Fill the form" and obs["goal_images"] == ["in.png"] and obs["url"] == f"{base}/form"
        assert env.browser is not None and env.browser.page.viewport_size == {"width": 640, "height": 480}
        assert env.capture.data["som"].count("[INPUT]") == 1
    finally:
        await env.teardown()


async def test_an_episode_starting_while_its_site_restarts_waits_for_it():
    """A site node that crashed is restarted by its supervisor within a second or two; an episode
    whose start page is refused meanwhile is tried again, not a dead env."""
    import socket
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    class Page(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<html><body><a href='/'>Back again</a></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    servers: list[ThreadingHTTPServer] = []

    def come_back() -> None:
        servers.append(ThreadingHTTPServer(("127.0.0.1", port), Page))
        servers[0].serve_forever()

    later = threading.Timer(1.5, come_back)
    env, _ = make_env()
    await env.setup()
    later.start()  # the browser is up: the site comes back 1.5 s into the episode's start
    try:
        await env.start_task("t1", {"task_id": 1, "start_url": f"http://127.0.0.1:{port}/"})
        assert "Back again" in env.capture.data["som"]
    finally:
        await env.teardown()
        await asyncio.to_thread(servers[0].shutdown)  # serve_forever returns: the timer's thread ends
        servers[0].server_close()
        later.join()


# -- one real graph ---------------------------------------------------------------------------------
def test_a_launch_file_runs_the_browser_with_the_replay_agent(tmp_path, sites):
    base, _, _ = sites
    (tmp_path / "browser.yaml").write_text(textwrap.dedent(f"""\
        name: browser_replay
        nodes:
          - id: env
            uses: "nodes.browser.env:BrowserEnv"
            params:
              start_url: "__SITE__/"
              hosts: {{__SITE__: "{base}"}}
              viewport: [{VIEW_W}, {VIEW_H}]
              frames: true
            inputs:
              action: agent/action
            clock: {{mode: lockstep, deadline: 60.0, default_action: null}}
          - id: agent
            uses: "nodes.agent.baseline:ReplayAgent"
            params:
              actions: ["click [1]", "click [999]", "type [1] [Grace] [0]", "stop [Grace]"]
            inputs:
              obs: {{from: env/obs, policy: fifo}}
        run:
          episodes: 2
          seed: 0
        """))
    out = tmp_path / "out"
    result = launch("run", str(tmp_path / "browser.yaml"), "--out", str(out), timeout=110)
    assert result.returncode == 0, result.stdout + result.stderr
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines() if line.strip()]
    assert len(records) == 2
    for rec in records:
        assert rec["status"] == "completed"
        assert rec["metrics"]["steps"] == 4 and rec["metrics"]["invalid"] == 1 and rec["metrics"]["answered"] == 1.0
