"""WebArena-format tasks in a real Chromium against the real local sites (Starlette on uvicorn in this
process, SQLite): VWA's reddit_* helpers on the forum's comment tree with known answers, a task
scored through them, and the browser env opening tasks as WebArena's do: logged in by the site
nodes' ``site.login`` or by a storage-state file under ``auth_dir`` (and a clear error when it is
missing), two sites in two tabs, the task's geolocation, and ``require_reset`` on a remote site
warned and counted rather than pretended."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from kernel.testing import FakeRuntime
from nodes.browser.env import BrowserEnv
from nodes.browser.login import MissingLoginState
from nodes.browser.sites.classifieds import Classifieds
from nodes.browser.sites.forum import ME, Forum
from nodes.browser.sites.framework import login_state
from nodes.browser.sites.lease import LeaseBook
from nodes.browser.sites.node import SiteNode
from nodes.browser.vwa.funcs import parse_func
from nodes.browser.vwa.page import PlaywrightPageServices
from nodes.browser.vwa.registry import REGISTRY, HelperContext
from nodes.browser.vwa.tasks import parse_task
from nodes.judge.vwa_eval import evaluate
from tests.browser_site import VIEW_H, VIEW_W, outside_site, serve, site

pytestmark = [pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium"),
              pytest.mark.asyncio(loop_scope="module")]
SEED = 7


@pytest.fixture(scope="module")
def forum() -> Iterator[tuple[Forum, str]]:
    app = Forum(seed=SEED)
    with serve(app.app()) as base:
        yield app, base


@pytest.fixture(scope="module")
def classifieds() -> Iterator[tuple[Classifieds, str]]:
    app = Classifieds(seed=SEED, size=8)
    with serve(app.app()) as base:
        yield app, base


@pytest.fixture(scope="module")
def remote() -> Iterator[str]:
    """A site that is not one of ours (no /healthz naming a site): the benchmark's Docker sites stand so."""
    with serve(outside_site([])) as outside, serve(site(outside)) as base:
        yield base


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    chromium = await pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
    yield chromium
    await chromium.close()
    await pw.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser):
    context = await browser.new_context(viewport={"width": VIEW_W, "height": VIEW_H})
    p = await context.new_page()
    yield p
    await context.close()


def threaded_post(app: Forum) -> dict[str, Any]:
    """A seeded post with a reply among its comments: the post and its first comment and that reply."""
    row = app.db.execute("SELECT s.id, s.forum, s.slug, s.author, c.id AS reply, c.parent_id AS top FROM comments c "
                         "JOIN submissions s ON s.id = c.submission_id WHERE c.parent_id IS NOT NULL "
                         "ORDER BY c.id LIMIT 1").fetchone()
    comment = {r["id"]: r for r in app.db.execute("SELECT * FROM comments WHERE id IN (?, ?)", (row["reply"], row["top"]))}
    return {**dict(row), "reply_author": comment[row["reply"]]["author"], "reply_body": comment[row["reply"]]["body"],
            "reply_score": comment[row["reply"]]["base_score"]}


async def submit_comment(page: Any, base: str, path: str, text: str) -> None:
    """Through the forum's own form on ``path`` (a post: a top-level comment; a comment's page: a reply)."""
    await page.goto(base + path)
    form = "form[action$='/-/comment']" if "/-/comment/" not in path else "form[action*='/-/comment/']"
    await page.fill(f"{form} textarea[name=comment]", text)
    async with page.expect_navigation():
        await page.click(f"{form} button")


