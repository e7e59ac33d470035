"""Classifieds: an OSClass-shaped marketplace (categories, search and filters, listings with
photos, posting and editing ads, comments), on VWA's URL shapes: ``/index.php?page=search&...``,
``/index.php?page=item&id=N``, ``/index.php?page=item&action=item_add``, ``page=login``, and the
token reset ``POST /index.php?page=reset``."""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta
from urllib.parse import urlencode

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites import content, images
from nodes.browser.sites.framework import Ctx, Handler, Site, layout, page_number, search_words, whole

RESET_TOKEN = "4b61655535e7ed388f0d40a93600254c"  # VWA's classifieds reset token, so its env code works as is
PER_PAGE = 12
MAX_PRICE = 1_000_000_000  # dollars: far above any listing, far below SQLite's integer range
CATEGORIES: dict[str, tuple[str, ...]] = {
    "Antiques": ("clock", "vase", "mirror", "lamp"),
    "Appliances": ("toaster", "blender", "microwave", "kettle"),
    "Bicycles": ("road bike", "mountain bike", "kids bike", "bike helmet"),
    "Books": ("cookbook", "novel", "atlas", "comic collection"),
    "Clothing + accessories": ("jacket", "handbag", "scarf", "sneakers"),
    "Electronics": ("speaker", "monitor", "camera", "headphones"),
    "Furniture": ("armchair", "bookshelf", "coffee table", "desk"),
    "Toys + games": ("board game", "puzzle", "toy car", "plush toy"),
}
SORTS = {"dt_pub_date": "created", "i_price": "price"}

SCHEMA = """
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE listings (id INTEGER PRIMARY KEY, title TEXT NOT NULL, description TEXT NOT NULL,
    price INTEGER NOT NULL, category_id INTEGER NOT NULL REFERENCES categories(id), city TEXT NOT NULL,
    seller TEXT NOT NULL, owner TEXT, email TEXT NOT NULL, phone TEXT NOT NULL, image_id INTEGER,
    created TEXT NOT NULL);
CREATE TABLE comments (id INTEGER PRIMARY KEY, listing_id INTEGER NOT NULL REFERENCES listings(id),
    author TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL);
"""

NAV = """ <a href="/index.php?page=search">All listings</a> <a href="/index.php?page=item&action=item_add">Publish Ad</a>
{% if user %}<a href="/index.php?page=user&action=items">My listings</a> <a href="/index.php?page=logout">Logout</a>
{% else %}<a href="/index.php?page=login">Login</a>{% endif %}"""

