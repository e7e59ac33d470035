"""What every page of the code forge shares: bounded form fields, who may see and do what, the
lookups of users, groups and projects, and the site's own clock.

Form fields are read through ``text`` and friends: a NUL byte, a field over its bound or a value
outside its choices is a 400 page that names the field and the bound, before anything is written,
so hostile input neither reaches SQLite or git nor leaves half a change behind."""

from __future__ import annotations

import re
import sqlite3
from datetime import date, datetime, timedelta
from typing import Any

from starlette.exceptions import HTTPException

from nodes.browser.sites.forge_data import GUEST, OWNER, REPORTER, ROLES
from nodes.browser.sites.framework import Ctx

TITLE_MAX = 255
NAME_MAX = 255
TEXT_MAX = 20_000  # an issue or merge request description, a comment, a bio
FILE_MAX = 200_000  # a file written through the web editor (bytes of UTF-8)
MESSAGE_MAX = 2_000  # a commit message
PATH_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
BRANCH_RE = re.compile(r"^(?!/)(?!.*//)(?!.*\.\.)(?!.*\.lock$)[A-Za-z0-9_][A-Za-z0-9_./-]*$")
#: first path segments that are pages of the site, never a user, group or project
RESERVED = frozenset({"dashboard", "users", "groups", "explore", "projects", "search", "api", "-", "help", "admin",
                      "assets", "uploads", "healthz", "reset", "images", "images.json", "new", "login", "public"})


def text(ctx: Ctx, name: str, limit: int, *, required: bool = False, label: str | None = None,
         strip: bool = True) -> str:
    """A form field as text: at most ``limit`` characters, no NUL byte; a clear 400 otherwise."""
    label = label or name
    value = ctx.form.get(name, "")
    if "\x00" in value:
        raise HTTPException(400, f"{label} must not contain NUL bytes")
    if len(value) > limit:
        raise HTTPException(400, f"{label} is at most {limit:,} characters, got {len(value):,}")
    if strip:
        value = value.strip()
    if required and not value:
        raise HTTPException(400, f"{label} is required")
    return value


def choice(ctx: Ctx, name: str, allowed: tuple[str, ...] | list[str], default: str | None = None,
           label: str | None = None) -> str:
    value = ctx.form.get(name, "") or (default or "")
    if value not in allowed:
        raise HTTPException(400, f"{label or name} must be one of {', '.join(allowed)}, got {value[:40]!r}")
    return value


def day(ctx: Ctx, name: str, label: str | None = None, required: bool = False) -> str:
    """An ISO date (YYYY-MM-DD) from 1970 to 2999, or "" when the field is empty and not required."""
    value = text(ctx, name, 10, label=label, required=required)
    if not value:
        return ""
    try:
        parsed = date.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or not 1970 <= parsed.year <= 2999:
        raise HTTPException(400, f"{label or name} must be a date like 2030-01-31, got {value[:20]!r}")
    return parsed.isoformat()


def role_field(ctx: Ctx, name: str = "access_level") -> int:
    value = ctx.form.get(name, "").strip()
    for level, title in ROLES.items():
        if value in (str(level), title, title.lower()):
            return level
    raise HTTPException(400, f"{name} must be one of {', '.join(ROLES.values())}, got {value[:40]!r}")


def query_text(ctx: Ctx, name: str, limit: int = 200) -> str:
    value = ctx.query.get(name, "")
    if "\x00" in value or len(value) > limit:
        raise HTTPException(400, f"{name} must be at most {limit} characters without NUL bytes")
    return value.strip()


# ---- the clock ----------------------------------------------------------------------------------

def tick(ctx: Ctx) -> datetime:
    """The site's clock, one minute on per write: new content sorts after the seeded content, and the
    same actions give the same pages in every run."""
    now = datetime.strptime(ctx.db.execute("SELECT now FROM clock").fetchone()[0], "%Y-%m-%d %H:%M")
    now += timedelta(minutes=1)
    ctx.db.execute("UPDATE clock SET now = ?", (now.strftime("%Y-%m-%d %H:%M"),))
    return now


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


# ---- lookups --------------------------------------------------------------------------------------

def user_row(db: sqlite3.Connection, username: str) -> sqlite3.Row | None:
    return db.execute("SELECT * FROM users WHERE username = ? COLLATE NOCASE", (username.lstrip("@"),)).fetchone()


def find_user(db: sqlite3.Connection, who: str, label: str = "user") -> sqlite3.Row:
    """A user by username (with or without @), e-mail or exact full name; 400 naming the field otherwise."""
    who = who.strip()
    row = user_row(db, who) or db.execute("SELECT * FROM users WHERE email = ? COLLATE NOCASE OR name = ? "
                                          "COLLATE NOCASE", (who, who)).fetchone()
    if row is None:
        raise HTTPException(400, f"{label}: no user {who[:80]!r}")
    return row


def group_row(db: sqlite3.Connection, path: str) -> sqlite3.Row | None:
    return db.execute("SELECT * FROM forge_groups WHERE path = ?", (path,)).fetchone()


