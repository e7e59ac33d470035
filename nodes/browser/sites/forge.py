"""Forge: a GitLab-shaped code forge over SQLite and real git repositories (dulwich), on GitLab's URL
shapes, which WebArena's GitLab tasks use: ``/{namespace}/{project}``, ``/-/tree/main``,
``/-/blob/main/README.md``, ``/-/raw/main/...``, ``/-/commits/main``, ``/-/issues/?label_name[]=bug``,
``/-/merge_requests/3``, ``/-/labels``, ``/-/milestones``, ``/-/project_members``, ``/projects/new``,
``/dashboard/projects``, ``/dashboard/issues?assignee_username=...``, ``/dashboard/todos``,
``/explore``, ``/users/{u}/starred``, ``/groups/{g}/-/group_members``, ``/search``, and a small REST
subset under ``/api/v4`` (forge_api.py). The log-in is WebArena's: byteblaze / hello1234.

The project pages live in forge_project.py (routes, labels, milestones, members), forge_repo.py (files,
history, the editor, new projects), forge_issues.py and forge_merge_requests.py; the pages' markup in
forge_templates.py, the shared checks in forge_common.py, the seeded content in forge_data.py and the
repositories in forge_git.py. ``POST /reset`` restores the database from its pristine copy and every repository
written since the last reset from its pristine pack (a few milliseconds each; measured by the tests)."""

from __future__ import annotations

import os
import random
import re
import shutil
import sqlite3
import tempfile
import time
import weakref
from datetime import date, datetime
from pathlib import Path
from typing import Any, Mapping

from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from nodes.browser.sites.forge_api import ApiPages
from nodes.browser.sites.forge_common import (
    NAME_MAX,
    PROJECT_COLUMNS,
    choice,
    find_user,
    group_role,
    group_row,
    namespace_taken,
    query_text,
    role_field,
    stamp,
    text,
    tick,
    user_row,
    valid_path,
    visible_clause,
)
from nodes.browser.sites.forge_data import (
    MAINTAINER,
    ME,
    MY_NAME,
    MY_PASSWORD,
    OWNER,
    ROLES,
    SCHEMA,
    VISIBILITIES,
    Seeder,
    email_of,
)
from nodes.browser.sites.forge_git import Repos
from nodes.browser.sites.forge_project import ProjectPages
from nodes.browser.sites.forge_templates import TEMPLATES
from nodes.browser.sites.framework import Ctx, Handler, Site, page_number, search_words, whole
from nodes.browser.sites.framework import _error_page as framework_error_page

PER_PAGE = 20
MARKDOWN = MarkdownIt("commonmark", {"html": False})  # raw HTML in a README or comment is shown as text
PROJECT_SORTS = {"latest_activity_desc": ("Last updated", "p.last_activity DESC"), "name_asc": ("Name", "p.name COLLATE NOCASE"),
                 "stars_desc": ("Most stars", "stars DESC"), "created_desc": ("Created date", "p.created DESC")}


def _date(value: str | None) -> str:
    """'2023-03-05 14:20' -> 'Mar 5, 2023' (GitLab's date)."""
    if not value:
        return ""
    moment = datetime.strptime(value[:16], "%Y-%m-%d %H:%M")
    return f"{moment:%b} {moment.day}, {moment.year}"


def _day(value: str | None) -> str:
    """'2030-01-03' -> 'Jan 3, 2030'."""
    if not value:
        return ""
    d = date.fromisoformat(value)
    return f"{d:%b} {d.day}, {d.year}"


def _gitdate(moment: datetime) -> str:
    return f"{moment:%b} {moment.day}, {moment.year} {moment:%H:%M}"


def _website(url: str) -> str:
    return re.sub(r"^https?://", "", url).rstrip("/")


async def _forge_error(request: Request, exc: HTTPException) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"message": str(exc.detail)}, status_code=exc.status_code)
    return await framework_error_page(request, exc)


