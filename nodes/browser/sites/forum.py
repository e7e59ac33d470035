"""Forum: a Postmill-shaped link aggregator (forums, posts with images, threaded comments, votes, new
posts, blocking a user), on VWA's URL shapes: ``/f/<forum>``, ``/f/<forum>/<id>/<slug>``,
``/f/<forum>/<id>/-/comment/<comment>`` (a comment and its replies, with a reply form), ``/submit``,
``/user/<name>``, ``/user/<name>/comments``, ``/sv/<id>`` (vote), ``/login``.

Comments are marked up as the Postmill WebArena hosts is, so VWA's ``reddit_*`` helpers read either:
``article.comment[data-level]`` nested in its parent's ``.comment__replies``, the author in the
header's ``a.fg-inherit``, the time in the header's ``time[datetime]``, the text in
``.comment__content`` and the score in ``.vote__net-score``."""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites import content, images
from nodes.browser.sites.framework import Ctx, Handler, Site, layout, page_number, whole

PER_PAGE = 15
ME = "MarvelsGrantMan136"
FORUMS = {"pics": "Pictures", "memes": "Memes", "gadgets": "Gadgets", "DIY": "Do it yourself", "books": "Books",
          "Pittsburgh": "Pittsburgh"}
SORTS = {"hot": "score DESC, s.id DESC", "new": "s.created DESC, s.id DESC", "top": "score DESC, s.id ASC"}
CAPTIONS = ("Look at this", "Found this today", "My weekend project", "Thoughts?", "Made me smile", "Rate my setup")
WORDS = ("WOW", "SALE", "HELLO", "MONDAY", "NOPE", "YES", "OOPS", "")

SCHEMA = """
CREATE TABLE forums (name TEXT PRIMARY KEY, title TEXT NOT NULL);
CREATE TABLE submissions (id INTEGER PRIMARY KEY, forum TEXT NOT NULL REFERENCES forums(name), title TEXT NOT NULL,
    slug TEXT NOT NULL, body TEXT NOT NULL, image_id INTEGER, author TEXT NOT NULL, created TEXT NOT NULL,
    base_score INTEGER NOT NULL);
CREATE TABLE comments (id INTEGER PRIMARY KEY, submission_id INTEGER NOT NULL REFERENCES submissions(id),
    author TEXT NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL, parent_id INTEGER REFERENCES comments(id),
    base_score INTEGER NOT NULL DEFAULT 1);
CREATE TABLE votes (username TEXT NOT NULL, submission_id INTEGER NOT NULL, choice INTEGER NOT NULL,
    PRIMARY KEY (username, submission_id));
CREATE TABLE blocks (blocker TEXT NOT NULL, blocked TEXT NOT NULL, PRIMARY KEY (blocker, blocked));
"""

SCORED = """SELECT s.*, s.base_score + COALESCE((SELECT SUM(choice) FROM votes v WHERE v.submission_id = s.id), 0)
    AS score, (SELECT COUNT(*) FROM comments c WHERE c.submission_id = s.id) AS n_comments,
    (SELECT choice FROM votes v WHERE v.submission_id = s.id AND v.username = ?) AS my_vote FROM submissions s"""

NAV = """ <a href="/forums">Forums</a> <a href="/submit">Submit</a>
{% if user %}<a href="/user/{{ user }}">Profile</a> <a href="/logout">Log out</a>{% else %}<a href="/login">Log in</a>{% endif %}"""