TEMPLATES = {
    "layout.html": layout("Classifieds", NAV),
    "home.html": """{% extends "layout.html" %}{% block content %}
<h1>Classifieds</h1>
<form action="/index.php" method="get"><input type="hidden" name="page" value="search">
<input name="sPattern" placeholder="Search" aria-label="Search"><button type="submit">Search</button></form>
<h2>Categories</h2><ul class="categories">{% for c in categories %}
<li><a href="/index.php?page=search&sCategory={{ c.id }}">{{ c.name }}</a> ({{ c.n }})</li>{% endfor %}</ul>
<h2>Latest listings</h2>{% include "cards.html" %}{% endblock %}""",
    "cards.html": """<div class="cards">{% for l in listings %}<div class="card listing">
<a href="/index.php?page=item&id={{ l.id }}">{% if l.image_id %}<img src="/images/{{ l.image_id }}.png" alt="{{ l.title }}">{% endif %}
<div class="title">{{ l.title }}</div></a><div class="price">${{ "{:,}".format(l.price) }}</div>
<div class="muted">{{ l.city }} · {{ l.created }}</div></div>{% else %}<p>No listings found.</p>{% endfor %}</div>""",
    "search.html": """{% extends "layout.html" %}{% block title %}Search results - Classifieds{% endblock %}{% block content %}
<h1>{% if category %}{{ category }}{% else %}All listings{% endif %}</h1>
<form action="/index.php" method="get" class="filters"><input type="hidden" name="page" value="search">
<input name="sPattern" value="{{ q.get('sPattern') or '' }}" placeholder="Search" aria-label="Search">
<select name="sCategory" aria-label="Category"><option value="">All categories</option>{% for c in categories %}
<option value="{{ c.id }}" {% if q.get('sCategory') == c.id|string %}selected{% endif %}>{{ c.name }}</option>{% endfor %}</select>
<select name="sCity" aria-label="City"><option value="">All cities</option>{% for c in cities %}
<option {% if q.get('sCity') == c %}selected{% endif %}>{{ c }}</option>{% endfor %}</select>
<input name="sPriceMin" value="{{ q.get('sPriceMin') or '' }}" placeholder="Min price" aria-label="Min price" size="6">
<input name="sPriceMax" value="{{ q.get('sPriceMax') or '' }}" placeholder="Max price" aria-label="Max price" size="6">
<select name="sOrder" aria-label="Sort by"><option value="dt_pub_date">Newly listed</option>
<option value="i_price" {% if q.get('sOrder') == 'i_price' %}selected{% endif %}>Price</option></select>
<select name="iOrderType" aria-label="Order"><option value="desc">Descending</option>
<option value="asc" {% if q.get('iOrderType') == 'asc' %}selected{% endif %}>Ascending</option></select>
<button type="submit">Apply</button></form>
<p class="muted">{{ total }} results</p>{% include "cards.html" %}
<nav class="pages">{% if page > 1 %}<a href="{{ prev_url }}">« Previous</a>{% endif %}
{% if more %}<a href="{{ next_url }}">Next »</a>{% endif %}</nav>{% endblock %}""",
    "item.html": """{% extends "layout.html" %}{% block title %}{{ l.title }} - Classifieds{% endblock %}{% block content %}
<h1 class="item-title">{{ l.title }}</h1><div class="price" id="item-price">${{ "{:,}".format(l.price) }}</div>
<p class="muted">Category: <a href="/index.php?page=search&sCategory={{ l.category_id }}">{{ l.category }}</a> ·
Location: {{ l.city }} · Published {{ l.created }}</p>
{% if l.image_id %}<img class="big item-photo" src="/images/{{ l.image_id }}.png" alt="{{ l.title }}">{% endif %}
<div id="description">{{ l.description }}</div>
<p>Seller: <span class="seller">{{ l.seller }}</span> · {{ l.email }} · {{ l.phone }}</p>
{% if user and user == l.owner %}<a href="/index.php?page=item&action=item_edit&id={{ l.id }}">Edit listing</a>{% endif %}
<h2>Comments</h2><div id="comments">{% for c in comments %}<div class="comment"><b>{{ c.title }}</b> by
<span class="author">{{ c.author }}</span> <span class="muted">{{ c.created }}</span><p>{{ c.body }}</p></div>
{% else %}<p>No comments yet.</p>{% endfor %}</div>
<h3>Leave your comment</h3><form method="post" action="/index.php?page=item&action=add_comment&id={{ l.id }}">
{% if not user %}<label>Your name <input name="authorName"></label>{% endif %}
<label>Title <input name="title"></label><label>Comment <textarea name="body"></textarea></label>
<button type="submit">Send</button></form>{% endblock %}""",
    "edit.html": """{% extends "layout.html" %}{% block title %}{{ heading }} - Classifieds{% endblock %}{% block content %}
<h1>{{ heading }}</h1><form method="post" enctype="multipart/form-data" action="{{ action }}">
<label>Category <select name="catId">{% for c in categories %}
<option value="{{ c.id }}" {% if l and l.category_id == c.id %}selected{% endif %}>{{ c.name }}</option>{% endfor %}</select></label>
<label>Title <input name="title" value="{{ l.title if l else '' }}"></label>
<label>Description <textarea name="description">{{ l.description if l else '' }}</textarea></label>
<label>Price <input name="price" value="{{ l.price if l else '' }}"></label>
<label>City <select name="city">{% for c in cities %}<option {% if l and l.city == c %}selected{% endif %}>{{ c }}</option>{% endfor %}</select></label>
<label>Photo <input type="file" name="photo" accept="image/*"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit">{{ button }}</button></form>{% endblock %}""",
    "login.html": """{% extends "layout.html" %}{% block title %}Login - Classifieds{% endblock %}{% block content %}
<h1>Access to your account</h1><form method="post" action="/index.php?page=login">
<label>E-mail <input name="email" type="text"></label><label>Password <input name="password" type="password"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit">Log in</button></form>{% endblock %}""",
    "mine.html": """{% extends "layout.html" %}{% block title %}My listings - Classifieds{% endblock %}{% block content %}
<h1>My listings</h1>{% include "cards.html" %}{% endblock %}""",
}


