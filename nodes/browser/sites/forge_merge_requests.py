"""The code forge's merge requests: lists (a project's, and the dashboard's: assigned to you, review
requests), a merge request's page with the commits it brings, comments, assignee and reviewer, and
opening, merging (a real merge commit, forge_git.Repos.merge), closing and reopening. A mixin of
``forge.Forge``."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites.forge_common import (
    NAME_MAX,
    TEXT_MAX,
    TITLE_MAX,
    choice,
    listing_scope,
    may_triage,
    need_role,
    project_role,
    project_row,
    query_text,
    stamp,
    text,
    tick,
)
from nodes.browser.sites.forge_data import (
    DEVELOPER,
    REPORTER,
    epoch,
)
from nodes.browser.sites.forge_git import GitError
from nodes.browser.sites.framework import Ctx, search_words

if TYPE_CHECKING:
    from nodes.browser.sites.forge import Forge


PER_PAGE = 20


class MergeRequestPages:
    """Mixed into Forge, beside IssuePages (whose comments and assignments it reuses)."""

    # ---- merge requests ---------------------------------------------------------------------------------
    def mr_list(self: Forge, ctx: Ctx, p: sqlite3.Row | None) -> Response:
        where, args = listing_scope(ctx, p, "r")
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