TEMPLATES = {
    "layout.html": layout("Postmill", NAV),
    "list.html": """{% extends "layout.html" %}{% block title %}{{ heading }}{% endblock %}{% block content %}
<h1>{{ heading }}</h1>{% if forum %}<p><a href="/submit/{{ forum }}">Submit a new post</a></p>{% endif %}
<p>Sort: {% for s in ["hot", "new", "top"] %}<a href="{{ base }}/{{ s }}">{{ s }}</a> {% endfor %}</p>
{% for s in posts %}{% include "row.html" %}{% else %}<p>There are no submissions here.</p>{% endfor %}
{% if more %}<a href="{{ base }}/{{ sort }}?p={{ page + 1 }}">More</a>{% endif %}{% endblock %}""",
    "row.html": """<article class="submission" data-id="{{ s.id }}">
<span class="vote-count">{{ s.score }}</span>
{% if s.image_id %}<img class="submission__thumbnail thumb" src="/images/{{ s.image_id }}.png" alt="{{ s.title }}">{% endif %}
<h2 class="submission__title"><a href="/f/{{ s.forum }}/{{ s.id }}/{{ s.slug }}" class="submission__link">{{ s.title }}</a></h2>
<p class="muted">submitted {{ s.created }} by <a href="/user/{{ s.author }}" class="submission__submitter">{{ s.author }}</a>
to <a href="/f/{{ s.forum }}">{{ s.forum }}</a> · <a href="/f/{{ s.forum }}/{{ s.id }}/{{ s.slug }}">{{ s.n_comments }} comments</a></p></article>""",
    "post.html": """{% extends "layout.html" %}{% block title %}{{ s.title }}{% endblock %}{% block content %}
{% include "row.html" %}{% if s.image_id %}<img class="submission__image big" src="/images/{{ s.image_id }}.png" alt="{{ s.title }}">{% endif %}
<div class="submission__body">{{ s.body }}</div>
<form class="inline vote" method="post" action="/sv/{{ s.id }}"><input type="hidden" name="choice" value="1">
<button type="submit" class="vote__up" {% if s.my_vote == 1 %}aria-pressed="true"{% endif %}>Upvote</button></form>
<form class="inline vote" method="post" action="/sv/{{ s.id }}"><input type="hidden" name="choice" value="-1">
<button type="submit" class="vote__down" {% if s.my_vote == -1 %}aria-pressed="true"{% endif %}>Downvote</button></form>
<h2>Comments</h2>{% include "thread.html" %}
<form method="post" action="/f/{{ s.forum }}/{{ s.id }}/-/comment"><label>Comment <textarea name="comment"></textarea></label>
<button type="submit">Post</button></form>{% endblock %}""",
    "thread.html": """{% for c in comments recursive %}<article class="comment" id="comment_{{ c.id }}" data-level="{{ loop.depth }}">
<div class="comment__row"><div class="comment__main"><header class="comment__header"><h1 class="comment__info"><span class="muted">
<a href="/user/{{ c.author }}" class="comment__author fg-inherit">{{ c.author }}</a> wrote <time datetime="{{ c.iso }}">{{ c.created }}</time>
</span></h1></header><div class="comment__body comment__content">{{ c.body }}</div>
<nav class="comment__nav"><a href="/f/{{ s.forum }}/{{ s.id }}/-/comment/{{ c.id }}" class="comment__reply-link">Reply</a></nav></div>
<div class="comment__vote"><span class="vote__net-score">{{ c.score }}</span></div></div>
{% if c.children %}<div class="comment__replies">{{ loop(c.children) }}</div>{% endif %}</article>{% else %}<p>No comments.</p>{% endfor %}""",
    "comment.html": """{% extends "layout.html" %}{% block title %}Comment on {{ s.title }}{% endblock %}{% block content %}
{% include "row.html" %}<p><a href="/f/{{ s.forum }}/{{ s.id }}/{{ s.slug }}">All comments</a></p>{% include "thread.html" %}
<form method="post" action="/f/{{ s.forum }}/{{ s.id }}/-/comment/{{ parent }}"><label>Reply <textarea name="comment"></textarea></label>
<button type="submit">Reply</button></form>{% endblock %}""",
    "user_comments.html": """{% extends "layout.html" %}{% block title %}Comments by {{ name }}{% endblock %}{% block content %}
<h1 class="user-name">{{ name }}</h1><h2>Comments</h2>{% for c in comments %}<div class="comment-context">
<a href="/f/{{ c.forum }}/{{ c.submission_id }}/-/comment/{{ c.id }}">{{ c.title }}</a> <span class="muted">{{ c.created }}</span>
<div class="comment__body">{{ c.body }}</div></div>{% else %}<p>None.</p>{% endfor %}{% endblock %}""",
    "forums.html": """{% extends "layout.html" %}{% block title %}Forums{% endblock %}{% block content %}
<h1>Forums</h1><ul>{% for f in forums %}<li><a href="/f/{{ f.name }}">{{ f.name }}</a> · {{ f.title }} ({{ f.n }} submissions)</li>{% endfor %}</ul>{% endblock %}""",
    "submit.html": """{% extends "layout.html" %}{% block title %}Create submission{% endblock %}{% block content %}
<h1>Create submission</h1><form method="post" action="/submit" enctype="multipart/form-data">
<label>Title <input name="title"></label><label>Body <textarea name="body"></textarea></label>
<label>Image <input type="file" name="image" accept="image/*"></label>
<label>Forum <select name="forum">{% for f in forums %}<option {% if f.name == forum %}selected{% endif %}>{{ f.name }}</option>{% endfor %}</select></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit">Create submission</button></form>{% endblock %}""",
    "user.html": """{% extends "layout.html" %}{% block title %}{{ name }}{% endblock %}{% block content %}
<h1 class="user-name">{{ name }}</h1>{% if user and user != name %}
<form method="post" action="/user/{{ name }}/{{ 'unblock_user' if blocked else 'block_user' }}">
<button type="submit" class="block-user">{{ 'Unblock' if blocked else 'Block' }}</button></form>{% endif %}
{% if user == name %}<p><a href="/user/{{ name }}/block_list">Blocked users</a></p>{% endif %}
<h2>Submissions</h2>{% for s in posts %}{% include "row.html" %}{% else %}<p>None.</p>{% endfor %}
<h2>Comments</h2>{% for c in comments %}<div class="comment"><a href="/f/{{ c.forum }}/{{ c.submission_id }}/{{ c.slug }}">{{ c.title }}</a>
<div class="comment__body">{{ c.body }}</div></div>{% else %}<p>None.</p>{% endfor %}{% endblock %}""",
    "blocks.html": """{% extends "layout.html" %}{% block title %}Blocked users{% endblock %}{% block content %}
<h1>Blocked users</h1><ul class="block-list">{% for b in blocked %}<li><a href="/user/{{ b }}">{{ b }}</a></li>{% else %}<li>Nobody.</li>{% endfor %}</ul>{% endblock %}""",
    "login.html": """{% extends "layout.html" %}{% block title %}Log in{% endblock %}{% block content %}
<h1>Log in</h1><form method="post" action="/login_check"><label>Username <input name="_username"></label>
<label>Password <input name="_password" type="password"></label>{% if error %}<p class="error">{{ error }}</p>{% endif %}
<button type="submit">Log in</button></form>{% endblock %}""",
}


