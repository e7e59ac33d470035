"""The code forge (nodes/browser/sites/forge*.py), its GitLab helper and its task set.

The app is the real one, driven through Starlette's TestClient; its repositories are real bare git
repositories, checked with the git command line. Then: resets (database and repositories back in
under a second), hostile form input (bounded, refused with a 400 that names the field, nothing
changed), the REST subset, ``gitlab_get_project_memeber_role`` on a live members page in Chromium,
and launch/forge_gold.yaml on a few of the shipped tasks: gold actions score 1, perturbed ones 0."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from nodes.browser.gold import parse_gold
from nodes.browser.sites.forge import Forge
from nodes.browser.sites.forge_data import ME, MY_PASSWORD
from nodes.browser.vwa.funcs import parse_func
from nodes.browser.vwa.helpers import HelperContext
from nodes.browser.vwa.make_forge_tasks import READ, build
from nodes.browser.vwa.page import PlaywrightPageServices
from nodes.browser.vwa.registry import REGISTRY
from nodes.browser.vwa.tasks import load_task_file
from tests.browser_site import serve
from tests.helpers import ROOT
from tests.vwa_runs import run_tasks

FILE = ROOT / "nodes/browser/vwa/data/forge_tasks.json"
TASKS: list[dict[str, Any]] = json.loads(FILE.read_text())
GOLD = ROOT / "launch" / "forge_gold.yaml"


@pytest.fixture(scope="module")
def site() -> Iterator[Forge]:
    forge = Forge(seed=0)
    yield forge
    forge.close()


@pytest.fixture
def web(site: Forge) -> Iterator[TestClient]:
    """A client on the shared site, which is back in its seeded state after each test."""
    with TestClient(site.app()) as client:
        yield client
    site.reset()


def sign_in(client: TestClient) -> None:
    reply = client.post("/users/sign_in", data={"user[login]": ME, "user[password]": MY_PASSWORD},
                        follow_redirects=False)
    assert reply.status_code == 303, reply.text


def git(site: Forge, project_id: int, *args: str) -> str:
    if shutil.which("git") is None:
        pytest.skip("the git command line is not installed")
    return subprocess.run(["git", "-C", str(site.repos.live / f"{project_id}.git"), *args], check=True,
                          capture_output=True, text=True).stdout


def state(site: Forge) -> tuple[str, dict[str, str]]:
    """The whole database as SQL and every repository's refs: what a reset must bring back."""
    with site.lock:
        dump = "\n".join(site.db.iterdump())
    refs = {}
    for key in site.repos.keys():
        refs[key] = git(site, int(key), "for-each-ref", "--format=%(refname) %(objectname)")
    return dump, refs


# ---- pages and git ------------------------------------------------------------------------------

def test_pages_show_the_seeded_content_in_gitlab_shapes(web: TestClient, site: Forge) -> None:
    for path in ("/explore", "/a11yproject/a11yproject.com", "/a11yproject/a11yproject.com/-/tree/main",
                 "/a11yproject/a11yproject.com/-/blob/main/README.md", "/a11yproject/a11yproject.com/-/commits/main",
                 "/a11yproject/a11yproject.com/-/issues/?label_name%5B%5D=bug&state=all", "/primer/design/-/milestones",
                 "/a11yproject/a11yproject.com/-/labels", "/a11yproject/a11yproject.com/-/project_members",
                 "/a11yproject/a11yproject.com/-/branches", "/a11yproject/a11yproject.com/-/graphs/main",
                 f"/{ME}", "/a11yproject", "/groups/a11yproject/-/group_members", f"/users/{ME}/starred",
                 f"/users/{ME}/following", "/search?search=dark&scope=issues"):
        assert web.get(path).status_code == 200, path
    issue = web.get("/a11yproject/a11yproject.com/-/issues/1").text
    row = site.db.execute("SELECT title FROM issues WHERE project_id = 1 AND iid = 1").fetchone()
    assert re.search(r'data-qa-selector="title_content">' + re.escape(row[0].replace("'", "&#39;")), issue)
    for marker in ('id="notes-list"', 'class="block assignee"', 'data-testid="sidebar-due-date"', 'class="block labels"'):
        assert marker in issue
    mr = web.get("/a11yproject/a11yproject.com/-/merge_requests/1").text
    assert len(re.findall(r'<div class="detail-page-description">.*?</div>', mr, re.S)) == 1
    assert mr.count('class="gl-font-monospace source-branch"') == 1 and 'class="block reviewer"' in mr
    assert 'title="Public - ' in web.get("/a11yproject/a11yproject.com").text
    # a private project is a 404 until its member signs in
    assert web.get(f"/{ME}/empathy-prompts").status_code == 404
    assert web.get("/dashboard/projects").status_code == 401
    sign_in(web)
    assert web.get(f"/{ME}/empathy-prompts").status_code == 200
    todos = web.get("/dashboard/todos").text
    assert "assigned you" in todos or "requested a review of" in todos