async def test_the_reddit_helpers_read_the_forum_s_comment_tree(forum, page):
    app, base = forum
    app.reset()
    post = threaded_post(app)
    post_path = f"/f/{post['forum']}/{post['id']}/{post['slug']}"
    await page.context.add_cookies(login_state(Forum, SEED, base)["cookies"])
    services = PlaywrightPageServices(page)

    async def helper(name: str, user: str = ME) -> Any:
        return await REGISTRY.call(parse_func(f"func:{name}(__page__, '{user}')"), HelperContext(services, page.url))

    await page.goto(base + post_path)
    assert await helper("reddit_get_latest_comment_obj_by_username") == {}  # nothing of ours there yet
    assert await helper("reddit_get_latest_comment_content_by_username") == ""
    assert await helper("reddit_get_parent_comment_username_of_latest_comment_by_username") == ""

    await submit_comment(page, base, post_path, "Tom & Jerry were here")
    await submit_comment(page, base, f"/f/{post['forum']}/{post['id']}/-/comment/{post['reply']}", "Replying to you")
    await page.goto(base + post_path)
    latest = await helper("reddit_get_latest_comment_obj_by_username")
    assert latest["username"] == ME and latest["content"] == "Replying to you" and latest["net_score"] == 1
    assert latest["time"].endswith("+00:00")
    assert await helper("reddit_get_latest_comment_content_by_username") == "Replying to you"
    assert await helper("reddit_get_parent_comment_username_of_latest_comment_by_username") == post["reply_author"]
    parent = await helper("reddit_get_parent_comment_obj_of_latest_comment_by_username")
    assert parent["content"] == post["reply_body"] and parent["net_score"] == post["reply_score"]
    other = await helper("reddit_get_latest_comment_obj_by_username", post["reply_author"])
    assert other["content"] == post["reply_body"]

    # a task in VWA's shape scores through them on the post's short URL (the forum redirects to its slug)
    def task(parent_name: str) -> Any:
        targets = [{"url": f"__REDDIT__/f/{post['forum']}/{post['id']}", "locator":
                    f"func:reddit_get_parent_comment_username_of_latest_comment_by_username(__page__, '{ME}')",
                    "required_contents": {"exact_match": parent_name}},
                   {"url": "last", "locator": f"func:reddit_get_latest_comment_content_by_username(__page__, '{ME}')",
                    "required_contents": {"must_include": ["replying to you"]}},
                   {"url": "last", "locator": "", "required_contents": {"must_include": ["Tom & Jerry were here"]}}]
        return parse_task({"sites": ["reddit"], "task_id": 102, "start_url": "__REDDIT__", "intent": "Reply to them",
                           "eval": {"eval_types": ["program_html"], "program_html": targets}}, base_urls={"reddit": base})

    result = await evaluate(task(post["reply_author"]), answer=None, page=services)
    assert result.reward == 1, result.checks  # the page's HTML has "Tom &amp; Jerry": unescaped before comparing
    result = await evaluate(task("somebody_else"), answer=None, page=services)
    assert result.reward == 0 and [c.passed for c in result.checks] == [False, True, True]

    # a later top-level comment answers to the post's submitter
    await submit_comment(page, base, post_path, "Third words")
    await page.goto(base + post_path)
    assert await helper("reddit_get_parent_comment_username_of_latest_comment_by_username") == post["author"]
    # a reply to one's own comment is the latest, but VWA's walk to "the parent" stops at one's own comments
    third = app.db.execute("SELECT MAX(id) FROM comments").fetchone()[0]
    await submit_comment(page, base, f"/f/{post['forum']}/{post['id']}/-/comment/{third}", "Fourth words")
    await page.goto(base + post_path)
    assert await helper("reddit_get_latest_comment_content_by_username") == "Fourth words"
    assert await helper("reddit_get_parent_comment_username_of_latest_comment_by_username") == post["author"]
    # the comment's own page holds the same markup
    await page.goto(f"{base}/f/{post['forum']}/{post['id']}/-/comment/{third}")
    assert await helper("reddit_get_latest_comment_content_by_username") == "Fourth words"
    assert await helper("reddit_get_parent_comment_username_of_latest_comment_by_username") == post["author"]
    await page.goto(f"{base}/user/{ME}/comments")
    assert "Fourth words" in await page.content() and "Tom &amp; Jerry were here" in await page.content()
    app.reset()


# ---- the browser env opening WebArena's tasks --------------------------------------------------------------

class SitesRuntime(FakeRuntime):
    """The env's in-memory runtime, with real site nodes answering its site.* requests by node id."""

    def __init__(self, env: BrowserEnv, sites: dict[str, SiteNode], **kwargs: Any) -> None:
        super().__init__(env, "env", **kwargs)
        self.sites = sites

    async def request(self, node: str, svc: str, body: Any = None, *, timeout: float = 10.0) -> Any:
        self.requests.append((node, svc, body))
        if node in self.sites:
            return await self.sites[node]._rt.call(svc, body)  # type: ignore[attr-defined]
        return None


def site_node(name: str, base: str) -> SiteNode:
    """A site node over a site already served (its own server would be a child process)."""
    node = SiteNode()
    FakeRuntime(node, name, params={"site": name, "seed": SEED})
    node.base_url, node.leases = base, LeaseBook(name)
    return node


def task_file(tmp_path: Path, *tasks: dict[str, Any]) -> str:
    path = tmp_path / "tasks.raw.json"
    path.write_text(json.dumps([{"intent": "Look around", "require_login": True, "require_reset": False,
                                 "eval": {"eval_types": ["string_match"], "reference_answers": {"exact_match": "ok"}},
                                 **t} for t in tasks]))
    return str(path)


async def signed_in(page: Any) -> str:
    return str(await page.evaluate("(document.querySelector('#current-user') || {}).textContent || ''"))


