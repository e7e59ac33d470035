"""A small subset of GitLab's REST API v4 over the forge, so a helper reads the forge the way it
would read a real GitLab: ``GET /api/v4/projects/{id or url-encoded path}`` and its ``/members/all``,
``/issues`` and ``/merge_requests``, ``/api/v4/projects`` and ``/api/v4/user``.

Authentication is GitLab's: a ``PRIVATE-TOKEN`` header (or ``private_token`` query parameter) with a
user's personal access token (shown at ``/-/profile/personal_access_tokens``). Without one the caller
is anonymous and sees public projects only; a wrong one is a 401. Lists are paged with ``page`` and
``per_page`` (at most 100) and carry GitLab's ``X-Total``/``X-Page``/``X-Per-Page``/``X-Total-Pages``."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, Response

from nodes.browser.sites.forge_common import PROJECT_COLUMNS, can_see, group_row, query_text, visible_clause
from nodes.browser.sites.forge_data import ROLES
from nodes.browser.sites.framework import Ctx, Handler, search_words, whole

if TYPE_CHECKING:
    from nodes.browser.sites.forge import Forge


def iso(value: str | None) -> str | None:
    """'2023-03-05 14:20' -> '2023-03-05T14:20:00.000Z' (the site's clock is UTC)."""
    if not value:
        return None
    return datetime.strptime(value[:16], "%Y-%m-%d %H:%M").strftime("%Y-%m-%dT%H:%M:00.000Z")


class ApiPages:
    """Mixed into Forge."""

    def api_pages(self: Forge) -> list[tuple[str, Handler, list[str]]]:
        P = "/api/v4/projects/{project:path}"
        return [("/api/v4/user", self.api_user, ["GET"]), ("/api/v4/projects", self.api_projects, ["GET"]),
                (P + "/members/all", self.api_members, ["GET"]), (P + "/members", self.api_direct_members, ["GET"]),
                (P + "/issues", self.api_issues, ["GET"]), (P + "/merge_requests", self.api_mrs, ["GET"]),
                (P, self.api_project, ["GET"])]

    # ---- auth, paging, shapes -----------------------------------------------------------------------
    def api_caller(self: Forge, ctx: Ctx) -> str | None:
        """The token's user (the session cookie is not used here: the API is for programs)."""
        token = ctx.request.headers.get("private-token") or ctx.query.get("private_token", "")
        if not token:
            return None
        row = ctx.db.execute("SELECT username FROM tokens WHERE private_token = ?", (token[:200],)).fetchone()
        if row is None:
            raise HTTPException(401, "401 Unauthorized")
        return str(row[0])

    def api_project_row(self: Forge, ctx: Ctx, caller: str | None) -> sqlite3.Row:
        ref = ctx.path["project"].strip("/")
        if ref.isdigit():
            row = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.id = ?",
                                 (whole(ref, "project id"),)).fetchone()
        else:
            ns, _, path = ref.partition("/")
            row = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.namespace = ? AND p.path = ?",
                                 (ns, path)).fetchone()
        if row is None or not can_see(ctx.db, row, caller):
            raise HTTPException(404, "404 Project Not Found")
        return row

    def paged(self: Forge, ctx: Ctx, items: list[Any]) -> Response:
        page = whole(ctx.query.get("page", "1") or "1", "page", 1, 100_000)
        per_page = whole(ctx.query.get("per_page", "20") or "20", "per_page", 1, 100)
        total = len(items)
        body = items[(page - 1) * per_page: page * per_page]
        return JSONResponse(body, headers={"X-Total": str(total), "X-Page": str(page), "X-Per-Page": str(per_page),
                                           "X-Total-Pages": str(max(1, -(-total // per_page)))})

    def _web(self: Forge, ctx: Ctx, path: str) -> str:
        return f"{str(ctx.request.base_url).rstrip('/')}{path}"

    def _user_json(self: Forge, ctx: Ctx, username: str | None) -> dict[str, Any] | None:
        if not username:
            return None
        row = ctx.db.execute("SELECT username, name FROM users WHERE username = ?", (username,)).fetchone()
        if row is None:
            return None
        return {"username": row["username"], "name": row["name"], "state": "active",
                "web_url": self._web(ctx, f"/{row['username']}")}

    def _project_json(self: Forge, ctx: Ctx, p: sqlite3.Row) -> dict[str, Any]:
        full = f"{p['namespace']}/{p['path']}"
        host = ctx.request.url.hostname or "localhost"
        return {"id": p["id"], "name": p["name"], "path": p["path"], "path_with_namespace": full,
                "name_with_namespace": f"{p['namespace']} / {p['name']}", "description": p["description"],
                "visibility": p["visibility"], "default_branch": p["default_branch"], "star_count": p["stars"],
                "forks_count": p["forks"], "open_issues_count": p["open_issues"], "created_at": iso(p["created"]),
                "last_activity_at": iso(p["last_activity"]), "web_url": self._web(ctx, f"/{full}"),
                "http_url_to_repo": self._web(ctx, f"/{full}.git"), "ssh_url_to_repo": f"ssh://git@{host}:2222/{full}.git",
                "namespace": {"path": p["namespace"], "kind": "group" if group_row(ctx.db, p["namespace"]) else "user"},
                "forked_from_project": p["forked_from"]}

    # ---- endpoints ----------------------------------------------------------------------------------
    def api_user(self: Forge, ctx: Ctx) -> Response:
        caller = self.api_caller(ctx)
        if caller is None:
            raise HTTPException(401, "401 Unauthorized")
        row = ctx.db.execute("SELECT * FROM users WHERE username = ?", (caller,)).fetchone()
        return JSONResponse({**(self._user_json(ctx, caller) or {}), "email": row["email"], "bio": row["bio"],
                             "location": row["location"], "website_url": row["website"]})

    def api_projects(self: Forge, ctx: Ctx) -> Response:
        caller = self.api_caller(ctx)
        visible, args = visible_clause(caller)
        words = search_words(query_text(ctx, "search"), "search")
        match = "".join(" AND (p.name LIKE ? OR p.path LIKE ? OR p.description LIKE ?)" for _ in words)
        rows = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE {visible}{match} ORDER BY p.id",
                              [*args, *[v for w in words for v in (f"%{w}%",) * 3]]).fetchall()
        return self.paged(ctx, [self._project_json(ctx, p) for p in rows])

    def api_project(self: Forge, ctx: Ctx) -> Response:
        return JSONResponse(self._project_json(ctx, self.api_project_row(ctx, self.api_caller(ctx))))

    def _members_json(self: Forge, ctx: Ctx, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**(self._user_json(ctx, m["username"]) or {}), "id": i + 1, "access_level": m["role"],
                 "role": ROLES[m["role"]], "expires_at": m["expires"] or None}
                for i, m in enumerate(rows)]

    def api_members(self: Forge, ctx: Ctx) -> Response:
        """Everyone with access, inherited members included (GitLab's ``/members/all``)."""
        p = self.api_project_row(ctx, self.api_caller(ctx))
        return self.paged(ctx, self._members_json(ctx, self.member_rows(ctx, p)))

    def api_direct_members(self: Forge, ctx: Ctx) -> Response:
        p = self.api_project_row(ctx, self.api_caller(ctx))
        return self.paged(ctx, self._members_json(ctx, [m for m in self.member_rows(ctx, p) if m["direct"]]))

    def api_issues(self: Forge, ctx: Ctx) -> Response:
        p = self.api_project_row(ctx, self.api_caller(ctx))
        where, args = ["i.project_id = ?"], [p["id"]]
        state = ctx.query.get("state", "all")
        if state not in ("opened", "closed", "all"):
            raise HTTPException(400, f"state must be opened, closed or all, got {state[:40]!r}")
        if state != "all":
            where.append("i.state = ?")
            args.append(state)
        for label in [x.strip() for x in query_text(ctx, "labels", 1000).split(",") if x.strip()][:10]:
            where.append("EXISTS (SELECT 1 FROM issue_labels x JOIN labels l ON l.id = x.label_id WHERE x.issue_id = i.id "
                         "AND l.title = ? COLLATE NOCASE)")
            args.append(label)
        for key, sql in (("assignee_username", "EXISTS (SELECT 1 FROM issue_assignees a WHERE a.issue_id = i.id AND "
                                               "a.username = ? COLLATE NOCASE)"),
                         ("author_username", "i.author = ? COLLATE NOCASE"),
                         ("milestone", "EXISTS (SELECT 1 FROM milestones m WHERE m.id = i.milestone_id AND m.title = ?)")):
            value = query_text(ctx, key, 255)
            if value:
                where.append(sql)
                args.append(value)
        for word in search_words(query_text(ctx, "search"), "search"):
            where.append("(i.title LIKE ? OR i.description LIKE ?)")
            args += [f"%{word}%", f"%{word}%"]
        order = "i.updated" if ctx.query.get("order_by") == "updated_at" else "i.created"
        direction = "ASC" if ctx.query.get("sort") == "asc" else "DESC"
        rows = ctx.db.execute(f"SELECT i.*, (SELECT COUNT(*) FROM notes n WHERE n.target_type = 'Issue' AND n.target_id = "
                              f"i.id) AS n_notes FROM issues i WHERE {' AND '.join(where)} ORDER BY {order} {direction}, "
                              f"i.id {direction}", args).fetchall()
        out = []
        for i in rows:
            assignees = [self._user_json(ctx, a["username"]) for a in self.issue_assignees(ctx, i["id"])]
            milestone = ctx.db.execute("SELECT * FROM milestones WHERE id = ?", (i["milestone_id"],)).fetchone()
            out.append({"id": i["id"], "iid": i["iid"], "project_id": p["id"], "title": i["title"],
                        "description": i["description"], "state": i["state"], "created_at": iso(i["created"]),
                        "updated_at": iso(i["updated"]), "closed_at": iso(i["closed"]),
                        "labels": [l["title"] for l in self.issue_labels(ctx, i["id"])],
                        "milestone": None if milestone is None else {
                            "id": milestone["id"], "iid": milestone["iid"], "title": milestone["title"],
                            "start_date": milestone["start_date"] or None, "due_date": milestone["due_date"] or None,
                            "state": milestone["state"]},
                        "assignees": assignees, "assignee": assignees[0] if assignees else None,
                        "author": self._user_json(ctx, i["author"]), "due_date": i["due_date"] or None,
                        "user_notes_count": i["n_notes"],
                        "web_url": self._web(ctx, f"/{p['namespace']}/{p['path']}/-/issues/{i['iid']}")})
        return self.paged(ctx, out)

    def api_mrs(self: Forge, ctx: Ctx) -> Response:
        p = self.api_project_row(ctx, self.api_caller(ctx))
        where, args = ["r.project_id = ?"], [p["id"]]
        state = ctx.query.get("state", "all")
        if state not in ("opened", "closed", "merged", "all"):
            raise HTTPException(400, f"state must be opened, closed, merged or all, got {state[:40]!r}")
        if state != "all":
            where.append("r.state = ?")
            args.append(state)
        for key, sql in (("source_branch", "r.source_branch = ?"), ("target_branch", "r.target_branch = ?"),
                         ("author_username", "r.author = ? COLLATE NOCASE"),
                         ("assignee_username", "EXISTS (SELECT 1 FROM mr_assignees a WHERE a.mr_id = r.id AND "
                                               "a.username = ? COLLATE NOCASE)"),
                         ("reviewer_username", "EXISTS (SELECT 1 FROM mr_reviewers a WHERE a.mr_id = r.id AND "
                                               "a.username = ? COLLATE NOCASE)")):
            value = query_text(ctx, key, 255)
            if value:
                where.append(sql)
                args.append(value)
        for word in search_words(query_text(ctx, "search"), "search"):
            where.append("(r.title LIKE ? OR r.description LIKE ?)")
            args += [f"%{word}%", f"%{word}%"]
        rows = ctx.db.execute(f"SELECT r.* FROM merge_requests r WHERE {' AND '.join(where)} ORDER BY r.created DESC, "
                              f"r.id DESC", args).fetchall()
        out = []
        for r in rows:
            people = {t: [self._user_json(ctx, a[0]) for a in ctx.db.execute(
                f"SELECT username FROM {t} WHERE mr_id = ? ORDER BY username", (r["id"],))]
                for t in ("mr_assignees", "mr_reviewers")}
            out.append({"id": r["id"], "iid": r["iid"], "project_id": p["id"], "title": r["title"],
                        "description": r["description"], "state": r["state"], "source_branch": r["source_branch"],
                        "target_branch": r["target_branch"], "author": self._user_json(ctx, r["author"]),
                        "assignees": people["mr_assignees"], "reviewers": people["mr_reviewers"],
                        "assignee": people["mr_assignees"][0] if people["mr_assignees"] else None,
                        "merged_by": self._user_json(ctx, r["merged_by"]), "merge_commit_sha": r["merge_commit"] or None,
                        "created_at": iso(r["created"]), "updated_at": iso(r["updated"]),
                        "web_url": self._web(ctx, f"/{p['namespace']}/{p['path']}/-/merge_requests/{r['iid']}")})
        return self.paged(ctx, out)