def test_the_git_history_is_what_the_pages_show(web: TestClient, site: Forge, tmp_path: Path) -> None:
    pid = 1
    log = git(site, pid, "log", "--format=%H%x09%an%x09%ae%x09%s", "main").splitlines()
    assert len(log) >= 5 and len({line.split("\t")[1] for line in log}) >= 2, log  # several authors
    page = web.get("/a11yproject/a11yproject.com/-/commits/main").text
    shown = re.findall(r'href="/a11yproject/a11yproject.com/-/commit/([0-9a-f]{40})">([^<]*)</a>\s*'
                       r'<div class="committer"><span class="commit-author-name">([^<]*)</span>', page)
    assert [(sha, title) for sha, title, _ in shown] == [(line.split("\t")[0], line.split("\t")[3].replace(
        "'", "&#39;")) for line in log]
    assert [name for _, _, name in shown] == [line.split("\t")[1] for line in log]
    assert f"{len(log)} Commits" in web.get("/a11yproject/a11yproject.com").text
    # the tree, a file and its raw bytes
    names = git(site, pid, "ls-tree", "--name-only", "main").split()
    tree = web.get("/a11yproject/a11yproject.com/-/tree/main").text
    assert sorted(re.findall(r'class="tree-item-link (?:folder|file)" href="[^"]+">(?:📁 )?([^<]+)</a>', tree)) == \
        sorted(names)
    readme = git(site, pid, "show", "main:README.md")
    assert web.get("/a11yproject/a11yproject.com/-/raw/main/README.md").text == readme
    assert web.get("/a11yproject/a11yproject.com/-/raw/main/README.md").headers["content-type"].startswith("text/plain")
    # contributors: git shortlog's counts (merges left out)
    counts = {}
    for line in git(site, pid, "shortlog", "-sne", "--no-merges", "main").splitlines():
        n, who = line.strip().split("\t")
        counts[who.split(" <")[0]] = int(n)
    graph = web.get("/a11yproject/a11yproject.com/-/graphs/main").text
    assert {name: int(n) for name, n in re.findall(r'contributor-name">([^<]+)</b>.*?contributor-commits">(\d+) commit',
                                                    graph, re.S)} == counts
    # a merged merge request is a real merge commit on the target branch
    merged = site.db.execute("SELECT * FROM merge_requests WHERE state = 'merged' LIMIT 1").fetchone()
    parents = git(site, merged["project_id"], "log", "-1", "--format=%P", merged["merge_commit"]).split()
    branch_head = git(site, merged["project_id"], "rev-parse", merged["source_branch"]).strip()
    assert len(parents) == 2 and parents[1] == branch_head
    assert git(site, merged["project_id"], "fsck", "--strict") == ""
    # and the repository clones like any other
    subprocess.run(["git", "clone", "--quiet", str(site.repos.live / f"{pid}.git"), str(tmp_path / "clone")], check=True)
    assert (tmp_path / "clone" / "README.md").read_text() == readme


def test_same_seed_same_forge_other_seed_another(site: Forge) -> None:
    again, other = Forge(seed=0), Forge(seed=1)
    try:
        for forge in (again, other):
            assert forge.repos.branches("1") and forge.db.execute("SELECT COUNT(*) FROM issues").fetchone()[0] > 20
        assert again.repos.branches("3") == site.repos.branches("3")
        assert list(again.db.iterdump()) == list(site.db.iterdump())
        assert other.repos.branches("3") != site.repos.branches("3")
    finally:
        again.close()
        other.close()


