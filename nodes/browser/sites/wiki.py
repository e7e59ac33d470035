"""Wiki: a Kiwix-shaped encyclopedia for lookup tasks, on VWA's URL shapes:
``/wikipedia_en_all_maxi_2022-05/A/<Title>`` for an article and
``/search?content=wikipedia_en_all_maxi_2022-05&pattern=...`` for full-text search.

Articles cover the sites' own vocabulary (the cities of the classifieds, the shapes and colours of
every picture) plus seeded people, each with an infobox of facts drawn from the seed."""

from __future__ import annotations

import random
import sqlite3
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites import content, images
from nodes.browser.sites.framework import Ctx, Handler, Site, layout, page_number, search_words

BOOK = "wikipedia_en_all_maxi_2022-05"
PER_PAGE = 20
PROFESSIONS = ("painter", "chemist", "architect", "composer", "cartographer", "engineer", "poet", "astronomer")

SCHEMA = """
CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
    summary TEXT NOT NULL, body TEXT NOT NULL, image_id INTEGER);
CREATE TABLE facts (article_id INTEGER NOT NULL REFERENCES articles(id), position INTEGER NOT NULL,
    name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (article_id, position));
"""

NAV = f""" <a href="/{BOOK}/A/Main_Page">Main page</a>
<form class="inline" action="/search" method="get"><input type="hidden" name="content" value="{BOOK}">
<input name="pattern" placeholder="Search Wikipedia" aria-label="Search Wikipedia"><button type="submit">Search</button></form>"""

TEMPLATES = {
    "layout.html": layout("Wikipedia", NAV, ".infobox { float: right; margin: 0 0 10px 16px; background: #fff; }"),
    "article.html": """{% extends "layout.html" %}{% block title %}{{ a.title }}{% endblock %}{% block content %}
<h1 id="firstHeading">{{ a.title }}</h1><table class="infobox"><caption>{{ a.title }}</caption>
{% if a.image_id %}<tr><td colspan="2"><img class="thumb" src="/images/{{ a.image_id }}.png" alt="{{ a.title }}"></td></tr>{% endif %}
{% for f in facts %}<tr><th>{{ f.name }}</th><td>{{ f.value }}</td></tr>{% endfor %}</table>
<p class="summary">{{ a.summary }}</p>{% for para in a.body.split("\\n") %}<p>{{ para }}</p>{% endfor %}
<h2>See also</h2><ul>{% for t in related %}<li><a href="{{ link(t) }}">{{ t }}</a></li>{% endfor %}</ul>{% endblock %}""",
    "main.html": """{% extends "layout.html" %}{% block title %}Wikipedia, the offline encyclopedia{% endblock %}{% block content %}
<h1>Welcome to Wikipedia</h1><p>{{ total }} articles.</p>{% for kind, titles in groups %}<h2>{{ kind }}</h2>
<ul>{% for t in titles %}<li><a href="{{ link(t) }}">{{ t }}</a></li>{% endfor %}</ul>{% endfor %}{% endblock %}""",
    "search.html": """{% extends "layout.html" %}{% block title %}Search: {{ pattern }}{% endblock %}{% block content %}
<h1>Search results for “{{ pattern }}”</h1><p class="muted">{{ total }} results</p><ul class="results">
{% for r in results %}<li><a href="{{ link(r.title) }}">{{ r.title }}</a><div class="muted">{{ r.summary }}</div></li>
{% else %}<li>No results.</li>{% endfor %}</ul>{% if more %}<a href="{{ next_url }}">Next »</a>{% endif %}{% endblock %}""",
}


def article_path(title: str) -> str:
    return f"/{BOOK}/A/{quote(title.replace(' ', '_'))}"


