"""The code forge's repository pages: a project's overview, its files and the web editor, commits,
branches and contributors; stars, forks and project creation. A mixin of ``forge.Forge``; the
repositories themselves are forge_git.py's."""

from __future__ import annotations

import re
import sqlite3
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites.forge_common import (
    MESSAGE_MAX,
    NAME_MAX,
    choice,
    group_row,
    need_role,
    project_role,
    project_row,
    query_text,
    stamp,
    text,
    tick,
    valid_branch,
    valid_path,
)
from nodes.browser.sites.forge_data import (
    DEVELOPER,
    OWNER,
    VISIBILITIES,
    epoch,
)
from nodes.browser.sites.forge_git import MAX_SHOWN_BYTES, GitError, clean_path
from nodes.browser.sites.framework import Ctx

if TYPE_CHECKING:
    from nodes.browser.sites.forge import Forge


COMMITS_PER_PAGE = 40
VISIBILITY_WORDS = {"private": "Project access must be granted explicitly to each user.",
                    "internal": "The project can be accessed by any logged in user.",
                    "public": "The project can be accessed without any authentication."}
PROJECT_TEMPLATES = {
    "Android": {"app/src/main/AndroidManifest.xml": b"<manifest package=\"com.example.app\"/>\n",
                "build.gradle": b"plugins { id 'com.android.application' }\n"},
    "NodeJS Express": {"app.js": b"const express = require('express');\nconst app = express();\napp.listen(3000);\n",
                       "package.json": b"{\n  \"name\": \"app\",\n  \"dependencies\": {\"express\": \"^4\"}\n}\n"},
    "Ruby on Rails": {"Gemfile": b"source 'https://rubygems.org'\ngem 'rails'\n", "config/routes.rb": b"Rails.application.routes.draw do\nend\n"},
    "Spring": {"pom.xml": b"<project><artifactId>demo</artifactId></project>\n"},
    "iOS (Swift)": {"App/AppDelegate.swift": b"import UIKit\n"},
}


class RepositoryPages:
    """Mixed into Forge (which provides show, names, repos and the framework's Site)."""

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

    # ---- new projects ---------------------------------------------------------------------------------
    def new_project(self: Forge, ctx: Ctx) -> Response:
        user = ctx.need_user()
        namespaces = self.creatable_namespaces(ctx, user)
        visibilities = [(v, VISIBILITY_WORDS[v]) for v in ("private", "internal", "public")]
        form = {"name": "", "path": "", "description": "", "visibility": "private", "readme": True,
                "namespace": ctx.query.get("namespace") if ctx.query.get("namespace") in namespaces else user}
        if ctx.request.method == "GET":
            return self.show(ctx, "new_project.html", "New project", form=form, namespaces=namespaces,
                             visibilities=visibilities, templates=list(PROJECT_TEMPLATES), error=None)
        name = text(ctx, "name", NAME_MAX, required=True, label="Project name")
        if not re.match(r"^[\w][\w .+-]*$", name):
            raise HTTPException(400, "Project name can contain only letters, digits, '_', '.', '+', dashes and spaces, "
                                "and must start with a letter, digit or '_'")
        path = valid_path(text(ctx, "path", 100, label="Project slug") or re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-."),
                          "Project slug")
        namespace = choice(ctx, "namespace", namespaces, user, "Project URL namespace")
        visibility = choice(ctx, "visibility", VISIBILITIES, "private", "Visibility Level")
        template = choice(ctx, "template", ["", *PROJECT_TEMPLATES], "", "Template")
        description = text(ctx, "description", 2000, label="Project description")
        readme = bool(ctx.form.get("initialize_with_readme"))
        if ctx.db.execute("SELECT 1 FROM projects WHERE namespace = ? AND path = ?", (namespace, path)).fetchone():
            form.update(name=name, path=path, description=description, visibility=visibility, readme=readme,
                        namespace=namespace)
            return self.show(ctx, "new_project.html", "New project", status=400, form=form, namespaces=namespaces,
                             visibilities=visibilities, templates=list(PROJECT_TEMPLATES),
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
        files: dict[str, bytes | None] = dict(PROJECT_TEMPLATES.get(template, {}))
        if readme or template:
            files["README.md"] = f"# {name}\n\n{description}\n".encode()
            message = f"Initialized from '{template}' project template" if template else "Initial commit"
            self.repos.commit(key, "main", files, self._author(ctx, user), message, epoch(now))
        return ctx.redirect(f"/{namespace}/{path}")