def test_repositories_of_dead_forges_are_swept_at_start(tmp_path: Path) -> None:
    import os

    from nodes.browser.sites.forge import _sweep
    dead, alive = tmp_path / "framebus-forge-999999999-abc", tmp_path / f"framebus-forge-{os.getpid()}-abc"
    for folder in (dead, alive):
        (folder / "live").mkdir(parents=True)
    _sweep(tmp_path)
    assert not dead.exists() and alive.exists()


# ---- writing, then resetting ---------------------------------------------------------------------

def test_writes_land_in_git_and_the_database_and_a_reset_undoes_them_under_a_second(web: TestClient,
                                                                                      site: Forge) -> None:
    before = state(site)
    sign_in(web)
    # a file through the web editor: a real commit by the signed-in user
    reply = web.post(f"/{ME}/dotfiles/-/new/main", data={"file_name": "notes/todo.md", "content": "- one\r\n- two\r\n",
                                                          "commit_message": "Add a to-do list", "branch_name": "main"})
    assert reply.status_code == 200 and reply.url.path == f"/{ME}/dotfiles/-/blob/main/notes/todo.md"
    assert git(site, 3, "show", "main:notes/todo.md") == "- one\n- two\n"
    assert git(site, 3, "log", "-1", "--format=%an|%s", "main").strip() == "Byte Blaze|Add a to-do list"
    # merging an open merge request makes a merge commit
    mr = site.db.execute("SELECT r.*, p.namespace, p.path FROM merge_requests r JOIN projects p ON p.id = r.project_id "
                         "WHERE r.state = 'opened' AND p.namespace = ? LIMIT 1", (ME,)).fetchone()
    web.post(f"/{mr['namespace']}/{mr['path']}/-/merge_requests/{mr['iid']}/merge")
    assert "Merge branch" in git(site, mr["project_id"], "log", "-1", "--format=%s", mr["target_branch"])
    assert ">Merged<" in web.get(f"/{mr['namespace']}/{mr['path']}/-/merge_requests/{mr['iid']}").text
    # a new project with a README, a fork, an issue, a comment, a member, a star
    web.post("/projects/new", data={"name": "scratch pad", "namespace": ME, "visibility": "public", "template": "",
                                    "initialize_with_readme": "on"})
    new_id = site.db.execute("SELECT id FROM projects WHERE path = 'scratch-pad'").fetchone()[0]
    assert git(site, new_id, "log", "--format=%s", "main").strip() == "Initial commit"
    assert web.post("/vinta/awesome-python/-/forks", data={}).url.path == f"/{ME}/awesome-python"
    web.post("/a11yproject/a11yproject.com/-/issues/new", data={"title": "404 for many URLs", "due_date": "2030-01-03",
                                                                 "assignee_username": ME})
    web.post("/a11yproject/a11yproject.com/-/issues/1/notes", data={"note": "On it."})
    web.post(f"/{ME}/dotfiles/-/project_members", data={"username": "vinta", "access_level": "10"})
    web.post(f"/{ME}/dotfiles/-/project_members/vinta/update", data={"access_level": "40"})
    assert re.search(r'@vinta</span></td>\s*<td class="col-source">[^<]*</td>\s*<td class="col-max-role"><span '
                     r'class="role-name">Maintainer<', web.get(f"/{ME}/dotfiles/-/project_members").text)
    web.post(f"/{ME}/dotfiles/-/project_members/vinta/remove")
    assert "@vinta<" not in web.get(f"/{ME}/dotfiles/-/project_members").text
    issue = "/a11yproject/a11yproject.com/-/issues/1"
    bug = site.db.execute("SELECT id FROM labels WHERE project_id = 1 AND title = 'bug'").fetchone()[0]
    web.post(f"{issue}/update", data={"field": "labels", f"label_{bug}": "on"})
    web.post(f"{issue}/update", data={"field": "due_date", "due_date": "2030-12-31"})
    page = web.post(f"{issue}/update", data={"field": "assignee", "assignee_username": "Roshan Jossy"}).text
    assert "Dec 31, 2030" in page and "@Roshanjossey" in page and ">bug</span>" in page
    # a branch whose merge request was closed: open a new one for it
    closed = site.db.execute("SELECT r.source_branch, p.path FROM merge_requests r JOIN projects p ON p.id = r.project_id "
                             "WHERE p.namespace = ? AND r.state = 'closed' LIMIT 1", (ME,)).fetchone()
    page = web.post(f"/{ME}/{closed[1]}/-/merge_requests/new", data={
        "merge_request[source_branch]": closed[0], "merge_request[title]": "Try again",
        "merge_request[reviewer_username]": "kilian"}).text
    assert re.search(r'gl-font-monospace source-branch"[^>]*>' + re.escape(closed[0]), page)
    assert re.search(r'class="block reviewer">.*?Kilian Valkhof', page, re.S)
    web.post("/kkroening/ffmpeg-python/-/star")
    assert state(site) != before and site.repos.touched
    # the reset: through the endpoint, as the site node calls it, and timed by the site itself
    started = time.perf_counter()
    reply = web.post("/reset").json()
    assert reply["reset_s"] < 1.0 and time.perf_counter() - started < 1.0, reply
    assert state(site) == before
    assert not (site.repos.live / f"{new_id}.git").exists() and not site.repos.touched
    assert web.get(f"/{ME}/scratch-pad").status_code == 404
    assert web.get(f"/{ME}/dotfiles/-/raw/main/notes/todo.md").status_code == 404