async def test_site_nodes_log_a_two_site_task_in_and_it_opens_both_sites_with_its_geolocation(tmp_path, forum,
                                                                                             classifieds):
    (_, reddit), (_, ads) = forum, classifieds
    where = {"latitude": 40.4433, "longitude": -79.9436}
    tasks = task_file(tmp_path, {"sites": ["classifieds", "reddit"], "task_id": 21, "geolocation": where,
                                 "start_url": "__CLASSIFIEDS__ |AND| __REDDIT__/forums",
                                 "storage_state": "./.auth/classifieds.reddit_state.json"})
    nodes = {"ads": site_node("classifieds", ads), "board": site_node("forum", reddit)}
    env = BrowserEnv()
    rt = SitesRuntime(env, nodes, actions=["stop [ok]"], episodes=1, params={
        "viewport": (VIEW_W, VIEW_H), "tasks": [tasks], "leases": False,
        "site_nodes": {"__CLASSIFIEDS__": "ads", "__REDDIT__": "board"}})
    await rt.play(teardown=False)
    try:
        assert [(n, body) for n, svc, body in rt.requests if svc == "site.login"] == [
            ("ads", {"site": "classifieds"}), ("board", {"site": "reddit"})]
        assert env.browser is not None and [p.url for p in env.browser.pages] == [f"{ads}/", f"{reddit}/forums"]
        first, second = env.browser.pages
        # both sites are on 127.0.0.1, whose cookies know no ports: each keeps its own login
        assert await signed_in(first) == "blake.sullivan@gmail.com" and await signed_in(second) == ME
        coords = await first.evaluate("new Promise((ok, no) => navigator.geolocation.getCurrentPosition("
                                      "p => ok([p.coords.latitude, p.coords.longitude]), e => no(e.message)))")
        assert coords == [where["latitude"], where["longitude"]]
    finally:
        await env.teardown()
    with pytest.raises(ValueError, match=r"site forum has no account 'nobody' \(accounts: MarvelsGrantMan136\)"):
        await nodes["board"]._rt.call("site.login", {"username": "nobody"})  # type: ignore[attr-defined]


async def test_against_hosts_the_login_file_comes_from_auth_dir_and_a_missing_one_is_named(tmp_path, forum):
    _, base = forum
    auth = tmp_path / "webarena" / ".auth"
    auth.mkdir(parents=True)
    (auth / "reddit_state.json").write_text(json.dumps(login_state(Forum, SEED, base)))  # as auto_login saves it
    task = {"task_id": 5, "sites": ["reddit"], "start_url": "__REDDIT__/forums",
            "storage_state": "./.auth/reddit_state.json"}
    for folder in (auth.parent, auth):  # WebArena's folder, or its .auth folder itself
        env = BrowserEnv()
        FakeRuntime(env, "env", params={"viewport": (VIEW_W, VIEW_H), "hosts": {"__REDDIT__": base},
                                        "auth_dir": str(folder)})
        await env.setup()
        try:
            await env.start_task("t1", dict(task))
            assert env.browser is not None and await signed_in(env.browser.page) == ME
        finally:
            await env.teardown()

    empty = tmp_path / "empty"
    empty.mkdir()
    env = BrowserEnv()
    FakeRuntime(env, "env", params={"viewport": (VIEW_W, VIEW_H), "hosts": {"__REDDIT__": base}, "auth_dir": str(empty)})
    await env.setup()
    try:
        with pytest.raises(MissingLoginState, match=r"^task 5: storage_state \./\.auth/reddit_state\.json not found "
                                                    rf"\(looked for {empty}/\.auth/reddit_state\.json or "
                                                    rf"{empty}/reddit_state\.json\); run WebArena's auto_login"):
            await env.start_task("t2", dict(task))
    finally:
        await env.teardown()
    tasks = task_file(tmp_path, {**task, "start_url": "__REDDIT__"}, {**task, "task_id": 6, "storage_state": None})
    params = BrowserEnv.Params(tasks=[tasks], hosts={"__REDDIT__": base}, auth_dir=str(empty))
    (problem,) = [p for p in BrowserEnv.preflight(params) if p.startswith("tasks:")]
    assert f"tasks: {tasks}: task 5: storage_state ./.auth/reddit_state.json not found" in problem
    served = BrowserEnv.Params(tasks=[tasks], site_nodes={"__REDDIT__": "forum"})  # site nodes make the state
    assert not [p for p in BrowserEnv.preflight(served) if p.startswith("tasks:")]


async def test_require_reset_resets_a_local_site_by_url_and_says_a_remote_one_cannot_be(tmp_path, forum, remote):
    app, base = forum
    app.reset()
    before = app.db.execute("SELECT COUNT(*) FROM comments").fetchone()[0]
    app.db.execute("INSERT INTO comments (submission_id, author, body, created) VALUES (1, 'x', 'left over', "
                   "'2030-01-01 00:00')")
    app.db.commit()
    tasks = task_file(tmp_path, *[{"sites": ["shopping"], "task_id": i, "start_url": "__SHOPPING__/",
                                   "require_reset": True, "require_login": False} for i in (1, 2)],
                      {"sites": ["reddit"], "task_id": 3, "start_url": "__REDDIT__/", "require_reset": True})
    env = BrowserEnv()
    rt = FakeRuntime(env, "env", actions=["stop [ok]"] * 3, episodes=3, params={
        "viewport": (VIEW_W, VIEW_H), "tasks": [tasks], "hosts": {"__SHOPPING__": remote, "__REDDIT__": base}})
    await rt.play()
    assert rt.summary_sections["browser"] == {"resets_skipped": 2, "resets_skipped_per_site": {"shopping": 2}}
    assert env.resettable == {remote: False, base: True}
    assert app.db.execute("SELECT COUNT(*) FROM comments").fetchone()[0] == before  # the forum's POST /reset ran
