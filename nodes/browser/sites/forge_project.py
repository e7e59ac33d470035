"""The code forge's project routes, labels, milestones and members; the repository, issue and merge
request pages are mixins of their own (forge_repo.py, forge_issues.py, forge_merge_requests.py).

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
    TEXT_MAX,
    TITLE_MAX,
    day,
    group_row,
    need_role,
    project_role,
    project_row,
    role_field,
    text,
    tick,
)
from nodes.browser.sites.forge_data import (
    MAINTAINER,
    OWNER,
    REPORTER,
    ROLES,
)
from nodes.browser.sites.forge_issues import IssuePages
from nodes.browser.sites.forge_merge_requests import MergeRequestPages
from nodes.browser.sites.forge_repo import RepositoryPages
from nodes.browser.sites.framework import Ctx, Handler

if TYPE_CHECKING:
    from nodes.browser.sites.forge import Forge


COLOR_RE = re.compile(r"^#[0-9A-Fa-f]{6}$")


class ProjectPages(RepositoryPages, IssuePages, MergeRequestPages):
    """Mixed into Forge: every page under ``/{namespace}/{project}``."""

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