# ---- hostile input ---------------------------------------------------------------------------------

def test_hostile_input_is_refused_with_a_clear_400_and_changes_nothing(web: TestClient, site: Forge) -> None:
    sign_in(web)
    before = state(site)
    huge, nul = "x" * 1_000_000, "bad\x00byte"
    refused = [
        ("/a11yproject/a11yproject.com/-/issues/new", {"title": huge}, "Title is at most 255 characters"),
        ("/a11yproject/a11yproject.com/-/issues/new", {"title": nul}, "Title must not contain NUL bytes"),
        ("/a11yproject/a11yproject.com/-/issues/new", {"title": "ok", "due_date": "3000-99-99"}, "Due date must be a date"),
        ("/a11yproject/a11yproject.com/-/issues/1/notes", {"note": huge}, "Comment is at most 20,000 characters"),
        ("/a11yproject/a11yproject.com/-/issues/1/notes", {"note": nul}, "Comment must not contain NUL bytes"),
        (f"/{ME}/dotfiles/-/new/main", {"file_name": "../../etc/passwd", "content": "x", "branch_name": "main"},
         "must not contain '..'"),
        (f"/{ME}/dotfiles/-/new/main", {"file_name": "a.txt", "content": huge, "branch_name": "main"},
         "Contents are at most 524,288 bytes"),
        (f"/{ME}/dotfiles/-/new/main", {"file_name": "a.txt", "content": "x", "branch_name": "main\x00"},
         "Target Branch must not contain NUL bytes"),
        (f"/{ME}/dotfiles/-/project_members", {"username": "vinta", "access_level": "'; DROP TABLE users; --"},
         "access_level must be one of Guest"),
        (f"/{ME}/dotfiles/-/project_members", {"username": "nobody' OR '1'='1", "access_level": "10"}, "no user"),
        ("/projects/new", {"name": huge}, "Project name is at most 255 characters"),
        ("/projects/new", {"name": "x", "path": "dashboard"}, "is reserved"),
        ("/-/profile", {"name": "Byte Blaze", "status": "s" * 101}, "Your status is at most 100 characters"),
        ("/-/profile", {"name": "Byte Blaze", "website": "javascript:alert(1)"}, "Website url must be a web address"),
        (f"/{ME}/dotfiles/-/labels", {"title": "x", "color": "#12345z"}, "Background color must be"),
    ]
    for path, data, message in refused:
        reply = web.post(path, data=data)
        assert reply.status_code == 400, (path, reply.status_code, reply.text[:300])
        assert message in reply.text.replace("&#39;", "'"), (path, reply.text[:300])
    for query in ("/search?search=" + "w " * 40, "/a11yproject/a11yproject.com/-/issues?search=" + "q" * 500,
                  "/a11yproject/a11yproject.com/-/issues?label_name%5B%5D=" + "l" * 300):
        assert web.get(query).status_code == 400, query
    assert state(site) == before and not site.repos.touched
    # quotes and markup are stored as text and shown escaped, never as markup
    title = "Quote's \"test\" <script>alert(1)</script>"
    page = web.post("/a11yproject/a11yproject.com/-/issues/new", data={"title": title, "description": "<img src=x "
                                                                        "onerror=alert(1)> **bold**"}).text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert "<img src=x" not in page and "<strong>bold</strong>" in page
    assert site.db.execute("SELECT COUNT(*) FROM issues WHERE title = ?", (title,)).fetchone()[0] == 1
    site.reset()
    assert state(site) == before