class Wiki(Site):
    name = "wiki"
    schema = SCHEMA
    templates_source = TEMPLATES
    default_size = 40

    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        entries: list[tuple[str, str, str, str, list[tuple[str, str]], images.Picture | None]] = []
        for city in content.CITIES:
            founded, people = rng.randint(1630, 1850), rng.randint(40, 900) * 1000
            mayor, _ = content.person(rng)
            facts = [("Founded", str(founded)), ("Population", f"{people:,}"), ("Mayor", mayor),
                     ("Area", f"{rng.randint(30, 400)} km²")]
            summary = f"{city} is a city in the northeastern United States, founded in {founded}."
            body = (f"As of the last census {city} had {people:,} inhabitants. Its mayor is {mayor}.\n"
                    f"The city is known for its {rng.choice(content.ADJECTIVES)} markets and its "
                    f"{rng.choice(content.ADJECTIVES)} harbour.")
            entries.append((city, "Cities", summary, body, facts, images.random_picture(rng, text=city)))
        for kind in images.KINDS:
            sides = {"circle": "0", "square": "4", "triangle": "3", "star": "10", "hexagon": "6", "diamond": "4",
                     "cross": "12"}[kind]
            facts = [("Sides", sides), ("First described", f"{rng.randint(300, 1700)} CE")]
            summary = f"A {kind} is a plane figure with {sides} straight sides." if sides != "0" else \
                "A circle is a round plane figure whose boundary is at a fixed distance from its centre."
            body = f"The {kind} appears on many flags and logos.\nIt is studied in elementary geometry."
            entries.append((kind.capitalize(), "Shapes", summary, body, facts, images.random_picture(rng, kind=kind)))
        for colour, rgb in images.COLOURS.items():
            hexcode = "#{:02X}{:02X}{:02X}".format(*rgb)
            facts = [("Hex triplet", hexcode), ("RGB", ", ".join(map(str, rgb)))]
            summary = f"{colour.capitalize()} is a colour; the sites' pictures draw it as {hexcode}."
            picture = images.Picture(kind="circle", colour=colour, count=1, text=colour, background="white")
            body = f"{colour.capitalize()} is one of the ten colours of the local sites' pictures.\nIts RGB value is {rgb}."
            entries.append((colour.capitalize(), "Colours", summary, body, facts, picture))
        taken = {title for title, *_ in entries}
        while len(entries) < self.size:
            who, _ = content.person(rng)
            if who in taken:
                who = f"{who} ({len(entries)})"
            taken.add(who)
            born, job, city = rng.randint(1800, 1990), rng.choice(PROFESSIONS), rng.choice(content.CITIES)
            facts = [("Born", f"{born}, {city}"), ("Occupation", job.capitalize()),
                     ("Known for", f"the {rng.choice(content.ADJECTIVES)} {rng.choice(images.KINDS)} series")]
            summary = f"{who} (born {born}) is a {job} from {city}."
            body = f"{who} grew up in {city} and worked as a {job}.\nTheir best-known work dates from {born + 30}."
            entries.append((who, "People", summary, body, facts, None))
        for n, (title, kind, summary, body, facts, picture) in enumerate(entries, start=1):
            image_id = self.add_picture(db, f"article:{n}", picture) if picture else None
            db.execute("INSERT INTO articles VALUES (?, ?, ?, ?, ?, ?)", (n, title, kind, summary, body, image_id))
            db.executemany("INSERT INTO facts VALUES (?, ?, ?, ?)",
                           [(n, i, name, value) for i, (name, value) in enumerate(facts)])

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        return [("/", lambda ctx: ctx.redirect(article_path("Main Page")), ["GET"]),
                (f"/{BOOK}/A/{{title:path}}", self.article, ["GET"]),
                ("/search", self.search, ["GET"])]

    def article(self, ctx: Ctx) -> Response:
        title = str(ctx.path["title"]).replace("_", " ")
        if title == "Main Page":
            rows = ctx.db.execute("SELECT kind, title FROM articles ORDER BY id").fetchall()
            groups: dict[str, list[str]] = {}
            for row in rows:
                groups.setdefault(row["kind"], []).append(row["title"])
            return ctx.render("main.html", groups=list(groups.items()), total=len(rows), link=article_path)
        row = ctx.db.execute("SELECT * FROM articles WHERE title = ? COLLATE NOCASE", (title,)).fetchone()
        if row is None:
            raise HTTPException(404, f"no article titled {title!r}")
        facts = ctx.db.execute("SELECT name, value FROM facts WHERE article_id = ? ORDER BY position", (row["id"],))
        related = [r[0] for r in ctx.db.execute("SELECT title FROM articles WHERE kind = ? AND id != ? ORDER BY id "
                                                 "LIMIT 5", (row["kind"], row["id"]))]
        return ctx.render("article.html", a=row, facts=facts.fetchall(), related=related, link=article_path)

    def search(self, ctx: Ctx) -> Response:
        pattern = ctx.query.get("pattern", "").strip()
        words = search_words(pattern, "pattern")
        where = " AND ".join(["(title LIKE ? OR summary LIKE ? OR body LIKE ?)"] * len(words)) or "1 = 1"
        args = [f"%{w}%" for w in words for _ in range(3)]
        # A title match ranks first, as Kiwix's own search tends to.
        order = "CASE WHEN title LIKE ? THEN 0 ELSE 1 END, id"
        total = ctx.db.execute(f"SELECT COUNT(*) FROM articles WHERE {where}", args).fetchone()[0]
        page = page_number(ctx, "pageNumber")
        results = ctx.db.execute(f"SELECT title, summary FROM articles WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
                                 [*args, f"%{pattern}%", PER_PAGE, (page - 1) * PER_PAGE]).fetchall()
        next_url = f"/search?content={BOOK}&pattern={quote(pattern)}&pageNumber={page + 1}"
        return ctx.render("search.html", pattern=pattern, results=results, total=total, link=article_path,
                          more=page * PER_PAGE < total, next_url=next_url)
