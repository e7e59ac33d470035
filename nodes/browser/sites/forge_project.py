"""The code forge's project pages: overview, files, commits, branches, contributors, issues, merge
requests, labels, milestones, members, stars, forks and the web editor; and project creation.

A mixin of ``forge.Forge``: every handler reads the project of the URL through ``project_row`` (a 404
for a project the reader may not see), checks the role an action needs, validates every field, and
only then writes: git last, after the database rows are in place, so a refused request changes
nothing and a reset restores whatever a request did."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites.forge_common import (
    MESSAGE_MAX,
    NAME_MAX,
    TEXT_MAX,
    TITLE_MAX,
    can_see,
    choice,
    day,
    find_user,
    group_row,
    may_triage,
    need_role,
    project_role,
    project_row,
    query_text,
    role_field,
    stamp,
    text,
    tick,
    valid_branch,
    valid_path,
    visible_clause,
)
from nodes.browser.sites.forge_data import (
    DEVELOPER,
    MAINTAINER,
    OWNER,
    REPORTER,
    ROLES,
    VISIBILITIES,
    epoch,
)
from nodes.browser.sites.forge_git import MAX_SHOWN_BYTES, GitError, clean_path
from nodes.browser.sites.framework import Ctx, Handler, search_words, whole

if TYPE_CHECKING:
    from nodes.browser.sites.forge import Forge

PER_PAGE = 20
COMMITS_PER_PAGE = 40
ISSUE_SORTS = {"created_date": ("Created date", "i.created DESC"), "created_asc": ("Oldest created", "i.created ASC"),
               "updated_desc": ("Updated date", "i.updated DESC"), "updated_asc": ("Oldest updated", "i.updated ASC"),
               "due_date": ("Due date", "CASE WHEN i.due_date = '' THEN 1 ELSE 0 END, i.due_date ASC"),
               "title_asc": ("Title", "i.title COLLATE NOCASE ASC")}
VISIBILITY_WORDS = {"private": "Project access must be granted explicitly to each user.",
                    "internal": "The project can be accessed by any logged in user.",
                    "public": "The project can be accessed without any authentication."}
TEMPLATES = {
    "Android": {"app/src/main/AndroidManifest.xml": b"<manifest package=\"com.example.app\"/>\n",
                "build.gradle": b"plugins { id 'com.android.application' }\n"},
    "NodeJS Express": {"app.js": b"const express = require('express');\nconst app = express();\napp.listen(3000);\n",
                       "package.json": b"{\n  \"name\": \"app\",\n  \"dependencies\": {\"express\": \"^4\"}\n}\n"},
    "Ruby on Rails": {"Gemfile": b"source 'https://rubygems.org'\ngem 'rails'\n", "config/routes.rb": b"Rails.application.routes.draw do\nend\n"},
    "Spring": {"pom.xml": b"<project><artifactId>demo</artifactId></project>\n"},
    "iOS (Swift)": {"App/AppDelegate.swift": b"import UIKit\n"},
}
COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")


class ProjectPages:
    """Mixed into Forge (which provides show, names, invitees, repos and the framework's Site)."""

    def project_pages(self: Forge) -> list[tuple[str, Handler, list[str]]]:
        P = "/{ns}/{project}"
        return [
            (P, self.overview, ["GET"]),
            (P + "/-/star", self.star, ["POST"]), (P + "/-/starrers", self.starrers, ["GET"]),
            (P + "/-/forks/new", self.fork_form, ["GET"]), (P + "/-/forks", self.fork, ["POST"]),
            (P + "/-/tree", self.tree, ["GET"]), (P + "/-/tree/{rest:path}", self.tree, ["GET"]),
            (P + "/-/blob/{rest:path}", self.blob, ["GET"]), (P + "/-/raw/{rest:path}", self.raw, ["GET"]),
            (P + "/-/new/{rest:path}", self.new_file, ["GET", "POST"]),
            (P + "/-/edit/{rest:path}", self.edit_file, ["GET", "POST"]),
            (P + "/-/commits", self.commits, ["GET"]), (P + "/-/commits/{rest:path}", self.commits, ["GET"]),
            (P + "/-/commit/{sha}", self.commit, ["GET"]),
            (P + "/-/branches", self.branches, ["GET"]),
            (P + "/-/graphs/{rest:path}", self.contributors, ["GET"]),
            (P + "/-/issues", self.issues, ["GET"]), (P + "/-/issues/", self.issues, ["GET"]),
            (P + "/-/issues/new", self.new_issue, ["GET", "POST"]),
            (P + "/-/issues/{iid:int}", self.issue, ["GET"]),
            (P + "/-/issues/{iid:int}/notes", self.issue_note, ["POST"]),
            (P + "/-/issues/{iid:int}/close", self.issue_close, ["POST"]),
            (P + "/-/issues/{iid:int}/reopen", self.issue_reopen, ["POST"]),
            (P + "/-/issues/{iid:int}/update", self.issue_update, ["POST"]),
            (P + "/-/merge_requests", self.mrs, ["GET"]), (P + "/-/merge_requests/", self.mrs, ["GET"]),
            (P + "/-/merge_requests/new", self.new_mr, ["GET", "POST"]),
            (P + "/-/merge_requests/{iid:int}", self.mr, ["GET"]),
            (P + "/-/merge_requests/{iid:int}/notes", self.mr_note, ["POST"]),
            (P + "/-/merge_requests/{iid:int}/merge", self.mr_merge, ["POST"]),
            (P + "/-/merge_requests/{iid:int}/close", self.mr_close, ["POST"]),
            (P + "/-/merge_requests/{iid:int}/reopen", self.mr_reopen, ["POST"]),
            (P + "/-/merge_requests/{iid:int}/update", self.mr_update, ["POST"]),
            (P + "/-/labels", self.labels, ["GET", "POST"]), (P + "/-/labels/new", self.label_form, ["GET"]),
            (P + "/-/milestones", self.milestones, ["GET"]),
            (P + "/-/milestones/new", self.new_milestone, ["GET", "POST"]),
            (P + "/-/milestones/{iid:int}", self.milestone, ["GET"]),
            (P + "/-/project_members", self.members, ["GET", "POST"]),
            (P + "/-/project_members/{username}/update", self.member_update, ["POST"]),
            (P + "/-/project_members/{username}/remove", self.member_remove, ["POST"]),
        ]

    # ---- overview, stars, forks ---------------------------------------------------------------------
    def overview(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        empty = self.repos.is_empty(key)
        branch = p["default_branch"]
        values: dict[str, Any] = {"empty": empty, "branches": list(self.repos.branches(key)), "readme": None,
                                  "readme_name": "", "entries": [], "path": "", "ref": branch, "last": None,
                                  "n_commits": 0}
        if not empty:
            values["entries"] = self.repos.list_tree(key, branch) or []
            values["last"] = self.repos.commit_info(key, branch)
            values["n_commits"] = len(self.repos.log(key, branch))
            for e in values["entries"]:
                if not e.is_dir and e.name.lower() in ("readme.md", "readme", "readme.txt"):
                    data = self.repos.read(key, branch, e.path) or b""
                    values["readme"] = data[:MAX_SHOWN_BYTES].decode("utf-8", "replace")
                    values["readme_name"] = e.name
                    break
        host = ctx.request.url.hostname or "localhost"
        fork_of = ctx.db.execute("SELECT namespace, path FROM projects WHERE id = ?", (p["forked_from"],)).fetchone() \
            if p["forked_from"] else None
        starred = bool(ctx.user and ctx.db.execute("SELECT 1 FROM stars WHERE username = ? AND project_id = ?",
                                                   (ctx.user, p["id"])).fetchone())
        return self.show(ctx, "project.html", f"{p['namespace']} / {p['name']}", project=p, starred=starred,
                         fork_of=fork_of, can_push=project_role(ctx.db, p, ctx.user) >= DEVELOPER,
                         visibility_title=f"{p['visibility'].capitalize()} - {VISIBILITY_WORDS[p['visibility']]}",
                         ssh_url=f"ssh://git@{host}:2222/{p['namespace']}/{p['path']}.git",
                         http_url=f"{str(ctx.request.base_url).rstrip('/')}/{p['namespace']}/{p['path']}.git", **values)

    def star(self: Forge, ctx: Ctx) -> Response:
        user, p = ctx.need_user(), project_row(ctx)
        if not ctx.db.execute("DELETE FROM stars WHERE username = ? AND project_id = ?", (user, p["id"])).rowcount:
            ctx.db.execute("INSERT INTO stars VALUES (?, ?)", (user, p["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}")

    def starrers(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        people = ctx.db.execute("SELECT u.* FROM stars s JOIN users u ON u.username = s.username WHERE s.project_id = ? "
                                "ORDER BY u.username COLLATE NOCASE", (p["id"],)).fetchall()
        return self.show(ctx, "starrers.html", "Starrers", project=p, people=people)

    def fork_form(self: Forge, ctx: Ctx) -> Response:
        ctx.need_user()
        return self.show(ctx, "fork.html", "Fork project", project=project_row(ctx), error=None)

    def fork(self: Forge, ctx: Ctx) -> Response:
        user, p = ctx.need_user(), project_row(ctx)
        name = text(ctx, "name", NAME_MAX, label="Project name") or p["name"]
        path = valid_path(text(ctx, "path", 100, label="Project slug") or p["path"], "Project slug")
        if ctx.db.execute("SELECT 1 FROM projects WHERE namespace = ? AND path = ?", (user, path)).fetchone():
            return self.show(ctx, "fork.html", "Fork project", project=p, status=400,
                             error=f"{user}/{path} already exists; pick another slug.")
        now = stamp(tick(ctx))
        cur = ctx.db.execute("INSERT INTO projects (namespace, path, name, description, visibility, default_branch, "
                             "base_stars, forked_from, created, last_activity) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)",
                             (user, path, name, p["description"], p["visibility"], p["default_branch"], p["id"], now, now))
        new_id = int(cur.lastrowid or 0)
        ctx.db.execute("INSERT INTO project_members VALUES (?, ?, ?, '')", (new_id, user, OWNER))
        ctx.db.execute("INSERT INTO labels (project_id, title, color, description) SELECT ?, title, color, description "
                       "FROM labels WHERE project_id = ?", (new_id, p["id"]))
        self.repos.fork(str(p["id"]), str(new_id))
        return ctx.redirect(f"/{user}/{path}")

    # ---- files ----------------------------------------------------------------------------------------
    def _ref_path(self: Forge, ctx: Ctx, p: sqlite3.Row) -> tuple[str, str]:
        """The ``{rest}`` of a /-/tree, /-/blob, /-/raw or /-/commits URL split into (ref, path); 404 when no
        leading part names a branch, tag or commit."""
        rest = ctx.path.get("rest", "")
        if not rest.strip("/"):
            return p["default_branch"], ""
        split = self.repos.split_ref(str(p["id"]), rest)
        if split is None:
            raise HTTPException(404, f"no branch, tag or commit at the start of {rest[:120]!r} in "
                                f"{p['namespace']}/{p['path']}")
        return split

    @staticmethod
    def _crumbs(path: str) -> list[tuple[str, str]]:
        parts = [x for x in path.split("/") if x]
        return [(name, "/".join(parts[:i + 1])) for i, name in enumerate(parts)]

    def tree(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        if self.repos.is_empty(key):
            return ctx.redirect(f"/{p['namespace']}/{p['path']}")
        ref, path = self._ref_path(ctx, p)
        entries = self.repos.list_tree(key, ref, path)
        if entries is None:
            if self.repos.read(key, ref, path) is not None:
                return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/blob/{ref}/{path}")
            raise HTTPException(404, f"no folder {path[:120]!r} on {ref[:60]!r}")
        return self.show(ctx, "tree.html", f"Files · {p['name']}", project=p, ref=ref, path=path, entries=entries,
                         parent=path.rpartition("/")[0], crumbs=self._crumbs(path), branches=list(self.repos.branches(key)),
                         can_push=project_role(ctx.db, p, ctx.user) >= DEVELOPER and ref in self.repos.branches(key))

    def blob(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        ref, path = self._ref_path(ctx, p)
        data = self.repos.read(key, ref, path)
        if data is None:
            if path and self.repos.list_tree(key, ref, path) is not None:
                return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/tree/{ref}/{path}")
            raise HTTPException(404, f"no file {path[:120]!r} on {ref[:60]!r}")
        binary = b"\x00" in data[:8000]
        shown = data[:MAX_SHOWN_BYTES].decode("utf-8", "replace")
        if len(data) > MAX_SHOWN_BYTES:
            shown += f"\n… ({len(data) - MAX_SHOWN_BYTES:,} more bytes: open the raw file)"
        name = path.rsplit("/", 1)[-1]
        return self.show(ctx, "blob.html", f"{path} · {p['name']}", project=p, ref=ref, path=path, name=name,
                         crumbs=self._crumbs(path), size=len(data), binary=binary, text=shown,
                         rendered=shown if name.lower().endswith(".md") and not binary else None,
                         can_push=project_role(ctx.db, p, ctx.user) >= DEVELOPER and ref in self.repos.branches(key))

    def raw(self: Forge, ctx: Ctx) -> Response:
        """The file's bytes as text/plain (never as HTML: a stored page must not run in the forge's origin)."""
        p = project_row(ctx)
        ref, path = self._ref_path(ctx, p)
        data = self.repos.read(str(p["id"]), ref, path)
        if data is None:
            raise HTTPException(404, f"no file {path[:120]!r} on {ref[:60]!r}")
        return Response(data, media_type="text/plain; charset=utf-8", headers={"X-Content-Type-Options": "nosniff"})

    def _commit_form(self: Forge, ctx: Ctx, default_message: str) -> tuple[bytes, str, str]:
        body = text(ctx, "content", 10 * MAX_SHOWN_BYTES, label="Contents", strip=False).replace("\r\n", "\n")
        data = body.encode()
        if len(data) > MAX_SHOWN_BYTES:
            raise HTTPException(400, f"Contents are at most {MAX_SHOWN_BYTES:,} bytes, got {len(data):,}")
        message = text(ctx, "commit_message", MESSAGE_MAX, label="Commit message") or default_message
        branch = valid_branch(text(ctx, "branch_name", 200, label="Target Branch") or "", "Target Branch")
        return data, message, branch

    def _author(self: Forge, ctx: Ctx, user: str) -> str:
        row = ctx.db.execute("SELECT name, email FROM users WHERE username = ?", (user,)).fetchone()
        return f"{row['name']} <{row['email']}>"

    def new_file(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        user = need_role(ctx, p, DEVELOPER, "adding a file")
        key = str(p["id"])
        rest = ctx.path.get("rest", "").strip("/")
        if self.repos.is_empty(key):
            ref, folder = p["default_branch"], rest.partition("/")[2] if rest.startswith(p["default_branch"]) else ""
        else:
            ref, folder = self._ref_path(ctx, p)
        action = f"/{p['namespace']}/{p['path']}/-/new/{ref}/{folder}".rstrip("/")
        if ctx.request.method == "GET":
            return self.show(ctx, "edit.html", "New file", project=p, editing=False, action=action, ref=ref,
                             file_name=f"{folder}/" if folder else "", text="", message="", error=None)
        name = text(ctx, "file_name", 255, required=True, label="File path")
        data, message, branch = self._commit_form(ctx, "")
        try:
            path = clean_path(f"{folder}/{name}" if folder and not name.startswith(folder + "/") else name)
        except GitError as e:
            raise HTTPException(400, str(e)) from None
        message = message or f"Add new file {path.rsplit('/', 1)[-1]}"
        if not self.repos.is_empty(key) and self.repos.read(key, ref, path) is not None:
            raise HTTPException(400, f"A file named {path!r} already exists on {ref!r}")
        self._write(ctx, p, user, branch, {path: data}, message, start=None if self.repos.is_empty(key) else ref)
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/blob/{branch}/{path}")

    def edit_file(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        user = need_role(ctx, p, DEVELOPER, "editing a file")
        key = str(p["id"])
        ref, path = self._ref_path(ctx, p)
        current = self.repos.read(key, ref, path)
        if current is None:
            raise HTTPException(404, f"no file {path[:120]!r} on {ref[:60]!r}")
        if ctx.request.method == "GET":
            return self.show(ctx, "edit.html", f"Edit {path}", project=p, editing=True,
                             action=f"/{p['namespace']}/{p['path']}/-/edit/{ref}/{path}", ref=ref, file_name=path,
                             text=current[:MAX_SHOWN_BYTES].decode("utf-8", "replace"),
                             message=f"Update {path.rsplit('/', 1)[-1]}", error=None)
        data, message, branch = self._commit_form(ctx, f"Update {path.rsplit('/', 1)[-1]}")
        self._write(ctx, p, user, branch, {path: data}, message, start=ref)
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/blob/{branch}/{path}")

    def _write(self: Forge, ctx: Ctx, p: sqlite3.Row, user: str, branch: str, changes: dict[str, bytes | None],
               message: str, start: str | None) -> str:
        now = tick(ctx)
        ctx.db.execute("UPDATE projects SET last_activity = ? WHERE id = ?", (stamp(now), p["id"]))
        try:
            return self.repos.commit(str(p["id"]), branch, changes, self._author(ctx, user), message, epoch(now),
                                     start=start)
        except GitError as e:
            raise HTTPException(400, str(e)) from None

    # ---- history ----------------------------------------------------------------------------------------
    def commits(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        if self.repos.is_empty(key):
            return self.show(ctx, "commits.html", "Commits", project=p, ref=p["default_branch"], path="", days=[],
                             branches=[], author="", page=1, more=False)
        ref, path = self._ref_path(ctx, p)
        author = query_text(ctx, "author", 100)
        page = self.page_of(ctx)
        found = self.repos.log(key, ref, path=path)
        if author:
            found = [c for c in found if author.lower() in c.author_name.lower() or author.lower() in c.author_email.lower()]
        shown = found[(page - 1) * COMMITS_PER_PAGE: page * COMMITS_PER_PAGE]
        days: list[tuple[str, list[Any]]] = []
        for c in shown:
            label = f"{c.authored:%b} {c.authored.day}, {c.authored.year}"
            if not days or days[-1][0] != label:
                days.append((label, []))
            days[-1][1].append(c)
        return self.show(ctx, "commits.html", f"Commits · {p['name']}", project=p, ref=ref, path=path, days=days,
                         branches=list(self.repos.branches(key)), author=author, page=page,
                         more=len(found) > page * COMMITS_PER_PAGE)

    def commit(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        sha = ctx.path["sha"]
        c = None if self.repos.is_empty(key) or len(sha) > 40 else self.repos.commit_info(key, sha)
        if c is None:
            raise HTTPException(404, f"no commit {sha[:40]!r} in {p['namespace']}/{p['path']}")
        files, diff = self.repos.changes(key, c.sha)
        if len(diff) > MAX_SHOWN_BYTES:
            diff = diff[:MAX_SHOWN_BYTES] + "\n… (diff cut)"
        return self.show(ctx, "commit.html", f"Commit {c.short}", project=p, c=c, files=files, diff=diff)

    def branches(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        rows = [(name, self.repos.commit_info(key, sha)) for name, sha in self.repos.branches(key).items()]
        return self.show(ctx, "branches.html", "Branches", project=p, branches=rows,
                         can_push=project_role(ctx.db, p, ctx.user) >= DEVELOPER)

    def contributors(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        key = str(p["id"])
        if self.repos.is_empty(key):
            return self.show(ctx, "contributors.html", "Contributors", project=p, ref=p["default_branch"], people=[])
        ref, _ = self._ref_path(ctx, p)
        return self.show(ctx, "contributors.html", "Contributors", project=p, ref=ref,
                         people=self.repos.contributors(key, ref))

    # ---- issues -----------------------------------------------------------------------------------------
    def issue_list(self: Forge, ctx: Ctx, p: sqlite3.Row | None) -> Response:
        """The issues of one project, or (``p`` None) of every project the reader may see: the dashboard."""
        where, args = ["1 = 1"], []
        if p is not None:
            where.append("i.project_id = ?")
            args.append(p["id"])
        else:
            visible, vargs = visible_clause(ctx.user)
            where.append(visible)
            args += vargs
        filters: list[str] = []
        assignee = query_text(ctx, "assignee_username", 100)
        if p is None and not assignee and not query_text(ctx, "author_username", 100) and ctx.user \
                and not ctx.query.get("search") and not ctx.query.getlist("label_name[]"):
            assignee = ctx.user  # the dashboard's default: issues assigned to you
        if assignee:
            where.append("EXISTS (SELECT 1 FROM issue_assignees a WHERE a.issue_id = i.id AND a.username = ? "
                         "COLLATE NOCASE)")
            args.append(assignee)
            filters.append(f"Assignee = {assignee}")
        author = query_text(ctx, "author_username", 100)
        if author:
            where.append("i.author = ? COLLATE NOCASE")
            args.append(author)
            filters.append(f"Author = {author}")
        for label in ctx.query.getlist("label_name[]")[:10]:
            if len(label) > 255 or "\x00" in label:
                raise HTTPException(400, "label_name[] values are at most 255 characters without NUL bytes")
            if label == "None":
                where.append("NOT EXISTS (SELECT 1 FROM issue_labels x WHERE x.issue_id = i.id)")
            elif label == "Any":
                where.append("EXISTS (SELECT 1 FROM issue_labels x WHERE x.issue_id = i.id)")
            else:
                where.append("EXISTS (SELECT 1 FROM issue_labels x JOIN labels l ON l.id = x.label_id WHERE "
                             "x.issue_id = i.id AND l.title = ? COLLATE NOCASE)")
                args.append(label)
            filters.append(f"Label = {label}")
        milestone = query_text(ctx, "milestone_title", 255)
        if milestone:
            where.append("EXISTS (SELECT 1 FROM milestones m WHERE m.id = i.milestone_id AND m.title = ?)")
            args.append(milestone)
            filters.append(f"Milestone = {milestone}")
        search = query_text(ctx, "search")
        for word in search_words(search, "search"):
            where.append("(i.title LIKE ? OR i.description LIKE ?)")
            args += [f"%{word}%", f"%{word}%"]
        state = ctx.query.get("state", "opened")
        if state not in ("opened", "closed", "all"):
            raise HTTPException(400, f"state must be opened, closed or all, got {state[:40]!r}")
        sort = ctx.query.get("sort", "")
        order = ISSUE_SORTS.get(sort, ISSUE_SORTS["created_date"])[1]
        base = f"FROM issues i JOIN projects p ON p.id = i.project_id WHERE {' AND '.join(where)}"
        counts = {"opened": 0, "closed": 0}
        for st, n in ctx.db.execute(f"SELECT i.state, COUNT(*) {base} GROUP BY i.state", args):
            counts[st] = n
        counts["all"] = counts["opened"] + counts["closed"]
        page = self.page_of(ctx)
        state_sql = "" if state == "all" else " AND i.state = ?"
        rows = ctx.db.execute(f"SELECT i.*, p.namespace, p.path, (SELECT title FROM milestones m WHERE m.id = "
                              f"i.milestone_id) AS milestone, (SELECT COUNT(*) FROM notes n WHERE n.target_type = "
                              f"'Issue' AND n.target_id = i.id) AS n_notes {base}{state_sql} ORDER BY {order}, i.id DESC "
                              f"LIMIT ? OFFSET ?", [*args, *([state] if state_sql else []), PER_PAGE + 1,
                                                     (page - 1) * PER_PAGE]).fetchall()
        issues = [{**dict(r), "labels": self.issue_labels(ctx, r["id"]),
                   "assignees": [a["username"] for a in self.issue_assignees(ctx, r["id"])]} for r in rows[:PER_PAGE]]
        return self.show(ctx, "issues.html", "Issues", project=p, issues=issues, counts=counts, state=state,
                         search=search, sort=sort if sort in ISSUE_SORTS else "", filters=filters, page=page,
                         more=len(rows) > PER_PAGE, sorts=[(k, v[0]) for k, v in ISSUE_SORTS.items()])

    def issues(self: Forge, ctx: Ctx) -> Response:
        return self.issue_list(ctx, project_row(ctx))

    def issue_labels(self: Forge, ctx: Ctx, issue_id: int) -> list[sqlite3.Row]:
        return ctx.db.execute("SELECT l.* FROM issue_labels x JOIN labels l ON l.id = x.label_id WHERE x.issue_id = ? "
                              "ORDER BY l.title", (issue_id,)).fetchall()

    def issue_assignees(self: Forge, ctx: Ctx, issue_id: int) -> list[sqlite3.Row]:
        return ctx.db.execute("SELECT u.username, u.name FROM issue_assignees a JOIN users u ON u.username = a.username "
                              "WHERE a.issue_id = ? ORDER BY u.username", (issue_id,)).fetchall()

    def _issue(self: Forge, ctx: Ctx) -> tuple[sqlite3.Row, sqlite3.Row]:
        p = project_row(ctx)
        i = ctx.db.execute("SELECT * FROM issues WHERE project_id = ? AND iid = ?", (p["id"], ctx.path["iid"])).fetchone()
        if i is None:
            raise HTTPException(404, f"no issue #{ctx.path['iid']} in {p['namespace']}/{p['path']}")
        return p, i

    def _notes(self: Forge, ctx: Ctx, kind: str, target: int) -> list[sqlite3.Row]:
        return ctx.db.execute("SELECT * FROM notes WHERE target_type = ? AND target_id = ? ORDER BY created, id",
                              (kind, target)).fetchall()

    def issue(self: Forge, ctx: Ctx) -> Response:
        p, i = self._issue(ctx)
        labels = self.issue_labels(ctx, i["id"])
        can_edit = bool(ctx.user) and (ctx.user == i["author"] or project_role(ctx.db, p, ctx.user) >= REPORTER)
        return self.show(ctx, "issue.html", f"{i['title']} (#{i['iid']}) · Issues", project=p, i=i, labels=labels,
                         label_ids={l["id"] for l in labels}, assignees=self.issue_assignees(ctx, i["id"]),
                         all_labels=self._project_labels(ctx, p), notes=self._notes(ctx, "Issue", i["id"]),
                         milestone=ctx.db.execute("SELECT * FROM milestones WHERE id = ?", (i["milestone_id"],)).fetchone(),
                         milestones=ctx.db.execute("SELECT * FROM milestones WHERE project_id = ? ORDER BY iid",
                                                   (p["id"],)).fetchall(),
                         can_edit=can_edit, here=f"/{p['namespace']}/{p['path']}/-/issues/{i['iid']}")

    def _project_labels(self: Forge, ctx: Ctx, p: sqlite3.Row) -> list[sqlite3.Row]:
        return ctx.db.execute("SELECT * FROM labels WHERE project_id = ? ORDER BY title COLLATE NOCASE",
                              (p["id"],)).fetchall()

    def _checked_labels(self: Forge, ctx: Ctx, p: sqlite3.Row) -> list[int]:
        return [l["id"] for l in self._project_labels(ctx, p) if ctx.form.get(f"label_{l['id']}")]

    def _assignable(self: Forge, ctx: Ctx, p: sqlite3.Row, who: str, label: str) -> str:
        """A user who may be assigned in ``p`` (anyone who can see it), by username, e-mail or name."""
        row = find_user(ctx.db, who, label)
        if not can_see(ctx.db, p, row["username"]):
            raise HTTPException(400, f"{label}: {row['username']} cannot see {p['namespace']}/{p['path']}")
        return str(row["username"])

    def _milestone_field(self: Forge, ctx: Ctx, p: sqlite3.Row) -> int | None:
        value = text(ctx, "milestone_id", 30, label="Milestone")
        if not value:
            return None
        mid = whole(value, "milestone_id")
        if not ctx.db.execute("SELECT 1 FROM milestones WHERE id = ? AND project_id = ?", (mid, p["id"])).fetchone():
            raise HTTPException(400, f"milestone_id {mid} is no milestone of {p['namespace']}/{p['path']}")
        return mid

    def new_issue(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        user = ctx.need_user()
        blank = {"title": "", "description": "", "assignee_username": "", "due_date": ""}
        if ctx.request.method == "GET":
            return self.show(ctx, "issue_new.html", "New issue", project=p, form=blank, all_labels=self._project_labels(ctx, p),
                             milestones=ctx.db.execute("SELECT * FROM milestones WHERE project_id = ? AND state = 'active'",
                                                       (p["id"],)).fetchall(), error=None)
        title = text(ctx, "title", TITLE_MAX, required=True, label="Title")
        description = text(ctx, "description", TEXT_MAX, label="Description")
        who = text(ctx, "assignee_username", NAME_MAX, label="Assignee")
        assignee = self._assignable(ctx, p, who, "Assignee") if who else None
        due = day(ctx, "due_date", "Due date")
        labels = self._checked_labels(ctx, p)
        milestone = self._milestone_field(ctx, p)
        now = stamp(tick(ctx))
        iid = ctx.db.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM issues WHERE project_id = ?", (p["id"],)).fetchone()[0]
        cur = ctx.db.execute("INSERT INTO issues (project_id, iid, title, description, author, state, created, updated, "
                             "closed, due_date, milestone_id) VALUES (?, ?, ?, ?, ?, 'opened', ?, ?, NULL, ?, ?)",
                             (p["id"], iid, title, description, user, now, now, due, milestone))
        issue_id = int(cur.lastrowid or 0)
        ctx.db.executemany("INSERT INTO issue_labels VALUES (?, ?)", [(issue_id, l) for l in labels])
        if assignee:
            self._assign(ctx, p, "Issue", issue_id, "issue_assignees", "issue_id", assignee, user, now)
        ctx.db.execute("UPDATE projects SET last_activity = ? WHERE id = ?", (now, p["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/issues/{iid}")

    def _assign(self: Forge, ctx: Ctx, p: sqlite3.Row, kind: str, target: int, table: str, column: str,
                who: str | None, by: str, now: str, action: str = "assigned") -> None:
        """Replace the assignees (or reviewers) of an issue or merge request; the new one gets a to-do item."""
        ctx.db.execute(f"DELETE FROM {table} WHERE {column} = ?", (target,))
        if who is not None:
            ctx.db.execute(f"INSERT INTO {table} VALUES (?, ?)", (target, who))
            if who != by:
                ctx.db.execute("INSERT INTO todos (username, project_id, target_type, target_id, action, author, state, "
                               "created) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?)", (who, p["id"], kind, target, action,
                                                                                     by, now))

    def _note(self: Forge, ctx: Ctx, p: sqlite3.Row, kind: str, row: sqlite3.Row, table: str, url: str) -> Response:
        user = ctx.need_user()
        body = text(ctx, "note", TEXT_MAX, required=True, label="Comment")
        now = stamp(tick(ctx))
        cur = ctx.db.execute("INSERT INTO notes (project_id, target_type, target_id, author, body, created) VALUES "
                             "(?, ?, ?, ?, ?, ?)", (p["id"], kind, row["id"], user, body, now))
        ctx.db.execute(f"UPDATE {table} SET updated = ? WHERE id = ?", (now, row["id"]))
        return ctx.redirect(f"{url}#note_{cur.lastrowid}")

    def issue_note(self: Forge, ctx: Ctx) -> Response:
        p, i = self._issue(ctx)
        return self._note(ctx, p, "Issue", i, "issues", f"/{p['namespace']}/{p['path']}/-/issues/{i['iid']}")

    def _issue_state(self: Forge, ctx: Ctx, state: str) -> Response:
        p, i = self._issue(ctx)
        may_triage(ctx, p, i["author"])
        now = stamp(tick(ctx))
        ctx.db.execute("UPDATE issues SET state = ?, updated = ?, closed = ? WHERE id = ?",
                       (state, now, now if state == "closed" else None, i["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/issues/{i['iid']}")

    def issue_close(self: Forge, ctx: Ctx) -> Response:
        return self._issue_state(ctx, "closed")

    def issue_reopen(self: Forge, ctx: Ctx) -> Response:
        return self._issue_state(ctx, "opened")

    def issue_update(self: Forge, ctx: Ctx) -> Response:
        p, i = self._issue(ctx)
        user = may_triage(ctx, p, i["author"])
        field = choice(ctx, "field", ("assignee", "labels", "milestone", "due_date"))
        now = stamp(tick(ctx))
        if field == "assignee":
            who = text(ctx, "assignee_username", NAME_MAX, required=True, label="Assignee")
            self._assign(ctx, p, "Issue", i["id"], "issue_assignees", "issue_id",
                         None if who == "-" else self._assignable(ctx, p, who, "Assignee"), user, now)
        elif field == "labels":
            ctx.db.execute("DELETE FROM issue_labels WHERE issue_id = ?", (i["id"],))
            ctx.db.executemany("INSERT INTO issue_labels VALUES (?, ?)", [(i["id"], l) for l in self._checked_labels(ctx, p)])
        elif field == "milestone":
            ctx.db.execute("UPDATE issues SET milestone_id = ? WHERE id = ?", (self._milestone_field(ctx, p), i["id"]))
        else:
            ctx.db.execute("UPDATE issues SET due_date = ? WHERE id = ?", (day(ctx, "due_date", "Due date"), i["id"]))
        ctx.db.execute("UPDATE issues SET updated = ? WHERE id = ?", (now, i["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/issues/{i['iid']}")

    # ---- merge requests ---------------------------------------------------------------------------------
    def mr_list(self: Forge, ctx: Ctx, p: sqlite3.Row | None) -> Response:
        where, args = ["1 = 1"], []
        if p is not None:
            where.append("r.project_id = ?")
            args.append(p["id"])
        else:
            visible, vargs = visible_clause(ctx.user)
            where.append(visible)
            args += vargs
        filters: list[str] = []
        extra: dict[str, str] = {}
        people = {key: query_text(ctx, key, 100) for key in ("assignee_username", "reviewer_username", "author_username")}
        if p is None and ctx.user and not any(people.values()) and not ctx.query.get("search"):
            people["assignee_username"] = ctx.user
        for key, value in people.items():
            if not value:
                continue
            extra[key] = value
            if key == "author_username":
                where.append("r.author = ? COLLATE NOCASE")
            else:
                table = "mr_assignees" if key == "assignee_username" else "mr_reviewers"
                where.append(f"EXISTS (SELECT 1 FROM {table} a WHERE a.mr_id = r.id AND a.username = ? COLLATE NOCASE)")
            args.append(value)
            filters.append(f"{key.split('_')[0].capitalize()} = {value}")
        search = query_text(ctx, "search")
        for word in search_words(search, "search"):
            where.append("(r.title LIKE ? OR r.description LIKE ?)")
            args += [f"%{word}%", f"%{word}%"]
        state = ctx.query.get("state", "opened")
        if state not in ("opened", "merged", "closed", "all"):
            raise HTTPException(400, f"state must be opened, merged, closed or all, got {state[:40]!r}")
        base = f"FROM merge_requests r JOIN projects p ON p.id = r.project_id WHERE {' AND '.join(where)}"
        counts = {"opened": 0, "merged": 0, "closed": 0}
        for st, n in ctx.db.execute(f"SELECT r.state, COUNT(*) {base} GROUP BY r.state", args):
            counts[st] = n
        counts["all"] = sum(counts.values())
        page = self.page_of(ctx)
        state_sql = "" if state == "all" else " AND r.state = ?"
        rows = ctx.db.execute(f"SELECT r.*, p.namespace, p.path, (SELECT COUNT(*) FROM notes n WHERE n.target_type = "
                              f"'MergeRequest' AND n.target_id = r.id) AS n_notes {base}{state_sql} ORDER BY r.created "
                              f"DESC, r.id DESC LIMIT ? OFFSET ?",
                              [*args, *([state] if state_sql else []), PER_PAGE + 1, (page - 1) * PER_PAGE]).fetchall()
        mrs = [{**dict(r), "assignees": [a[0] for a in ctx.db.execute("SELECT username FROM mr_assignees WHERE mr_id = ?",
                                                                    (r["id"],))],
                "reviewers": [a[0] for a in ctx.db.execute("SELECT username FROM mr_reviewers WHERE mr_id = ?", (r["id"],))]}
               for r in rows[:PER_PAGE]]
        return self.show(ctx, "mrs.html", "Merge requests", project=p, mrs=mrs, counts=counts, state=state,
                         search=search, filters=filters, extra=extra, page=page, more=len(rows) > PER_PAGE,
                         can_push=p is not None and project_role(ctx.db, p, ctx.user) >= DEVELOPER)

    def mrs(self: Forge, ctx: Ctx) -> Response:
        return self.mr_list(ctx, project_row(ctx))

    def _mr(self: Forge, ctx: Ctx) -> tuple[sqlite3.Row, sqlite3.Row]:
        p = project_row(ctx)
        m = ctx.db.execute("SELECT * FROM merge_requests WHERE project_id = ? AND iid = ?",
                           (p["id"], ctx.path["iid"])).fetchone()
        if m is None:
            raise HTTPException(404, f"no merge request !{ctx.path['iid']} in {p['namespace']}/{p['path']}")
        return p, m

    def mr(self: Forge, ctx: Ctx) -> Response:
        p, m = self._mr(ctx)
        key = str(p["id"])
        branches = self.repos.branches(key)
        commits: list[Any] = []
        blocked = ""
        if m["state"] != "merged":
            if m["source_branch"] not in branches or m["target_branch"] not in branches:
                blocked = "The source or target branch no longer exists."
            else:
                commits = self.repos.ahead(key, m["source_branch"], m["target_branch"])
                if not commits:
                    blocked = "The source branch has no commits that the target branch lacks."
        who = lambda table: ctx.db.execute(f"SELECT u.username, u.name FROM {table} a JOIN users u ON u.username = "  # noqa: E731
                                           "a.username WHERE a.mr_id = ? ORDER BY u.username", (m["id"],)).fetchall()
        role = project_role(ctx.db, p, ctx.user)
        return self.show(ctx, "mr.html", f"{m['title']} (!{m['iid']}) · Merge requests", project=p, m=m, commits=commits,
                         blocked=blocked, assignees=who("mr_assignees"), reviewers=who("mr_reviewers"),
                         notes=self._notes(ctx, "MergeRequest", m["id"]), can_push=role >= DEVELOPER,
                         can_edit=bool(ctx.user) and (ctx.user == m["author"] or role >= REPORTER),
                         here=f"/{p['namespace']}/{p['path']}/-/merge_requests/{m['iid']}")

    def new_mr(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        user = need_role(ctx, p, DEVELOPER, "opening a merge request")
        key = str(p["id"])
        branches = list(self.repos.branches(key))
        if ctx.request.method == "GET":
            form = {"source": query_text(ctx, "merge_request[source_branch]", 200),
                    "target": query_text(ctx, "merge_request[target_branch]", 200) or p["default_branch"],
                    "title": "", "description": "", "assignee": "", "reviewer": ""}
            return self.show(ctx, "mr_new.html", "New merge request", project=p, branches=branches, form=form, error=None)
        source = text(ctx, "merge_request[source_branch]", 200, required=True, label="Source branch")
        target = text(ctx, "merge_request[target_branch]", 200, label="Target branch") or p["default_branch"]
        for name, label in ((source, "Source branch"), (target, "Target branch")):
            if name not in branches:
                raise HTTPException(400, f"{label}: no branch {name[:80]!r} in {p['namespace']}/{p['path']} "
                                    f"(branches: {', '.join(branches[:20])})")
        if source == target:
            raise HTTPException(400, "the source and target branch must differ")
        if ctx.db.execute("SELECT 1 FROM merge_requests WHERE project_id = ? AND source_branch = ? AND target_branch = ? "
                          "AND state = 'opened'", (p["id"], source, target)).fetchone():
            raise HTTPException(400, f"Another open merge request already exists for {source} into {target}")
        title = text(ctx, "merge_request[title]", TITLE_MAX, label="Title") or source.replace("-", " ").capitalize()
        description = text(ctx, "merge_request[description]", TEXT_MAX, label="Description")
        people = {}
        for field, label in (("assignee", "Assignee"), ("reviewer", "Reviewer")):
            who = text(ctx, f"merge_request[{field}_username]", NAME_MAX, label=label)
            people[field] = self._assignable(ctx, p, who, label) if who else None
        now = stamp(tick(ctx))
        iid = ctx.db.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM merge_requests WHERE project_id = ?",
                             (p["id"],)).fetchone()[0]
        cur = ctx.db.execute("INSERT INTO merge_requests (project_id, iid, title, description, author, source_branch, "
                             "target_branch, state, created, updated, merge_commit, merged_by) VALUES "
                             "(?, ?, ?, ?, ?, ?, ?, 'opened', ?, ?, '', '')",
                             (p["id"], iid, title, description, user, source, target, now, now))
        mr_id = int(cur.lastrowid or 0)
        if people["assignee"]:
            self._assign(ctx, p, "MergeRequest", mr_id, "mr_assignees", "mr_id", people["assignee"], user, now)
        if people["reviewer"]:
            self._assign(ctx, p, "MergeRequest", mr_id, "mr_reviewers", "mr_id", people["reviewer"], user, now,
                         "review_requested")
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/merge_requests/{iid}")

    def mr_note(self: Forge, ctx: Ctx) -> Response:
        p, m = self._mr(ctx)
        return self._note(ctx, p, "MergeRequest", m, "merge_requests",
                          f"/{p['namespace']}/{p['path']}/-/merge_requests/{m['iid']}")

    def mr_merge(self: Forge, ctx: Ctx) -> Response:
        p, m = self._mr(ctx)
        user = need_role(ctx, p, DEVELOPER, "merging")
        if m["state"] != "opened":
            raise HTTPException(409, f"merge request !{m['iid']} is {m['state']}, not open")
        now = tick(ctx)
        ctx.db.execute("UPDATE merge_requests SET state = 'merged', updated = ?, merged_by = ? WHERE id = ?",
                       (stamp(now), user, m["id"]))
        ctx.db.execute("UPDATE projects SET last_activity = ? WHERE id = ?", (stamp(now), p["id"]))
        try:
            sha = self.repos.merge(str(p["id"]), m["source_branch"], m["target_branch"], self._author(ctx, user),
                                   f"Merge branch '{m['source_branch']}' into '{m['target_branch']}'\n\n{m['title']}",
                                   epoch(now))
        except GitError as e:
            raise HTTPException(409, str(e)) from None
        ctx.db.execute("UPDATE merge_requests SET merge_commit = ? WHERE id = ?", (sha, m["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/merge_requests/{m['iid']}")

    def _mr_state(self: Forge, ctx: Ctx, frm: str, to: str) -> Response:
        p, m = self._mr(ctx)
        user = ctx.need_user()
        if user != m["author"] and project_role(ctx.db, p, user) < DEVELOPER:
            raise HTTPException(403, "only the author or a Developer or higher may close or reopen a merge request")
        if m["state"] != frm:
            raise HTTPException(409, f"merge request !{m['iid']} is {m['state']}, not {frm}")
        ctx.db.execute("UPDATE merge_requests SET state = ?, updated = ? WHERE id = ?", (to, stamp(tick(ctx)), m["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/merge_requests/{m['iid']}")

    def mr_close(self: Forge, ctx: Ctx) -> Response:
        return self._mr_state(ctx, "opened", "closed")

    def mr_reopen(self: Forge, ctx: Ctx) -> Response:
        return self._mr_state(ctx, "closed", "opened")

    def mr_update(self: Forge, ctx: Ctx) -> Response:
        p, m = self._mr(ctx)
        user = may_triage(ctx, p, m["author"])
        field = choice(ctx, "field", ("assignee", "reviewer"))
        who = text(ctx, f"{field}_username", NAME_MAX, required=True, label=field.capitalize())
        now = stamp(tick(ctx))
        table = "mr_assignees" if field == "assignee" else "mr_reviewers"
        self._assign(ctx, p, "MergeRequest", m["id"], table, "mr_id",
                     None if who == "-" else self._assignable(ctx, p, who, field.capitalize()), user, now,
                     "assigned" if field == "assignee" else "review_requested")
        ctx.db.execute("UPDATE merge_requests SET updated = ? WHERE id = ?", (now, m["id"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/merge_requests/{m['iid']}")

    # ---- labels and milestones --------------------------------------------------------------------------
    def labels(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        if ctx.request.method == "POST":
            need_role(ctx, p, REPORTER, "creating a label")
            title = text(ctx, "title", TITLE_MAX, required=True, label="Title")
            color = text(ctx, "color", 7, label="Background color") or "#6699cc"
            if not COLOR_RE.match(color):
                raise HTTPException(400, f"Background color must be a hex colour like #6699cc, got {color!r}")
            if ctx.db.execute("SELECT 1 FROM labels WHERE project_id = ? AND title = ? COLLATE NOCASE",
                              (p["id"], title)).fetchone():
                raise HTTPException(400, f"Title has already been taken: a label {title!r} exists")
            ctx.db.execute("INSERT INTO labels (project_id, title, color, description) VALUES (?, ?, ?, ?)",
                           (p["id"], title, color, text(ctx, "description", 500, label="Description")))
            return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/labels")
        rows = ctx.db.execute("SELECT l.*, (SELECT COUNT(*) FROM issue_labels x JOIN issues i ON i.id = x.issue_id WHERE "
                              "x.label_id = l.id AND i.state = 'opened') AS n_open FROM labels l WHERE l.project_id = ? "
                              "ORDER BY l.title COLLATE NOCASE", (p["id"],)).fetchall()
        return self.show(ctx, "labels.html", "Labels", project=p, labels=rows,
                         can_edit=project_role(ctx.db, p, ctx.user) >= REPORTER)

    def label_form(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        need_role(ctx, p, REPORTER, "creating a label")
        return self.show(ctx, "label_new.html", "New label", project=p, error=None)

    def milestones(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        state = ctx.query.get("state", "active")
        if state not in ("active", "closed", "all"):
            raise HTTPException(400, f"state must be active, closed or all, got {state[:40]!r}")
        rows = ctx.db.execute("SELECT m.*, (SELECT COUNT(*) FROM issues i WHERE i.milestone_id = m.id) AS n_issues FROM "
                              "milestones m WHERE m.project_id = ? AND (? = 'all' OR m.state = ?) ORDER BY "
                              "m.due_date, m.iid", (p["id"], state, state)).fetchall()
        return self.show(ctx, "milestones.html", "Milestones", project=p, milestones=rows, state=state,
                         can_edit=project_role(ctx.db, p, ctx.user) >= REPORTER)

    def milestone(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        m = ctx.db.execute("SELECT * FROM milestones WHERE project_id = ? AND iid = ?", (p["id"], ctx.path["iid"])).fetchone()
        if m is None:
            raise HTTPException(404, f"no milestone {ctx.path['iid']} in {p['namespace']}/{p['path']}")
        issues = ctx.db.execute("SELECT iid, title, state FROM issues WHERE milestone_id = ? ORDER BY iid", (m["id"],))
        return self.show(ctx, "milestone.html", f"{m['title']} · Milestones", project=p, m=m, issues=issues.fetchall())

    def new_milestone(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        need_role(ctx, p, REPORTER, "creating a milestone")
        if ctx.request.method == "GET":
            return self.show(ctx, "milestone_new.html", "New milestone", project=p, error=None)
        title = text(ctx, "title", TITLE_MAX, required=True, label="Title")
        start, due = day(ctx, "start_date", "Start Date"), day(ctx, "due_date", "Due Date")
        if start and due and due < start:
            raise HTTPException(400, "Due Date must be on or after the Start Date")
        if ctx.db.execute("SELECT 1 FROM milestones WHERE project_id = ? AND title = ?", (p["id"], title)).fetchone():
            raise HTTPException(400, f"Title has already been taken: a milestone {title!r} exists")
        iid = ctx.db.execute("SELECT COALESCE(MAX(iid), 0) + 1 FROM milestones WHERE project_id = ?", (p["id"],)).fetchone()[0]
        ctx.db.execute("INSERT INTO milestones (project_id, iid, title, description, start_date, due_date, state) VALUES "
                       "(?, ?, ?, ?, ?, ?, 'active')",
                       (p["id"], iid, title, text(ctx, "description", TEXT_MAX, label="Description"), start, due))
        tick(ctx)
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/milestones/{iid}")

    # ---- members --------------------------------------------------------------------------------------
    def member_rows(self: Forge, ctx: Ctx, p: sqlite3.Row) -> list[dict[str, Any]]:
        """Everyone with access: direct members and, for a group's project, the group's members (the
        higher role shown where someone is both), highest role first."""
        rows: dict[str, dict[str, Any]] = {}
        if group_row(ctx.db, p["namespace"]) is not None:
            for r in ctx.db.execute("SELECT m.username, m.role, u.name FROM group_members m JOIN users u ON u.username = "
                                    "m.username WHERE m.group_path = ?", (p["namespace"],)):
                rows[r["username"]] = {"username": r["username"], "name": r["name"], "role": r["role"], "expires": "",
                                       "source": f"Inherited from {p['namespace']}", "direct": False}
        for r in ctx.db.execute("SELECT m.username, m.role, m.expires, u.name FROM project_members m JOIN users u ON "
                                "u.username = m.username WHERE m.project_id = ?", (p["id"],)):
            old = rows.get(r["username"])
            rows[r["username"]] = {"username": r["username"], "name": r["name"], "expires": r["expires"],
                                   "role": max(r["role"], old["role"] if old else 0), "source": "Direct member",
                                   "direct": True}
        out = sorted(rows.values(), key=lambda m: (-m["role"], m["username"].lower()))
        for m in out:
            m["role_name"] = ROLES[m["role"]]
        return out

    def members(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        action = f"/{p['namespace']}/{p['path']}/-/project_members"
        if ctx.request.method == "POST":
            user = need_role(ctx, p, MAINTAINER, "inviting members")
            level = role_field(ctx)
            if level > project_role(ctx.db, p, user):
                raise HTTPException(403, f"a {ROLES[project_role(ctx.db, p, user)]} cannot give the {ROLES[level]} role")
            expires = day(ctx, "expires_at", "Access expiration date")
            for who in self.invitees(ctx):
                ctx.db.execute("INSERT INTO project_members VALUES (?, ?, ?, ?) ON CONFLICT (project_id, username) DO "
                               "UPDATE SET role = excluded.role, expires = excluded.expires",
                               (p["id"], who, level, expires))
            return ctx.redirect(action)
        return self.show(ctx, "members.html", f"Members · {p['name']}", project=p, heading="Project members",
                         what=f"{p['namespace']}/{p['path']}", rows=self.member_rows(ctx, p), action_base=action,
                         editable=project_role(ctx.db, p, ctx.user) >= MAINTAINER, error=None)

    def _direct_member(self: Forge, ctx: Ctx, p: sqlite3.Row) -> tuple[str, sqlite3.Row]:
        user = need_role(ctx, p, MAINTAINER, "changing members")
        row = ctx.db.execute("SELECT * FROM project_members WHERE project_id = ? AND username = ?",
                             (p["id"], ctx.path["username"])).fetchone()
        if row is None:
            raise HTTPException(404, f"{ctx.path['username'][:80]!r} is no direct member of {p['namespace']}/{p['path']}")
        if row["role"] > project_role(ctx.db, p, user):
            raise HTTPException(403, f"a {ROLES[project_role(ctx.db, p, user)]} cannot change an {ROLES[row['role']]}")
        return user, row

    def member_update(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        user, row = self._direct_member(ctx, p)
        level = role_field(ctx)
        if level > project_role(ctx.db, p, user):
            raise HTTPException(403, f"a {ROLES[project_role(ctx.db, p, user)]} cannot give the {ROLES[level]} role")
        if row["username"] == p["namespace"] and level < OWNER:
            raise HTTPException(400, f"{row['username']} owns the namespace {p['namespace']}; their role stays Owner")
        ctx.db.execute("UPDATE project_members SET role = ? WHERE project_id = ? AND username = ?",
                       (level, p["id"], row["username"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/project_members")

    def member_remove(self: Forge, ctx: Ctx) -> Response:
        p = project_row(ctx)
        _, row = self._direct_member(ctx, p)
        if row["username"] == p["namespace"]:
            raise HTTPException(400, f"{row['username']} owns the namespace {p['namespace']} and cannot be removed")
        ctx.db.execute("DELETE FROM project_members WHERE project_id = ? AND username = ?", (p["id"], row["username"]))
        return ctx.redirect(f"/{p['namespace']}/{p['path']}/-/project_members")

    # ---- new projects ---------------------------------------------------------------------------------
    def new_project(self: Forge, ctx: Ctx) -> Response:
        user = ctx.need_user()
        namespaces = self.creatable_namespaces(ctx, user)
        visibilities = [(v, VISIBILITY_WORDS[v]) for v in ("private", "internal", "public")]
        form = {"name": "", "path": "", "description": "", "visibility": "private", "readme": True,
                "namespace": ctx.query.get("namespace") if ctx.query.get("namespace") in namespaces else user}
        if ctx.request.method == "GET":
            return self.show(ctx, "new_project.html", "New project", form=form, namespaces=namespaces,
                             visibilities=visibilities, templates=list(TEMPLATES), error=None)
        name = text(ctx, "name", NAME_MAX, required=True, label="Project name")
        if not re.match(r"^[\w][\w .+-]*$", name):
            raise HTTPException(400, "Project name can contain only letters, digits, '_', '.', '+', dashes and spaces, "
                                "and must start with a letter, digit or '_'")
        path = valid_path(text(ctx, "path", 100, label="Project slug") or re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-."),
                          "Project slug")
        namespace = choice(ctx, "namespace", namespaces, user, "Project URL namespace")
        visibility = choice(ctx, "visibility", VISIBILITIES, "private", "Visibility Level")
        template = choice(ctx, "template", ["", *TEMPLATES], "", "Template")
        description = text(ctx, "description", 2000, label="Project description")
        readme = bool(ctx.form.get("initialize_with_readme"))
        if ctx.db.execute("SELECT 1 FROM projects WHERE namespace = ? AND path = ?", (namespace, path)).fetchone():
            form.update(name=name, path=path, description=description, visibility=visibility, readme=readme,
                        namespace=namespace)
            return self.show(ctx, "new_project.html", "New project", status=400, form=form, namespaces=namespaces,
                             visibilities=visibilities, templates=list(TEMPLATES),
                             error=f"Path {namespace}/{path} has already been taken")
        now = tick(ctx)
        cur = ctx.db.execute("INSERT INTO projects (namespace, path, name, description, visibility, default_branch, "
                             "base_stars, forked_from, created, last_activity) VALUES (?, ?, ?, ?, ?, 'main', 0, NULL, ?, ?)",
                             (namespace, path, name, description, visibility, stamp(now), stamp(now)))
        pid = int(cur.lastrowid or 0)
        if group_row(ctx.db, namespace) is None:
            ctx.db.execute("INSERT INTO project_members VALUES (?, ?, ?, '')", (pid, user, OWNER))
        key = str(pid)
        self.repos.create(key, "main")
        files: dict[str, bytes | None] = dict(TEMPLATES.get(template, {}))
        if readme or template:
            files["README.md"] = f"# {name}\n\n{description}\n".encode()
            message = f"Initialized from '{template}' project template" if template else "Initial commit"
            self.repos.commit(key, "main", files, self._author(ctx, user), message, epoch(now))
        return ctx.redirect(f"/{namespace}/{path}")