def group_role(db: sqlite3.Connection, group: str, user: str | None) -> int:
    if user is None:
        return 0
    row = db.execute("SELECT role FROM group_members WHERE group_path = ? AND username = ?", (group, user)).fetchone()
    return int(row[0]) if row else 0


def project_role(db: sqlite3.Connection, project: sqlite3.Row, user: str | None) -> int:
    """The user's role in the project: their own membership or their group's, whichever is higher."""
    if user is None:
        return 0
    row = db.execute("SELECT role FROM project_members WHERE project_id = ? AND username = ?",
                     (project["id"], user)).fetchone()
    return max(int(row[0]) if row else 0, group_role(db, project["namespace"], user))


def can_see(db: sqlite3.Connection, project: sqlite3.Row, user: str | None) -> bool:
    if project["visibility"] == "public":
        return True
    if project["visibility"] == "internal":
        return user is not None
    return project_role(db, project, user) >= GUEST


def visible_clause(user: str | None, alias: str = "p") -> tuple[str, list[Any]]:
    """SQL (and its arguments) keeping the projects ``user`` may see."""
    if user is None:
        return f"{alias}.visibility = 'public'", []
    return (f"({alias}.visibility IN ('public', 'internal') OR EXISTS (SELECT 1 FROM project_members m WHERE "
            f"m.project_id = {alias}.id AND m.username = ?) OR EXISTS (SELECT 1 FROM group_members g WHERE "
            f"g.group_path = {alias}.namespace AND g.username = ?))", [user, user])


def listing_scope(ctx: Ctx, project: sqlite3.Row | None, alias: str) -> tuple[list[str], list[Any]]:
    """The WHERE parts (and arguments) of an issue or merge-request listing: one project's rows, or,
    on a dashboard (``project`` None), those of every project the reader may see."""
    if project is not None:
        return ["1 = 1", f"{alias}.project_id = ?"], [project["id"]]
    visible, args = visible_clause(ctx.user)
    return ["1 = 1", visible], list(args)


def project_row(ctx: Ctx, ns: str | None = None, path: str | None = None) -> sqlite3.Row:
    """The project of the URL (``{ns}/{project}``), or a 404 when it does not exist or is hidden from
    the reader (GitLab answers 404 for private projects too, so their names do not leak)."""
    ns = ns if ns is not None else ctx.path["ns"]
    path = path if path is not None else ctx.path["project"]
    row = ctx.db.execute(f"SELECT {PROJECT_COLUMNS} FROM projects p WHERE p.namespace = ? AND p.path = ?",
                         (ns, path)).fetchone()
    if row is None or not can_see(ctx.db, row, ctx.user):
        raise HTTPException(404, f"no project {ns[:80]}/{path[:80]}")
    return row


PROJECT_COLUMNS = ("p.*, p.base_stars + (SELECT COUNT(*) FROM stars s WHERE s.project_id = p.id) AS stars, "
                   "(SELECT COUNT(*) FROM projects f WHERE f.forked_from = p.id) AS forks, "
                   "(SELECT COUNT(*) FROM issues i WHERE i.project_id = p.id AND i.state = 'opened') AS open_issues, "
                   "(SELECT COUNT(*) FROM merge_requests r WHERE r.project_id = p.id AND r.state = 'opened') AS open_mrs")


def need_role(ctx: Ctx, project: sqlite3.Row, level: int, what: str) -> str:
    """The logged-in user when their role is at least ``level``; 401/403 naming the role otherwise."""
    user = ctx.need_user()
    if project_role(ctx.db, project, user) < level:
        raise HTTPException(403, f"{what} needs the {ROLES[level]} role or higher in "
                            f"{project['namespace']}/{project['path']}")
    return user


def may_triage(ctx: Ctx, project: sqlite3.Row, author: str) -> str:
    """Closing, reopening and editing an issue: its author, or a Reporter or higher."""
    user = ctx.need_user()
    if user != author and project_role(ctx.db, project, user) < REPORTER:
        raise HTTPException(403, f"only the author or a Reporter or higher may change this in "
                            f"{project['namespace']}/{project['path']}")
    return user


def is_owner(db: sqlite3.Connection, project: sqlite3.Row, user: str | None) -> bool:
    return project_role(db, project, user) >= OWNER


def valid_path(value: str, label: str) -> str:
    """A project or group path: letters, digits, '_', '-', '.', starting with a letter, digit or '_'."""
    if not PATH_RE.match(value) or value.endswith((".git", ".atom")) or len(value) > 100:
        raise HTTPException(400, f"{label} may hold letters, digits, '_', '-' and '.', must start with a letter, "
                            f"digit or '_', must not end in .git or .atom, and is at most 100 characters; got "
                            f"{value[:60]!r}")
    if value.lower() in RESERVED:
        raise HTTPException(400, f"{label} {value!r} is reserved")
    return value


def valid_branch(value: str, label: str = "branch") -> str:
    if not BRANCH_RE.match(value) or len(value) > 200:
        raise HTTPException(400, f"{label} {value[:60]!r} is not a valid branch name")
    return value


def namespace_taken(db: sqlite3.Connection, path: str) -> bool:
    return bool(user_row(db, path) or group_row(db, path))