class Forum(Site):
    name = "forum"
    schema = SCHEMA
    templates_source = TEMPLATES
    default_size = 60
    accounts = ((ME, "marvelsgrantman136@example.com", "test1234", ME),)

    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        db.executemany("INSERT INTO forums VALUES (?, ?)", list(FORUMS.items()))
        people = sorted({content.person(rng)[0].replace(" ", "_") for _ in range(30)})
        for n in range(1, self.size + 1):
            forum = rng.choice(list(FORUMS))
            author = ME if n % 9 == 4 else rng.choice(people)
            with_image = forum in ("pics", "memes", "gadgets") or rng.random() < 0.3
            if with_image:
                picture = images.random_picture(rng, text=rng.choice(WORDS) if forum == "memes" else "")
                title = f"{rng.choice(CAPTIONS)} ({n})"
                image_id: int | None = self.add_picture(db, f"submission:{n}", picture)
            else:
                title, image_id = f"{content.sentence(rng, 'discussion').rstrip('.')} #{n}", None
            db.execute("INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (n, forum, title, content.slugify(title), content.paragraph(rng, "post", 2), image_id, author,
                        content.stamp(n * 61), rng.randint(0, 120)))
            first: int | None = None
            for c in range(rng.choice((0, 1, 2, 3))):
                # every third later comment replies to the post's first one; the scores follow from the ids
                # (no draws of their own: the seeded content stays what it was before comments nested)
                parent = first if c and (n + c) % 3 == 0 else None
                cur = db.execute("INSERT INTO comments (submission_id, author, body, created, parent_id, base_score) "
                                 "VALUES (?, ?, ?, ?, ?, ?)", (n, rng.choice(people), content.sentence(rng, "post"),
                                                               content.stamp(n * 61 + 5 + c), parent, (n * 7 + c * 5) % 23))
                first = first or cur.lastrowid

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        return [("/", self.front, ["GET"]), ("/forums", self.forums, ["GET"]),
                ("/f/{forum}", self.forum, ["GET"]), ("/f/{forum}/{sort:str}", self.forum, ["GET"]),
                ("/f/{forum}/{id:int}/{slug}", self.post, ["GET"]),
                ("/f/{forum}/{id:int}/-/comment", self.comment, ["POST"]),
                ("/f/{forum}/{id:int}/-/comment/{comment:int}", self.reply, ["GET", "POST"]),
                ("/sv/{id:int}", self.vote, ["POST"]),
                ("/submit", self.submit, ["GET", "POST"]), ("/submit/{forum}", self.submit, ["GET"]),
                ("/user/{name}", self.profile, ["GET"]), ("/user/{name}/comments", self.user_comments, ["GET"]),
                ("/user/{name}/block_user", self.block, ["POST"]),
                ("/user/{name}/unblock_user", self.unblock, ["POST"]), ("/user/{name}/block_list", self.block_list, ["GET"]),
                ("/login", lambda ctx: ctx.render("login.html", error=None), ["GET"]),
                ("/login_check", self.login, ["POST"]), ("/logout", self.logout, ["GET"])]

    # listings ----------------------------------------------------------------------------------
    def _posts(self, ctx: Ctx, where: str, args: list[object], sort: str, page: int) -> tuple[list[sqlite3.Row], bool]:
        """Submissions, newest or best first, without those of users the reader has blocked."""
        hide = "s.author NOT IN (SELECT blocked FROM blocks WHERE blocker = ?)"
        sql = f"SELECT * FROM ({SCORED}) s WHERE {where} AND {hide} ORDER BY {SORTS[sort]} LIMIT ? OFFSET ?"
        rows = ctx.db.execute(sql, [ctx.user, *args, ctx.user, PER_PAGE + 1, (page - 1) * PER_PAGE]).fetchall()
        return rows[:PER_PAGE], len(rows) > PER_PAGE

    def front(self, ctx: Ctx) -> Response:
        posts, more = self._posts(ctx, "1 = 1", [], "hot", page_number(ctx))
        return ctx.render("list.html", heading="Featured", forum=None, posts=posts, base="/f/all", sort="hot",
                          page=page_number(ctx), more=more)

    def forum(self, ctx: Ctx) -> Response:
        name, sort = ctx.path["forum"], ctx.path.get("sort", "hot")
        if sort.isdigit():  # /f/<forum>/<id> without its slug
            s = self._submission(ctx, whole(sort, "id"))
            return ctx.redirect(f"/f/{s['forum']}/{s['id']}/{s['slug']}")
        if sort not in SORTS:
            raise HTTPException(404, f"no sort {sort!r}; allowed: {', '.join(SORTS)}")
        if name == "all":
            where, args, heading = "1 = 1", [], "All forums"
        else:
            row = ctx.db.execute("SELECT name FROM forums WHERE name = ? COLLATE NOCASE", (name,)).fetchone()
            if row is None:
                raise HTTPException(404, f"no forum named {name!r}")
            name, where, args, heading = row[0], "s.forum = ?", [row[0]], f"/f/{row[0]}"
        page = page_number(ctx)
        posts, more = self._posts(ctx, where, args, sort, page)
        return ctx.render("list.html", heading=heading, forum=None if name == "all" else name, posts=posts,
                          base=f"/f/{name}", sort=sort, page=page, more=more)

    def forums(self, ctx: Ctx) -> Response:
        return ctx.render("forums.html", forums=ctx.db.execute(
            "SELECT f.name, f.title, COUNT(s.id) AS n FROM forums f LEFT JOIN submissions s ON s.forum = f.name "
            "GROUP BY f.name ORDER BY f.name COLLATE NOCASE").fetchall())

    def post(self, ctx: Ctx) -> Response:
        s = self._submission(ctx, ctx.path["id"])
        return ctx.render("post.html", s=s, comments=self._thread(ctx, s["id"]))

    def _thread(self, ctx: Ctx, submission_id: int, root: int | None = None) -> list[dict[str, object]]:
        """The post's comments as a tree (oldest first at each level), or the subtree of ``root``."""
        rows = ctx.db.execute("SELECT * FROM comments WHERE submission_id = ? ORDER BY id", (submission_id,)).fetchall()
        nodes = {r["id"]: {**dict(r), "score": r["base_score"], "iso": _iso(r["created"]), "children": []}
                 for r in rows}
        top: list[dict[str, object]] = []
        for r in rows:
            parent = nodes.get(r["parent_id"]) if r["parent_id"] is not None else None
            (parent["children"] if parent is not None else top).append(nodes[r["id"]])  # type: ignore[union-attr]
        if root is None:
            return top
        if root not in nodes:
            raise HTTPException(404, f"no comment {root} on submission {submission_id}")
        return [nodes[root]]

    # actions -----------------------------------------------------------------------------------
    def comment(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        s = self._submission(ctx, ctx.path["id"])
        body = ctx.form.get("comment", "").strip()
        if not body:
            raise HTTPException(400, "a comment needs a text")
        ctx.db.execute("INSERT INTO comments (submission_id, author, body, created) VALUES (?, ?, ?, ?)",
                       (s["id"], user, body, self._next_stamp(ctx)))
        return ctx.redirect(f"/f/{s['forum']}/{s['id']}/{s['slug']}")

    def reply(self, ctx: Ctx) -> Response:
        """Postmill's comment page: the comment and its replies with a reply form (GET); a reply (POST)."""
        s = self._submission(ctx, ctx.path["id"])
        thread = self._thread(ctx, s["id"], ctx.path["comment"])
        if ctx.request.method == "GET":
            return ctx.render("comment.html", s=s, comments=thread, parent=ctx.path["comment"])
        user = ctx.need_user()
        body = ctx.form.get("comment", "").strip()
        if not body:
            raise HTTPException(400, "a reply needs a text")
        cur = ctx.db.execute("INSERT INTO comments (submission_id, author, body, created, parent_id) VALUES "
                             "(?, ?, ?, ?, ?)", (s["id"], user, body, self._next_stamp(ctx), ctx.path["comment"]))
        return ctx.redirect(f"/f/{s['forum']}/{s['id']}/{s['slug']}#comment_{cur.lastrowid}")

    def vote(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        s = self._submission(ctx, ctx.path["id"])
        choice = ctx.form.get("choice", "")
        if choice not in ("1", "-1", "0"):
            raise HTTPException(400, f"choice must be 1, -1 or 0, got {choice!r}")
        # voting the same way twice takes the vote back, as Postmill's buttons do
        if s["my_vote"] == int(choice) or choice == "0":
            ctx.db.execute("DELETE FROM votes WHERE username = ? AND submission_id = ?", (user, s["id"]))
        else:
            ctx.db.execute("INSERT OR REPLACE INTO votes VALUES (?, ?, ?)", (user, s["id"], int(choice)))
        return ctx.redirect(f"/f/{s['forum']}/{s['id']}/{s['slug']}")

    def submit(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        forums = ctx.db.execute("SELECT name FROM forums ORDER BY name COLLATE NOCASE").fetchall()
        if ctx.request.method == "GET":
            return ctx.render("submit.html", forums=forums, forum=ctx.path.get("forum"), error=None)
        title, forum = ctx.form.get("title", "").strip(), ctx.form.get("forum", "")
        if not title or forum not in {f["name"] for f in forums}:
            return ctx.render("submit.html", status=400, forums=forums, forum=forum,
                              error="A title and an existing forum are required.")
        new_id = ctx.db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM submissions").fetchone()[0]
        image_id = None
        if ctx.files.get("image"):
            cur = ctx.db.execute("INSERT INTO images (owner, kind, colour, count, text, background, png) VALUES "
                                 "(?, 'upload', '', 0, '', '', ?)", (f"submission:{new_id}", ctx.files["image"]))
            image_id = cur.lastrowid
        slug = content.slugify(title)
        ctx.db.execute("INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
                       (new_id, forum, title, slug, ctx.form.get("body", "").strip(), image_id, user,
                        self._next_stamp(ctx)))
        return ctx.redirect(f"/f/{forum}/{new_id}/{slug}")

    def profile(self, ctx: Ctx) -> Response:
        name = ctx.path["name"]
        posts = ctx.db.execute(f"SELECT * FROM ({SCORED}) s WHERE author = ? ORDER BY s.id DESC",
                               (ctx.user, name)).fetchall()
        comments = ctx.db.execute("SELECT c.*, s.forum, s.slug, s.title FROM comments c JOIN submissions s ON "
                                  "s.id = c.submission_id WHERE c.author = ? ORDER BY c.id DESC", (name,)).fetchall()
        if not posts and not comments and not ctx.db.execute("SELECT 1 FROM accounts WHERE username = ?", (name,)).fetchone():
            raise HTTPException(404, f"no user named {name!r}")
        blocked = ctx.db.execute("SELECT 1 FROM blocks WHERE blocker = ? AND blocked = ?", (ctx.user, name)).fetchone()
        return ctx.render("user.html", name=name, posts=posts, comments=comments, blocked=bool(blocked))

    def user_comments(self, ctx: Ctx) -> Response:
        name = ctx.path["name"]
        comments = ctx.db.execute("SELECT c.*, s.forum, s.title FROM comments c JOIN submissions s ON "
                                  "s.id = c.submission_id WHERE c.author = ? ORDER BY c.id DESC", (name,)).fetchall()
        if not comments and not ctx.db.execute("SELECT 1 FROM accounts WHERE username = ?", (name,)).fetchone() \
                and not ctx.db.execute("SELECT 1 FROM submissions WHERE author = ?", (name,)).fetchone():
            raise HTTPException(404, f"no user named {name!r}")
        return ctx.render("user_comments.html", name=name, comments=comments)

    def block(self, ctx: Ctx) -> Response:
        user, name = ctx.need_user(), ctx.path["name"]
        if name == user:
            raise HTTPException(400, "you cannot block yourself")
        ctx.db.execute("INSERT OR IGNORE INTO blocks VALUES (?, ?)", (user, name))
        return ctx.redirect(f"/user/{name}")

    def unblock(self, ctx: Ctx) -> Response:
        ctx.db.execute("DELETE FROM blocks WHERE blocker = ? AND blocked = ?", (ctx.need_user(), ctx.path["name"]))
        return ctx.redirect(f"/user/{ctx.path['name']}")

    def block_list(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        if user != ctx.path["name"]:
            raise HTTPException(403, "only the user sees their own block list")
        return ctx.render("blocks.html", blocked=[r[0] for r in ctx.db.execute(
            "SELECT blocked FROM blocks WHERE blocker = ? ORDER BY blocked", (user,))])

    def login(self, ctx: Ctx) -> Response:
        user = self.check_login(ctx.db, ctx.form.get("_username", ""), ctx.form.get("_password", ""))
        if user is None:
            return ctx.render("login.html", status=401, error="Invalid credentials.")
        ctx.log_in(user)
        return ctx.redirect("/")

    def logout(self, ctx: Ctx) -> Response:
        ctx.log_out()
        return ctx.redirect("/")

    # helpers -----------------------------------------------------------------------------------
    def _submission(self, ctx: Ctx, submission_id: int) -> sqlite3.Row:
        row = ctx.db.execute(f"SELECT * FROM ({SCORED}) s WHERE s.id = ?", (ctx.user, submission_id)).fetchone()
        if row is None:
            raise HTTPException(404, f"no submission {submission_id}")
        return row

    def _next_stamp(self, ctx: Ctx) -> str:
        newest = ctx.db.execute("SELECT MAX(created) FROM (SELECT created FROM submissions UNION ALL "
                                "SELECT created FROM comments)").fetchone()[0]
        return (datetime.strptime(newest, "%Y-%m-%d %H:%M") + timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M")


def _iso(stamp: str) -> str:
    """A stored ``YYYY-MM-DD HH:MM`` as the ISO 8601 time a ``<time datetime>`` carries (UTC)."""
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M").strftime("%Y-%m-%dT%H:%M:00+00:00")