def test_roles_guard_each_action(web: TestClient, site: Forge) -> None:
    assert web.post("/a11yproject/a11yproject.com/-/issues/1/notes", data={"note": "hi"}).status_code == 401
    sign_in(web)
    # byteblaze is a Developer of a11yproject: may open merge requests, may not invite members
    reply = web.post("/a11yproject/a11yproject.com/-/project_members", data={"username": "vinta", "access_level": "10"})
    assert reply.status_code == 403 and "Maintainer role" in reply.text
    # and may not remove the owner of a personal project, nor demote them
    assert web.post(f"/{ME}/dotfiles/-/project_members/{ME}/remove").status_code == 400
    assert web.post(f"/{ME}/dotfiles/-/project_members/{ME}/update", data={"access_level": "30"}).status_code == 400


# ---- the REST subset --------------------------------------------------------------------------------

def test_rest_api_reads_members_issues_and_merge_requests(web: TestClient, site: Forge) -> None:
    token = site.db.execute("SELECT private_token FROM tokens WHERE username = ?", (ME,)).fetchone()[0]
    auth = {"PRIVATE-TOKEN": token}
    members = web.get(f"/api/v4/projects/{ME}%2Fdotfiles/members/all", headers=auth).json()
    assert {"username": ME, "access_level": 50}.items() <= members[0].items()
    assert web.get("/api/v4/projects/3/members/all", headers=auth).json() == members
    by_page = [m["username"] for m in members]
    assert by_page == re.findall(r'sublabel">@([^<]+)<', web.get(f"/{ME}/dotfiles/-/project_members").text)
    issues = web.get("/api/v4/projects/1/issues?state=all&per_page=100", headers=auth)
    total = site.db.execute("SELECT COUNT(*) FROM issues WHERE project_id = 1").fetchone()[0]
    assert int(issues.headers["X-Total"]) == total == len(issues.json())
    opened = web.get("/api/v4/projects/a11yproject%2Fa11yproject.com/issues?state=opened", headers=auth).json()
    assert opened and all(i["state"] == "opened" for i in opened)
    assert all(i["web_url"].endswith(f"/-/issues/{i['iid']}") for i in opened)
    mrs = web.get("/api/v4/projects/1/merge_requests", headers=auth).json()
    assert {m["state"] for m in mrs} <= {"opened", "merged", "closed"} and all(m["source_branch"] for m in mrs)
    branches = site.repos.branches("1")
    assert all(m["source_branch"] in branches for m in mrs if m["state"] != "merged")
    # a private project: hidden without a token, a wrong token is a 401
    assert web.get(f"/api/v4/projects/{ME}%2Fempathy-prompts/issues").status_code == 404
    assert web.get(f"/api/v4/projects/{ME}%2Fempathy-prompts/issues", headers=auth).status_code == 200
    wrong = web.get("/api/v4/projects/1/issues", headers={"PRIVATE-TOKEN": "glpat-wrong"})
    assert wrong.status_code == 401 and wrong.json() == {"message": "401 Unauthorized"}


# ---- the helper on a live page ------------------------------------------------------------------------

async def test_member_role_helper_reads_a_live_members_page(site: Forge) -> None:
    from playwright.async_api import async_playwright

    helper = REGISTRY.copy()
    members = {r[0]: r[1] for r in site.db.execute("SELECT username, role FROM project_members WHERE project_id = 3")}
    other = next(u for u in sorted(members) if u != ME)
    expected = {10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}[members[other]]
    with serve(site.app()) as base:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                               args=["--no-sandbox", "--disable-gpu"])
            try:
                page = await browser.new_page()
                await page.goto(f"{base}/{ME}/dotfiles/-/project_members")
                services = PlaywrightPageServices(page)
                ctx = HelperContext(services, page.url)

                async def role(name: str) -> Any:
                    return await helper.call(parse_func(f"func:gitlab_get_project_memeber_role(__page__, "
                                                        f"{json.dumps(name)})"), ctx)

                assert await role(ME) == "Owner"
                assert await role(other) == expected
                assert await role("nobody") == ""
                assert await role("x'); alert(1); ('") == ""  # an argument is data, never code
                await page.goto(f"{base}/explore")  # no members table: "" rather than an error
                assert await role(ME) == ""
            finally:
                await browser.close()