class Classifieds(Site):
    name = "classifieds"
    schema = SCHEMA
    templates_source = TEMPLATES
    default_size = 60
    login_path = "/index.php?page=login"
    accounts = (("blake.sullivan@gmail.com", "blake.sullivan@gmail.com", "Password.123", "Blake Sullivan"),)

    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        db.executemany("INSERT INTO categories (id, name) VALUES (?, ?)",
                       [(i + 1, name) for i, name in enumerate(CATEGORIES)])
        names = list(CATEGORIES)
        for n in range(1, self.size + 1):
            category = rng.randrange(len(names))
            noun = rng.choice(CATEGORIES[names[category]])
            title = f"{rng.choice(content.ADJECTIVES).capitalize()} {noun}"
            picture = images.random_picture(rng)
            owned = n % 7 == 3
            seller, email = ("Blake Sullivan", "blake.sullivan@gmail.com") if owned else content.person(rng)
            image_id = self.add_picture(db, f"listing:{n}", picture)
            price = rng.choice((5, 10, 15, 20, 25, 40, 60, 75, 120, 250, 400, 900)) + rng.randint(0, 4) * 5
            db.execute("INSERT INTO listings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (n, title, content.paragraph(rng, noun), price, category + 1, rng.choice(content.CITIES),
                        seller, "blake.sullivan@gmail.com" if owned else None, email, content.phone(rng), image_id,
                        content.stamp(n * 97)))
            for c in range(rng.choice((0, 0, 1, 2))):
                author, _ = content.person(rng)
                db.execute("INSERT INTO comments (listing_id, author, title, body, created) VALUES (?, ?, ?, ?, ?)",
                           (n, author, rng.choice(("Still available?", "Question", "Nice")),
                            f"Is the {noun} still for sale? {rng.choice(content.FILLER).capitalize()}?",
                            content.stamp(n * 97 + 30 + c)))

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        return [("/", self.home, ["GET"]), ("/index.php", self.dispatch, ["GET", "POST"])]

    # pages -------------------------------------------------------------------------------------
    def home(self, ctx: Ctx) -> Response:
        return ctx.render("home.html", categories=self._categories(ctx),
                          listings=ctx.db.execute("SELECT * FROM listings ORDER BY created DESC, id DESC LIMIT 8"))

    def dispatch(self, ctx: Ctx) -> Response:
        page, action = ctx.query.get("page", ""), ctx.query.get("action", "")
        post = ctx.request.method == "POST"
        if page == "search" or page == "":
            return self.search(ctx)
        if page == "item" and action == "item_add":
            return self.publish(ctx) if post else self.edit_form(ctx, None)
        if page == "item" and action == "item_edit":
            return self.save_edit(ctx) if post else self.edit_form(ctx, self._own_listing(ctx))
        if page == "item" and action == "add_comment" and post:
            return self.add_comment(ctx)
        if page == "item":
            return self.item(ctx)
        if page == "login":
            return self.login(ctx) if post else ctx.render("login.html", error=None)
        if page == "logout":
            ctx.log_out()
            return ctx.redirect("/")
        if page == "user" and action == "items":
            user = ctx.need_user()
            return ctx.render("mine.html", listings=ctx.db.execute(
                "SELECT * FROM listings WHERE owner = ? ORDER BY id", (user,)).fetchall())
        if page == "reset" and post:
            if ctx.form.get("token") != RESET_TOKEN:
                raise HTTPException(403, "wrong reset token")
            self.pristine.backup(ctx.db)  # the lock is already held by this request
            return ctx.json({"site": self.name, "reset": True})
        raise HTTPException(404, f"no page {page!r} (action {action!r}) on the classifieds site")

    def search(self, ctx: Ctx) -> Response:
        q = ctx.query
        where, args = ["1 = 1"], []
        if q.get("sPattern"):
            for word in search_words(q["sPattern"], "sPattern"):
                where.append("(l.title LIKE ? OR l.description LIKE ?)")
                args += [f"%{word}%", f"%{word}%"]
        if q.get("sCategory"):
            where.append("l.category_id = ?")
            args.append(whole(q["sCategory"], "sCategory"))
        if q.get("sCity"):
            where.append("l.city = ?")
            args.append(q["sCity"])
        if q.get("sPriceMin"):
            where.append("l.price >= ?")
            args.append(whole(q["sPriceMin"], "sPriceMin", 0, MAX_PRICE))
        if q.get("sPriceMax"):
            where.append("l.price <= ?")
            args.append(whole(q["sPriceMax"], "sPriceMax", 0, MAX_PRICE))
        order = SORTS.get(q.get("sOrder", "dt_pub_date"), "created")
        direction = "ASC" if q.get("iOrderType") == "asc" else "DESC"
        page = page_number(ctx, "iPage")
        sql = " AND ".join(where)
        total = ctx.db.execute(f"SELECT COUNT(*) FROM listings l WHERE {sql}", args).fetchone()[0]
        rows = ctx.db.execute(f"SELECT l.* FROM listings l WHERE {sql} ORDER BY l.{order} {direction}, l.id {direction} "
                              f"LIMIT ? OFFSET ?", [*args, PER_PAGE, (page - 1) * PER_PAGE]).fetchall()
        category = None
        if q.get("sCategory"):
            found = ctx.db.execute("SELECT name FROM categories WHERE id = ?", (whole(q["sCategory"], "sCategory"),))
            category = (found.fetchone() or [None])[0]
        params = {k: v for k, v in q.items() if k != "iPage"}
        base = "/index.php?" + urlencode(params)
        return ctx.render("search.html", listings=rows, total=total, page=page, q=q, category=category,
                          categories=self._categories(ctx), cities=content.CITIES,
                          more=page * PER_PAGE < total, prev_url=f"{base}&iPage={page - 1}",
                          next_url=f"{base}&iPage={page + 1}")

    def item(self, ctx: Ctx) -> Response:
        listing = self._listing(ctx)
        comments = ctx.db.execute("SELECT * FROM comments WHERE listing_id = ? ORDER BY id", (listing["id"],))
        return ctx.render("item.html", l=listing, comments=comments.fetchall())

    def login(self, ctx: Ctx) -> Response:
        user = self.check_login(ctx.db, ctx.form.get("email", ""), ctx.form.get("password", ""))
        if user is None:
            return ctx.render("login.html", status=401, error="Wrong e-mail or password.")
        ctx.log_in(user)
        return ctx.redirect("/")

    def edit_form(self, ctx: Ctx, listing: sqlite3.Row | None, error: str | None = None) -> Response:
        ctx.need_user()
        action = ("/index.php?page=item&action=item_add" if listing is None
                  else f"/index.php?page=item&action=item_edit&id={listing['id']}")
        return ctx.render("edit.html", status=400 if error else 200, l=listing, action=action, error=error,
                          categories=self._categories(ctx),
                          cities=content.CITIES, heading="Publish a listing" if listing is None else "Edit listing",
                          button="Publish" if listing is None else "Update")

    def publish(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        fields = self._fields(ctx)
        if isinstance(fields, str):
            return self.edit_form(ctx, None, fields)
        new_id = ctx.db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM listings").fetchone()[0]
        image_id = self._upload(ctx, f"listing:{new_id}")
        display = ctx.db.execute("SELECT display FROM accounts WHERE username = ?", (user,)).fetchone()[0]
        ctx.db.execute("INSERT INTO listings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (new_id, fields["title"], fields["description"], fields["price"], fields["category_id"],
                        fields["city"], display, user, user, "412-555-0100", image_id, self._next_stamp(ctx)))
        return ctx.redirect(f"/index.php?page=item&id={new_id}")

    def save_edit(self, ctx: Ctx) -> Response:
        listing = self._own_listing(ctx)
        fields = self._fields(ctx)
        if isinstance(fields, str):
            return self.edit_form(ctx, listing, fields)
        image_id = self._upload(ctx, f"listing:{listing['id']}") or listing["image_id"]
        ctx.db.execute("UPDATE listings SET title = ?, description = ?, price = ?, category_id = ?, city = ?, "
                       "image_id = ? WHERE id = ?", (fields["title"], fields["description"], fields["price"],
                                                     fields["category_id"], fields["city"], image_id, listing["id"]))
        return ctx.redirect(f"/index.php?page=item&id={listing['id']}")

    def add_comment(self, ctx: Ctx) -> Response:
        listing = self._listing(ctx)
        body = ctx.form.get("body", "").strip()
        if not body:
            raise HTTPException(400, "a comment needs a body")
        author = ctx.user or ctx.form.get("authorName", "").strip() or "Anonymous"
        if ctx.user:
            author = ctx.db.execute("SELECT display FROM accounts WHERE username = ?", (ctx.user,)).fetchone()[0]
        ctx.db.execute("INSERT INTO comments (listing_id, author, title, body, created) VALUES (?, ?, ?, ?, ?)",
                       (listing["id"], author, ctx.form.get("title", "").strip(), body, self._next_stamp(ctx)))
        return ctx.redirect(f"/index.php?page=item&id={listing['id']}")

    # helpers -----------------------------------------------------------------------------------
    def _categories(self, ctx: Ctx) -> list[sqlite3.Row]:
        return ctx.db.execute("SELECT c.id, c.name, COUNT(l.id) AS n FROM categories c LEFT JOIN listings l "
                              "ON l.category_id = c.id GROUP BY c.id ORDER BY c.id").fetchall()

    def _listing(self, ctx: Ctx) -> sqlite3.Row:
        row = ctx.db.execute("SELECT l.*, c.name AS category FROM listings l JOIN categories c ON c.id = "
                             "l.category_id WHERE l.id = ?", (whole(ctx.query.get("id", ""), "id"),)).fetchone()
        if row is None:
            raise HTTPException(404, f"no listing {ctx.query.get('id')}")
        return row

    def _own_listing(self, ctx: Ctx) -> sqlite3.Row:
        user = ctx.need_user()
        listing = self._listing(ctx)
        if listing["owner"] != user:
            raise HTTPException(403, "only the seller can edit this listing")
        return listing

    def _fields(self, ctx: Ctx) -> dict[str, object] | str:
        """The ad form's fields, or the message that says which one is wrong."""
        title, description = ctx.form.get("title", "").strip(), ctx.form.get("description", "").strip()
        if not title:
            return "A title is required."
        try:
            price = int(ctx.form.get("price", "").replace("$", "").replace(",", "").strip())
        except ValueError:
            price = -1
        if not 0 <= price <= MAX_PRICE:
            return f"The price must be a whole number of dollars from 0 to {MAX_PRICE:,}."
        category_id = whole(ctx.form.get("catId", "1"), "catId")
        if not ctx.db.execute("SELECT 1 FROM categories WHERE id = ?", (category_id,)).fetchone():
            return "Choose a category."
        city = ctx.form.get("city", content.CITIES[0])
        return {"title": title, "description": description, "price": price, "category_id": category_id, "city": city}

    def _upload(self, ctx: Ctx, owner: str) -> int | None:
        data = ctx.files.get("photo")
        if not data:
            return None
        cur = ctx.db.execute("INSERT INTO images (owner, kind, colour, count, text, background, png) VALUES "
                             "(?, 'upload', '', 0, '', '', ?)", (owner, data))
        return int(cur.lastrowid or 0)

    def _next_stamp(self, ctx: Ctx) -> str:
        """A logical clock: one minute after the newest row, so replays stay deterministic."""
        newest = ctx.db.execute("SELECT MAX(created) FROM (SELECT created FROM listings UNION ALL "
                                "SELECT created FROM comments)").fetchone()[0]
        return (datetime.strptime(newest, "%Y-%m-%d %H:%M") + timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M")

