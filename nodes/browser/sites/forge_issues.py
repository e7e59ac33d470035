"""The code forge's issues: lists (a project's, and the dashboard's across projects) with GitLab's
filters (state, label_name[], assignee, author, milestone, search, sort), an issue's page with its
sidebar, comments, closing and reopening, and new issues. A mixin of ``forge.Forge``."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites.forge_common import (
    NAME_MAX,
    TEXT_MAX,
    TITLE_MAX,
    can_see,
    choice,
    day,
    find_user,
    listing_scope,
    may_triage,
    project_role,
    project_row,
    query_text,
    stamp,
    text,
    tick,
)
from nodes.browser.sites.forge_data import (
    REPORTER,
)
from nodes.browser.sites.framework import Ctx, search_words, whole

if TYPE_CHECKING:
    from nodes.browser.sites.forge import Forge


PER_PAGE = 20
ISSUE_SORTS = {"created_date": ("Created date", "i.created DESC"), "created_asc": ("Oldest created", "i.created ASC"),
               "updated_desc": ("Updated date", "i.updated DESC"), "updated_asc": ("Oldest updated", "i.updated ASC"),
               "due_date": ("Due date", "CASE WHEN i.due_date = '' THEN 1 ELSE 0 END, i.due_date ASC"),
               "title_asc": ("Title", "i.title COLLATE NOCASE ASC")}


class IssuePages:
    """Mixed into Forge; the merge requests reuse its comments, assignments and user checks."""

    # ---- issues -----------------------------------------------------------------------------------------
    def issue_list(self: Forge, ctx: Ctx, p: sqlite3.Row | None) -> Response:
        """The issues of one project, or (``p`` None) of every project the reader may see: the dashboard."""
        where, args = listing_scope(ctx, p, "i")
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