# ---- the task set ----------------------------------------------------------------------------------

def test_the_task_file_is_what_the_generator_writes_and_every_task_can_run() -> None:
    assert build(0) == TASKS
    tasks = load_task_file(FILE)
    assert len(tasks) >= 30 and [t.problems() for t in tasks if t.problems()] == []
    assert {k for t in tasks for k in t.eval.eval_types} == {"string_match", "url_match", "program_html"}
    answers = [t.eval.reference_answers for t in tasks if t.eval.reference_answers]
    assert any(a.exact_match for a in answers) and any(a.must_include for a in answers)
    assert any("gitlab_get_project_memeber_role" in target.locator for t in tasks for target in t.eval.program_html)
    changing = [t for t in tasks if "program_html" in t.eval.eval_types]
    assert changing and all(t.require_reset for t in changing)
    for raw in TASKS:  # changes never touch a project the questions ask about
        if raw["require_reset"]:
            assert not any(f"/{name}" in json.dumps([raw["gold_actions"], raw["eval"]]) for name in READ), raw["task_id"]
    for task in TASKS:
        assert task["sites"] == ["gitlab"] and task["gold_actions"][-1].startswith("stop")
        for action in task["gold_actions"]:
            parse_gold(action)


def _subset() -> list[dict[str, Any]]:
    """An exact answer, a must_include answer, a label filter (url_match), a role set through the helper,
    a comment read from #notes-list, an issue checked by three locators, and the same new file twice
    (the second commit only succeeds if the reset between them restored the repository)."""
    def first(pred: Any) -> dict[str, Any]:
        return next(t for t in TASKS if pred(t))

    def refs(t: dict[str, Any]) -> dict[str, Any]:
        return t["eval"]["reference_answers"] or {}

    files = [t for t in TASKS if "links/urls.txt" in t["intent"]]
    assert len(files) == 2
    return [first(lambda t: "exact_match" in refs(t) and "commits does" in t["intent"]),
            first(lambda t: "must_include" in refs(t) and "most commits" in t["intent"]),
            first(lambda t: "label_name" in t["eval"]["reference_url"]),
            first(lambda t: "gitlab_get_project_memeber_role" in json.dumps(t["eval"]) and "Invite" in t["intent"]),
            first(lambda t: "notes-list" in json.dumps(t["eval"]) and "merge request" in t["intent"]),
            first(lambda t: "title_content" in json.dumps(t["eval"])), *files]


def _perturb(task: dict[str, Any]) -> dict[str, Any]:
    """The same task with a gold sequence that goes wrong once: a wrong answer, or its last click dropped."""
    gold = list(task["gold_actions"])
    if task["eval"]["eval_types"] == ["string_match"]:
        gold[-1] = "stop [0]" if gold[-1] != "stop [0]" else "stop [1]"
    else:
        last_click = max(i for i, a in enumerate(gold) if a.startswith("click"))
        del gold[last_click]
    assert gold != task["gold_actions"]
    return {**task, "gold_actions": gold}


# one launch run each (a whole graph with Chromium): on one core under a full suite that is 1-2 minutes
@pytest.mark.timeout(300)
def test_forge_gold_scores_one(tmp_path: Path) -> None:
    subset = _subset()
    gold = run_tasks(GOLD, tmp_path, subset, "gold", timeout=240)
    for task, m in zip(subset, gold):
        assert m["status"] == "completed" and m["success"] == 1.0 and m["failed_checks"] == [], (task["task_id"], m)
        assert m["steps"] == len(task["gold_actions"]), (task["task_id"], m)


@pytest.mark.timeout(300)
def test_forge_perturbed_gold_scores_zero(tmp_path: Path) -> None:
    subset = _subset()
    wrong = run_tasks(GOLD, tmp_path, [_perturb(t) for t in subset], "perturbed", timeout=240)
    for task, m in zip(subset, wrong):
        assert m["status"] == "completed" and m["success"] == 0.0 and m["failed_checks"], (task["task_id"], m)