def _sweep(parent: Path) -> None:
    """Remove the repositories of forges whose process is gone (a server killed with SIGKILL, as the
    site node's children are when it dies, never runs its own cleanup)."""
    for old in parent.glob("framebus-forge-*-*"):
        pid = old.name.split("-")[2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except PermissionError:  # alive, someone else's
            pass


def _cleanup(repos: Repos, root: Path) -> None:
    repos.close()
    shutil.rmtree(root, ignore_errors=True)


class Forge(ProjectPages, ApiPages, Site):
    name = "forge"
    schema = SCHEMA
    templates_source = TEMPLATES
    default_size = 12  # projects (the curated ones first; more are generated)
    login_path = "/users/sign_in"
    accounts = ((ME, email_of(ME), MY_PASSWORD, MY_NAME),)

    def __init__(self, seed: int = 0, size: int | None = None, links: Mapping[str, str] | None = None) -> None:
        shm = Path("/dev/shm")  # memory-backed where there is one: resets copy files
        parent = shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())
        _sweep(parent)
        self.root = Path(tempfile.mkdtemp(prefix=f"framebus-forge-{os.getpid()}-", dir=parent))
        self.repos = Repos(self.root)
        self._finalizer = weakref.finalize(self, _cleanup, self.repos, self.root)
        super().__init__(seed, size, links)
        started = time.perf_counter()
        self.repos.freeze()
        self.build_s += time.perf_counter() - started
        self.templates.filters.update(date=_date, day=_day, gitdate=_gitdate, website=_website,
                                      md=lambda text: Markup(MARKDOWN.render(text or "")))

    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        db.row_factory = sqlite3.Row
        Seeder(db, self.repos, rng, self.seed).build(self.size)
        db.row_factory = None

    def reset(self) -> float:
        """The database and every repository written since the last reset, back to the seeded state."""
        started = time.perf_counter()
        with self.lock:
            self.pristine.backup(self.db)
            self.repos.restore()
        return time.perf_counter() - started

    def close(self) -> None:
        """Remove the repositories now (they are also removed when the site is collected or the process exits)."""
        self._finalizer()

    def app(self) -> Starlette:
        """The framework's app; API paths answer errors in GitLab's JSON shape instead of an HTML page."""
        app = super().app()
        app.add_exception_handler(HTTPException, _forge_error)  # type: ignore[arg-type]
        return app

    # ---- rendering ------------------------------------------------------------------------------
    def names(self, ctx: Ctx) -> dict[str, str]:
        return {row[0]: row[1] for row in ctx.db.execute("SELECT username, name FROM users")}

    def show(self, ctx: Ctx, template: str, title: str, project: sqlite3.Row | None = None, status: int = 200,
             **values: Any) -> Response:
        base = f"/{project['namespace']}/{project['path']}" if project is not None else ""
        return ctx.render(template, status=status, title=title, project=project, base=base, names=self.names(ctx),
                          roles=list(ROLES.items()), **values)

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        site = [("/", self.home, ["GET"]),
                ("/users/sign_in", self.sign_in, ["GET", "POST"]), ("/users/sign_out", self.sign_out, ["GET", "POST"]),
                ("/dashboard/projects", self.my_projects, ["GET"]),
                ("/dashboard/projects/starred", self.my_starred, ["GET"]),
                ("/dashboard/groups", self.my_groups, ["GET"]),
                ("/dashboard/issues", self.dashboard_issues, ["GET"]),
                ("/dashboard/merge_requests", self.dashboard_mrs, ["GET"]),
                ("/dashboard/todos", self.todos, ["GET"]),
                ("/dashboard/todos/{todo_id:int}/mark_as_done", self.todo_done, ["POST"]),
                ("/explore", self.explore, ["GET"]), ("/explore/projects", self.explore, ["GET"]),
                ("/explore/projects/starred", self.explore_starred, ["GET"]),
                ("/explore/groups", self.explore_groups, ["GET"]),
                ("/search", self.search, ["GET"]),
                ("/projects/new", self.new_project, ["GET", "POST"]),
                ("/groups/new", self.new_group, ["GET", "POST"]),
                ("/groups/{group}", lambda ctx: ctx.redirect(f"/{ctx.path['group']}"), ["GET"]),
                ("/groups/{group}/-/group_members", self.group_members, ["GET", "POST"]),
                ("/groups/{group}/-/group_members/{username}/update", self.group_member_update, ["POST"]),
                ("/groups/{group}/-/group_members/{username}/remove", self.group_member_remove, ["POST"]),
                ("/users/{username}/starred", self.user_starred, ["GET"]),
                ("/users/{username}/following", self.user_following, ["GET"]),
                ("/users/{username}/followers", self.user_followers, ["GET"]),
                ("/users/{username}/follow", self.follow, ["POST"]),
                ("/users/{username}/unfollow", self.unfollow, ["POST"]),
                ("/-/profile", self.edit_profile, ["GET", "POST"]),
                ("/-/profile/personal_access_tokens", self.access_tokens, ["GET"])]
        return [*site, *self.api_pages(), *self.project_pages(), ("/{ns}", self.namespace, ["GET"])]

    # ---- accounts ---------------------------------------------------------------------------------
    def home(self, ctx: Ctx) -> Response:
        return ctx.redirect("/dashboard/projects" if ctx.user else "/explore")

    def sign_in(self, ctx: Ctx) -> Response:
        if ctx.request.method == "GET":
            return self.show(ctx, "login.html", "Sign in", error=None)
        login = text(ctx, "user[login]", NAME_MAX, label="Username or email")
        password = text(ctx, "user[password]", NAME_MAX, label="Password", strip=False)
        user = self.check_login(ctx.db, login, password)
        if user is None:
            return self.show(ctx, "login.html", "Sign in", status=401, error="Invalid login or password.")
        ctx.log_in(user)
        target = ctx.query.get("redirect_to", "")
        return ctx.redirect(target if target.startswith("/") and not target.startswith("//") else "/")

    def sign_out(self, ctx: Ctx) -> Response:
        ctx.log_out()
        return ctx.redirect("/users/sign_in")

    def edit_profile(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        row = user_row(ctx.db, user)
        if ctx.request.method == "GET":
            return self.show(ctx, "edit_profile.html", "Edit Profile", u=row, error=None)
        name = text(ctx, "name", NAME_MAX, required=True, label="Full name")
        status = text(ctx, "status", 100, label="Your status")
        website = text(ctx, "website", 255, label="Website url")
        if website and not re.match(r"^https?://", website):
            website = "https://" + website
        if website and not re.match(r"^https?://[^\s/?#<>\"']+\.[^\s/?#<>\"']+(/[^\s<>\"']*)?$", website):
            raise HTTPException(400, f"Website url must be a web address like https://example.com, got {website[:80]!r}")
        ctx.db.execute("UPDATE users SET name = ?, status = ?, website = ?, location = ?, bio = ? WHERE username = ?",
                       (name, status, website, text(ctx, "location", 255, label="Location"),
                        text(ctx, "bio", 255, label="Bio"), user))
        return ctx.redirect(f"/{user}")

    def access_tokens(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        return self.show(ctx, "tokens.html", "Personal Access Tokens",
                         t=ctx.db.execute("SELECT * FROM tokens WHERE username = ?", (user,)).fetchone())

    # ---- lists of projects --------------------------------------------------------------------------
    def _projects(self, ctx: Ctx, heading: str, where: str, args: list[Any], active: str,
                  default_sort: str = "latest_activity_desc") -> Response:
        visible, vargs = visible_clause(ctx.user)
        name = query_text(ctx, "name")
        sort = ctx.query.get("sort", "") or default_sort
        order = PROJECT_SORTS.get(sort, PROJECT_SORTS[default_sort])[1]
        words = search_words(name, "name")
        match = "".join(" AND (p.name LIKE ? OR p.path LIKE ? OR p.description LIKE ?)" for _ in words)
        margs = [v for w in words for v in (f"%{w}%",) * 3]
        rows = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE {visible} AND {where}{match} "
                              f"ORDER BY {order}, p.id LIMIT 200", [*vargs, *args, *margs]).fetchall()
        tabs = [("Yours", "/dashboard/projects"), ("Starred", "/dashboard/projects/starred")] if ctx.user else []
        tabs += [("Explore projects", "/explore/projects"), ("Most starred", "/explore/projects/starred")]
        return self.show(ctx, "projects.html", heading, heading=heading, projects=rows, tabs=tabs, active=active,
                         name=name, sort=sort if sort in PROJECT_SORTS else "",
                         sorts=[(k, v[0]) for k, v in PROJECT_SORTS.items()])

    def my_projects(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        return self._projects(ctx, "Projects", "(EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = p.id "
                              "AND m.username = ?) OR EXISTS (SELECT 1 FROM group_members g WHERE g.group_path = "
                              "p.namespace AND g.username = ?))", [user, user], "/dashboard/projects")

    def my_starred(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        return self._projects(ctx, "Starred projects", "EXISTS (SELECT 1 FROM stars s WHERE s.project_id = p.id AND "
                              "s.username = ?)", [user], "/dashboard/projects/starred")

    def explore(self, ctx: Ctx) -> Response:
        return self._projects(ctx, "Explore projects", "1 = 1", [], "/explore/projects")

    def explore_starred(self, ctx: Ctx) -> Response:
        return self._projects(ctx, "Explore projects", "1 = 1", [], "/explore/projects/starred", "stars_desc")

    def my_groups(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        return self.show(ctx, "groups.html", "Groups", groups=ctx.db.execute(
            "SELECT g.* FROM forge_groups g JOIN group_members m ON m.group_path = g.path WHERE m.username = ? "
            "ORDER BY g.name", (user,)).fetchall())

    def explore_groups(self, ctx: Ctx) -> Response:
        where = "1 = 1" if ctx.user else "visibility = 'public'"
        return self.show(ctx, "groups.html", "Groups", groups=ctx.db.execute(
            f"SELECT * FROM forge_groups WHERE {where} ORDER BY name").fetchall())

    # ---- dashboards ---------------------------------------------------------------------------------
    def dashboard_issues(self, ctx: Ctx) -> Response:
        if not any(ctx.query.get(k) for k in ("assignee_username", "author_username", "search")) \
                and not ctx.query.getlist("label_name[]"):
            ctx.need_user()
        return self.issue_list(ctx, None)

    def dashboard_mrs(self, ctx: Ctx) -> Response:
        if not any(ctx.query.get(k) for k in ("assignee_username", "author_username", "reviewer_username", "search")):
            ctx.need_user()
        return self.mr_list(ctx, None)

    def todos(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        state = "done" if ctx.query.get("state") == "done" else "pending"
        rows = ctx.db.execute("SELECT * FROM todos WHERE username = ? AND state = ? ORDER BY created DESC, id DESC",
                              (user, state)).fetchall()
        todos = []
        for t in rows:
            p = ctx.db.execute("SELECT namespace, path FROM projects WHERE id = ?", (t["project_id"],)).fetchone()
            table, mark, kind = (("issues", "#", "issues") if t["target_type"] == "Issue" else
                                 ("merge_requests", "!", "merge_requests"))
            target = ctx.db.execute(f"SELECT iid, title FROM {table} WHERE id = ?", (t["target_id"],)).fetchone()
            if p is None or target is None:
                continue
            todos.append({**dict(t), "project": f"{p['namespace']} / {p['path']}", "title": target["title"],
                          "ref": f"{mark}{target['iid']}",
                          "url": f"/{p['namespace']}/{p['path']}/-/{kind}/{target['iid']}"})
        counts = {s: ctx.db.execute("SELECT COUNT(*) FROM todos WHERE username = ? AND state = ?", (user, s)).fetchone()[0]
                  for s in ("pending", "done")}
        return self.show(ctx, "todos.html", "To-Do List", todos=todos, state=state, counts=counts)

    def todo_done(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        cur = ctx.db.execute("UPDATE todos SET state = 'done' WHERE id = ? AND username = ?", (ctx.path["todo_id"], user))
        if not cur.rowcount:
            raise HTTPException(404, f"no to-do item {ctx.path['todo_id']} of yours")
        return ctx.redirect("/dashboard/todos")

    # ---- search ---------------------------------------------------------------------------------------
    def search(self, ctx: Ctx) -> Response:
        q = query_text(ctx, "search")
        words = search_words(q, "search")
        scope = ctx.query.get("scope", "projects")
        scopes = [("projects", "Projects"), ("issues", "Issues"), ("merge_requests", "Merge requests"), ("users", "Users")]
        if scope not in dict(scopes):
            raise HTTPException(400, f"scope must be one of {', '.join(k for k, _ in scopes)}, got {scope[:40]!r}")
        visible, vargs = visible_clause(ctx.user)
        project_id = ctx.query.get("project_id", "")
        pfilter, pargs = ("", []) if not project_id else (" AND p.id = ?", [whole(project_id, "project_id")])

        def like(columns: tuple[str, ...]) -> tuple[str, list[Any]]:
            if not words:
                return "0 = 1", []
            clause = " AND ".join("(" + " OR ".join(f"{c} LIKE ?" for c in columns) + ")" for _ in words)
            return clause, [f"%{w}%" for w in words for _ in columns]

        queries = {
            "projects": ("SELECT p.namespace, p.path, p.name, p.description FROM projects p WHERE {v} AND {m}{f} "
                         "ORDER BY p.name COLLATE NOCASE", ("p.name", "p.path", "p.description")),
            "issues": ("SELECT i.iid, i.title, i.description, i.state, p.namespace, p.path FROM issues i JOIN projects p "
                       "ON p.id = i.project_id WHERE {v} AND {m}{f} ORDER BY i.created DESC", ("i.title", "i.description")),
            "merge_requests": ("SELECT r.iid, r.title, r.description, r.state, p.namespace, p.path FROM merge_requests r "
                               "JOIN projects p ON p.id = r.project_id WHERE {v} AND {m}{f} ORDER BY r.created DESC",
                               ("r.title", "r.description")),
        }
        counts: dict[str, int] = {}
        results: list[dict[str, str]] = []
        for key, (sql, columns) in queries.items():
            m, margs = like(columns)
            rows = ctx.db.execute(sql.format(v=visible, m=m, f=pfilter), [*vargs, *margs, *pargs]).fetchall()
            counts[key] = len(rows)
            if key == scope:
                for r in rows[:100]:
                    if key == "projects":
                        results.append({"url": f"/{r['namespace']}/{r['path']}", "title": f"{r['namespace']} / {r['name']}",
                                        "where": "", "text": r["description"]})
                    else:
                        mark, kind = ("#", "issues") if key == "issues" else ("!", "merge_requests")
                        results.append({"url": f"/{r['namespace']}/{r['path']}/-/{kind}/{r['iid']}", "title": r["title"],
                                        "where": f"{r['namespace']}/{r['path']}{mark}{r['iid']} · {r['state']}",
                                        "text": r["description"][:200]})
        m, margs = like(("username", "name"))
        users = ctx.db.execute(f"SELECT username, name FROM users WHERE {m} ORDER BY username", margs).fetchall()
        counts["users"] = len(users)
        if scope == "users":
            results = [{"url": f"/{u['username']}", "title": u["name"], "where": f"@{u['username']}", "text": ""}
                       for u in users]
        return self.show(ctx, "search.html", "Search", q=q, scope=scope, scopes=scopes, counts=counts, results=results)

    # ---- creating projects and groups ---------------------------------------------------------------
    def creatable_namespaces(self, ctx: Ctx, user: str) -> list[str]:
        groups = [r[0] for r in ctx.db.execute("SELECT group_path FROM group_members WHERE username = ? AND role >= ? "
                                               "ORDER BY group_path", (user, MAINTAINER))]
        return [user, *groups]

    def new_group(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        if ctx.request.method == "GET":
            return self.show(ctx, "group_new.html", "New group", visibilities=VISIBILITIES, error=None)
        name = text(ctx, "name", NAME_MAX, required=True, label="Group name")
        path = text(ctx, "path", 100, label="Group URL") or re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
        path = valid_path(path, "Group URL")
        visibility = choice(ctx, "visibility", VISIBILITIES, "private", "Visibility level")
        if namespace_taken(ctx.db, path):
            return self.show(ctx, "group_new.html", "New group", status=400, visibilities=VISIBILITIES,
                             error=f"The path {path!r} has already been taken.")
        ctx.db.execute("INSERT INTO forge_groups VALUES (?, ?, ?, ?, ?)",
                       (path, name, text(ctx, "description", 500, label="Description"), visibility, stamp(tick(ctx))))
        ctx.db.execute("INSERT INTO group_members VALUES (?, ?, ?)", (path, user, OWNER))
        return ctx.redirect(f"/{path}")

    # ---- people, groups, namespaces -------------------------------------------------------------------
    def namespace(self, ctx: Ctx) -> Response:
        ns = ctx.path["ns"]
        u = user_row(ctx.db, ns)
        visible, vargs = visible_clause(ctx.user)
        if u is not None:
            if u["username"] != ns:
                return ctx.redirect(f"/{u['username']}")
            projects = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.namespace = ? AND {visible} "
                                      "ORDER BY p.last_activity DESC", [ns, *vargs]).fetchall()
            groups = ctx.db.execute("SELECT g.* FROM forge_groups g JOIN group_members m ON m.group_path = g.path "
                                    "WHERE m.username = ? ORDER BY g.name", (ns,)).fetchall()
            count = ctx.db.execute("SELECT (SELECT COUNT(*) FROM follows WHERE followee = ?), (SELECT COUNT(*) FROM "
                                   "follows WHERE follower = ?)", (ns, ns)).fetchone()
            i_follow = bool(ctx.user and ctx.db.execute("SELECT 1 FROM follows WHERE follower = ? AND followee = ?",
                                                        (ctx.user, ns)).fetchone())
            return self.show(ctx, "profile.html", u["name"], u=u, projects=projects, groups=groups,
                             followers=count[0], following=count[1], i_follow=i_follow)
        g = group_row(ctx.db, ns)
        if g is None or (g["visibility"] == "private" and not group_role(ctx.db, g["path"], ctx.user)):
            raise HTTPException(404, f"no user or group {ns[:80]!r}")
        if g["path"] != ns:
            return ctx.redirect(f"/{g['path']}")
        projects = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.namespace = ? AND {visible} "
                                  "ORDER BY p.name COLLATE NOCASE", [ns, *vargs]).fetchall()
        n = ctx.db.execute("SELECT COUNT(*) FROM group_members WHERE group_path = ?", (ns,)).fetchone()[0]
        return self.show(ctx, "group.html", g["name"], g=g, projects=projects, n_members=n,
                         can_create=group_role(ctx.db, ns, ctx.user) >= MAINTAINER)

    def _user(self, ctx: Ctx) -> sqlite3.Row:
        row = user_row(ctx.db, ctx.path["username"])
        if row is None:
            raise HTTPException(404, f"no user {ctx.path['username'][:80]!r}")
        return row

    def user_starred(self, ctx: Ctx) -> Response:
        u = self._user(ctx)
        visible, vargs = visible_clause(ctx.user)
        rows = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p JOIN stars s ON s.project_id = p.id WHERE "
                              f"s.username = ? AND {visible} ORDER BY p.name COLLATE NOCASE",
                              [u["username"], *vargs]).fetchall()
        return self.show(ctx, "starred.html", f"{u['name']} · Starred", heading=f"{u['name']}'s starred projects",
                         projects=rows)

    def _people(self, ctx: Ctx, title: str, sql: str) -> Response:
        u = self._user(ctx)
        rows = ctx.db.execute(sql, (u["username"],)).fetchall()
        return self.show(ctx, "people.html", f"{u['name']} · {title}", heading=f"{u['name']} · {title}", people=rows)

    def user_following(self, ctx: Ctx) -> Response:
        return self._people(ctx, "Following", "SELECT u.* FROM follows f JOIN users u ON u.username = f.followee "
                            "WHERE f.follower = ? ORDER BY u.username COLLATE NOCASE")

    def user_followers(self, ctx: Ctx) -> Response:
        return self._people(ctx, "Followers", "SELECT u.* FROM follows f JOIN users u ON u.username = f.follower "
                            "WHERE f.followee = ? ORDER BY u.username COLLATE NOCASE")

    def follow(self, ctx: Ctx) -> Response:
        user, u = ctx.need_user(), self._user(ctx)
        if u["username"] == user:
            raise HTTPException(400, "you cannot follow yourself")
        ctx.db.execute("INSERT OR IGNORE INTO follows VALUES (?, ?)", (user, u["username"]))
        return ctx.redirect(f"/{u['username']}")

    def unfollow(self, ctx: Ctx) -> Response:
        user, u = ctx.need_user(), self._user(ctx)
        ctx.db.execute("DELETE FROM follows WHERE follower = ? AND followee = ?", (user, u["username"]))
        return ctx.redirect(f"/{u['username']}")

    # ---- group members ----------------------------------------------------------------------------------
    def _group(self, ctx: Ctx) -> sqlite3.Row:
        g = group_row(ctx.db, ctx.path["group"])
        if g is None or (g["visibility"] == "private" and not group_role(ctx.db, g["path"], ctx.user)):
            raise HTTPException(404, f"no group {ctx.path['group'][:80]!r}")
        return g

    def group_member_rows(self, ctx: Ctx, group: str) -> list[dict[str, Any]]:
        rows = ctx.db.execute("SELECT m.username, m.role, u.name FROM group_members m JOIN users u ON "
                              "u.username = m.username WHERE m.group_path = ? ORDER BY m.role DESC, "
                              "m.username COLLATE NOCASE", (group,)).fetchall()
        return [{"username": r["username"], "name": r["name"], "role": r["role"], "role_name": ROLES[r["role"]],
                 "source": "Direct member", "expires": "", "direct": True} for r in rows]

    def group_members(self, ctx: Ctx) -> Response:
        g = self._group(ctx)
        action = f"/groups/{g['path']}/-/group_members"
        if ctx.request.method == "POST":
            user = ctx.need_user()
            mine = group_role(ctx.db, g["path"], user)
            if mine < MAINTAINER:
                raise HTTPException(403, f"inviting members to {g['path']} needs the Maintainer role or higher")
            level = role_field(ctx)
            if level > mine:
                raise HTTPException(403, f"a {ROLES[mine]} cannot give the {ROLES[level]} role")
            for who in self.invitees(ctx):  # inviting a member again raises their role, never lowers it
                ctx.db.execute("INSERT INTO group_members VALUES (?, ?, ?) ON CONFLICT (group_path, username) DO "
                               "UPDATE SET role = MAX(role, excluded.role)", (g["path"], who, level))
            return ctx.redirect(action)
        editable = group_role(ctx.db, g["path"], ctx.user) >= MAINTAINER
        return self.show(ctx, "members.html", f"{g['name']} · Group members", heading="Group members",
                         what=f"the group {g['name']}", rows=self.group_member_rows(ctx, g["path"]), editable=editable,
                         action_base=action, error=None)

    def group_member_update(self, ctx: Ctx) -> Response:
        g, user = self._group(ctx), ctx.need_user()
        mine = group_role(ctx.db, g["path"], user)
        level = role_field(ctx)
        target = ctx.path["username"]
        current = group_role(ctx.db, g["path"], target)
        if mine < MAINTAINER or max(level, current) > mine:
            raise HTTPException(403, f"your role in {g['path']} ({ROLES.get(mine, 'none')}) cannot make this change")
        if not current:
            raise HTTPException(404, f"{target[:80]!r} is not a member of {g['path']}")
        self._keep_an_owner(ctx, "group_members", "group_path", g["path"], target, level)
        ctx.db.execute("UPDATE group_members SET role = ? WHERE group_path = ? AND username = ?", (level, g["path"], target))
        return ctx.redirect(f"/groups/{g['path']}/-/group_members")

    def group_member_remove(self, ctx: Ctx) -> Response:
        g, user = self._group(ctx), ctx.need_user()
        mine, target = group_role(ctx.db, g["path"], user), ctx.path["username"]
        current = group_role(ctx.db, g["path"], target)
        if mine < MAINTAINER or current > mine:
            raise HTTPException(403, f"your role in {g['path']} ({ROLES.get(mine, 'none')}) cannot remove {target[:80]!r}")
        if not current:
            raise HTTPException(404, f"{target[:80]!r} is not a member of {g['path']}")
        self._keep_an_owner(ctx, "group_members", "group_path", g["path"], target, 0)
        ctx.db.execute("DELETE FROM group_members WHERE group_path = ? AND username = ?", (g["path"], target))
        return ctx.redirect(f"/groups/{g['path']}/-/group_members")

    def _keep_an_owner(self, ctx: Ctx, table: str, column: str, key: Any, target: str, level: int) -> None:
        """A change that would leave no Owner is refused (the last Owner stays)."""
        owners = [r[0] for r in ctx.db.execute(f"SELECT username FROM {table} WHERE {column} = ? AND role = ?",
                                               (key, OWNER))]
        if owners == [target] and level < OWNER:
            raise HTTPException(400, f"{target} is the last Owner; make someone else Owner first")

    def invitees(self, ctx: Ctx) -> list[str]:
        """The users named in the invite form's ``username`` field (several, separated by commas or spaces)."""
        raw = text(ctx, "username", 1000, required=True, label="Username or email address")
        names = [n for n in re.split(r"[,\s]+", raw) if n]
        if len(names) > 20:
            raise HTTPException(400, "invite at most 20 people at a time")
        if len(names) > 1 and not all(user_row(ctx.db, n) or "@" in n for n in names):
            names = [raw]  # a full name with spaces ("Vinta Chen")
        return [find_user(ctx.db, n, "Username or email address")["username"] for n in names]

    def page_of(self, ctx: Ctx) -> int:
        return page_number(ctx, "page")
