"""Shopping: a Magento-shaped store (catalogue, search, product pages with photos and reviews,
cart, wishlist, checkout, orders, an account), on VWA's URL shapes: ``/<category>.html``,
``/<product>.html``, ``/catalogsearch/result/?q=``, ``/checkout/cart/``, ``/wishlist/``,
``/sales/order/history/``, ``/sales/order/view/order_id/N/``, ``/customer/account/``, CMS pages at
``/<url key>``. The pages keep the parts of Magento's DOM that VWA's and WebArena's helpers read
(the order's ``#my-orders-table``, the product's price box, details table, rating and reviews tab).

The same site serves Magento's admin panel under ``/admin/`` (shopping_admin.py) and a subset of its
REST API under ``/rest/`` (shopping_rest.py), over this one database: what the admin changes the
store shows, and the reverse. The back office's seeded content is in shopping_data.py."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Mapping

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites import content, images, shopping_admin, shopping_data, shopping_rest
from nodes.browser.sites.framework import (Ctx, Handler, Site, form_text, layout, page_number, search_words,
                                           whole)
from nodes.browser.sites.shopping_data import APPROVED, ENABLED, PRODUCT_OPTIONS, OrderSpec

PER_PAGE = 12
MAX_QTY = 10_000  # Magento's default "maximum qty allowed in shopping cart"
CATEGORIES: dict[str, tuple[str, ...]] = {
    "Blankets & Throws": ("Fleece Blanket", "Knit Throw", "Quilted Blanket"),
    "Mugs & Cups": ("Coffee Mug", "Travel Cup", "Tea Cup"),
    "T-Shirts": ("Crew Tee", "V-Neck Tee", "Graphic Tee"),
    "Hoodies & Sweatshirts": ("Pullover Hoodie", "Zip Hoodie", "Sweatshirt"),
    "Throw Pillows": ("Pillow Cover", "Cushion", "Lumbar Pillow"),
    "Backpacks": ("Daypack", "Laptop Backpack", "Hiking Pack"),
}
SORTS = {"price": "price", "name": "name", "position": "id"}
MAX_NAME, MAX_LINE, MAX_TEXT = 255, 255, 10_000  # longest name, address line, review or description a form keeps

SCHEMA = """
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, slug TEXT UNIQUE NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT UNIQUE NOT NULL, name TEXT NOT NULL, slug TEXT UNIQUE NOT NULL,
    category_id INTEGER NOT NULL REFERENCES categories(id), price_cents INTEGER NOT NULL, description TEXT NOT NULL,
    image_id INTEGER NOT NULL, qty INTEGER NOT NULL DEFAULT 0, in_stock INTEGER NOT NULL DEFAULT 1,
    status INTEGER NOT NULL DEFAULT 1);
CREATE TABLE product_attributes (product_id INTEGER NOT NULL REFERENCES products(id), position INTEGER NOT NULL,
    label TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (product_id, position));
CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id), author TEXT NOT NULL,
    rating INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, created TEXT NOT NULL,
    status INTEGER NOT NULL DEFAULT 1);
CREATE TABLE cart (id INTEGER PRIMARY KEY, username TEXT NOT NULL, product_id INTEGER NOT NULL, qty INTEGER NOT NULL,
    options TEXT NOT NULL DEFAULT '[]');
CREATE TABLE wishlist (id INTEGER PRIMARY KEY, username TEXT NOT NULL, product_id INTEGER NOT NULL,
    UNIQUE (username, product_id));
CREATE TABLE orders (id INTEGER PRIMARY KEY, username TEXT NOT NULL, created TEXT NOT NULL, status TEXT NOT NULL,
    total_cents INTEGER NOT NULL, ship_name TEXT NOT NULL, ship_address TEXT NOT NULL,
    hold_before TEXT NOT NULL DEFAULT '', updated TEXT NOT NULL DEFAULT '');
CREATE INDEX orders_created ON orders(created);
CREATE TABLE order_items (order_id INTEGER NOT NULL REFERENCES orders(id), product_id INTEGER NOT NULL,
    name TEXT NOT NULL, sku TEXT NOT NULL, price_cents INTEGER NOT NULL, qty INTEGER NOT NULL,
    options TEXT NOT NULL DEFAULT '[]');
CREATE INDEX order_items_order ON order_items(order_id);
CREATE TABLE order_comments (id INTEGER PRIMARY KEY, order_id INTEGER NOT NULL REFERENCES orders(id),
    created TEXT NOT NULL, comment TEXT NOT NULL, status TEXT NOT NULL, notified INTEGER NOT NULL);
CREATE TABLE addresses (username TEXT PRIMARY KEY, name TEXT NOT NULL, street TEXT NOT NULL, city TEXT NOT NULL);
CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL, firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, phone TEXT NOT NULL, street TEXT NOT NULL, city TEXT NOT NULL, region TEXT NOT NULL,
    zip TEXT NOT NULL, created TEXT NOT NULL);
CREATE TABLE cms_pages (id INTEGER PRIMARY KEY, title TEXT NOT NULL, identifier TEXT UNIQUE NOT NULL,
    content TEXT NOT NULL, active INTEGER NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL);
CREATE TABLE admin_users (username TEXT PRIMARY KEY, password TEXT NOT NULL, firstname TEXT NOT NULL,
    lastname TEXT NOT NULL, email TEXT NOT NULL);
"""

NAV = """ <form class="inline" action="/catalogsearch/result/" method="get"><input name="q" placeholder="Search entire store here..."
aria-label="Search"><button type="submit">Search</button></form>
<a href="/checkout/cart/">My Cart</a> {% if user %}<a href="/wishlist/">My Wish List</a> <a href="/customer/account/">My Account</a>
<a href="/sales/order/history/">My Orders</a> <a href="/customer/account/logout/">Sign Out</a>{% else %}
<a href="/customer/account/login/">Sign In</a>{% endif %}"""

MONEY = """{% macro money(cents) %}${{ "{:,.2f}".format(cents / 100) }}{% endmacro %}"""
# an item's chosen options (stored as JSON [[name, value], ...]) as Magento lists them: dt/dd pairs
OPTIONS = """{% macro option_list(stored) %}{% set pairs = stored|options %}{% if pairs %}<dl class="item-options">
{% for name, value in pairs %}<dt>{{ name }}</dt><dd>{{ value }}</dd>{% endfor %}</dl>{% endif %}{% endmacro %}"""

TEMPLATES = {
    "layout.html": layout("One Stop Market", NAV),
    "grid.html": MONEY + """<ol class="cards products">{% for p in products %}<li class="card product-item">
<a href="/{{ p.slug }}.html" class="product-item-link"><img class="product-image-photo thumb" src="/images/{{ p.image_id }}.png" alt="{{ p.name }}">
<div class="product-name">{{ p.name }}</div></a><div class="price">{{ money(p.price_cents) }}</div>
<form class="inline" method="post" action="/checkout/cart/add/"><input type="hidden" name="product" value="{{ p.id }}">
<button type="submit" class="tocart">Add to Cart</button></form></li>{% else %}<p>Your search returned no results.</p>{% endfor %}</ol>""",
    "home.html": """{% extends "layout.html" %}{% block title %}{{ home.title if home else "One Stop Market" }}{% endblock %}
{% block content %}<h1>One Stop Market</h1>{% if home %}<div class="cms-content">{{ home.content }}</div>{% endif %}
<ul class="categories">
{% for c in categories %}<li><a href="/{{ c.slug }}.html">{{ c.name }}</a></li>{% endfor %}</ul>
<h2>Product Showcases</h2>{% include "grid.html" %}{% endblock %}""",
    "cms.html": """{% extends "layout.html" %}{% block title %}{{ page.title }}{% endblock %}{% block content %}
<h1 class="page-title"><span class="base">{{ page.title }}</span></h1><div class="cms-content">{{ page.content }}</div>
{% endblock %}""",
    "list.html": """{% extends "layout.html" %}{% block title %}{{ heading }}{% endblock %}{% block content %}
<h1 class="page-title">{{ heading }}</h1><p class="muted toolbar-amount">{{ total }} items</p>
<p>Sort by: <a href="{{ url_for_query(path, q=q, product_list_order='price', product_list_dir='asc') }}">Price (low to high)</a>
<a href="{{ url_for_query(path, q=q, product_list_order='price', product_list_dir='desc') }}">Price (high to low)</a>
<a href="{{ url_for_query(path, q=q, product_list_order='name') }}">Name</a></p>{% include "grid.html" %}
<nav class="pages">{% if more %}<a href="{{ url_for_query(path, q=q, product_list_order=order, product_list_dir=direction, p=page + 1) }}">Next</a>{% endif %}</nav>{% endblock %}""",
    "product.html": MONEY + """{% extends "layout.html" %}{% block title %}{{ p.name }}{% endblock %}{% block content %}
<div id="maincontent"><div class="columns"><div class="column main"><div class="product-info-main">
<h1 class="page-title"><span class="base">{{ p.name }}</span></h1>
{% if reviews %}<div class="product-reviews-summary"><div class="rating-summary"><div class="rating-result" title="{{ percent }}%">
<span>{{ percent }}%</span></div></div><a class="action view" href="#reviews">{{ reviews|length }} Reviews</a></div>{% endif %}
<div class="product-info-price"><div class="price-box price-final_price"><span class="price-container"><span class="price-wrapper"
 id="product-price"><span class="price">{{ money(p.price_cents) }}</span></span></span></div></div>
<div class="product-info-stock-sku">{% if p.in_stock %}<div class="stock available"><span>In stock</span></div>{% else %}
<div class="stock unavailable"><span>Out of stock</span></div>{% endif %}
<div class="product attribute sku">SKU: <span class="value">{{ p.sku }}</span></div></div>
<p>Category: <a href="/{{ p.category_slug }}.html">{{ p.category }}</a></p>
<form method="post" action="/checkout/cart/add/" id="product_addtocart_form"><input type="hidden" name="product" value="{{ p.id }}">
{% if option %}<label>{{ option[0] }} <select name="options[{{ option[0] }}]"><option value="">Choose an Option...</option>
{% for value in option[1] %}<option>{{ value }}</option>{% endfor %}</select></label>{% endif %}
<label>Qty <input name="qty" value="1" size="3"></label>{% if p.in_stock %}<button type="submit" id="product-addtocart-button">Add to Cart</button>{% endif %}</form>
<form method="post" action="/wishlist/index/add/"><input type="hidden" name="product" value="{{ p.id }}">
<button type="submit" class="towishlist">Add to Wish List</button></form></div>
<div class="product media"><img class="product-image-photo big" src="/images/{{ p.image_id }}.png" alt="{{ p.name }}"></div>
<div class="product info detailed"><div class="product data items">
<div class="data item title"><a class="data switch" id="tab-label-description-title" href="#description">Details</a></div>
<div class="data item content" id="description"><div class="product attribute description"><div class="value description">{{ p.description }}</div></div>
<table class="prodDetTable" id="productDetails_detailBullets_sections1"><tbody>{% for a in attributes %}
<tr><th class="prodDetSectionEntry">{{ a.label }}</th><td class="prodDetAttrValue">{{ a.value }}</td></tr>{% endfor %}</tbody></table></div>
<div class="data item title"><a class="data switch" id="tab-label-reviews-title" href="#reviews">Reviews{% if reviews %} <span class="counter">{{ reviews|length }}</span>{% endif %}</a></div>
<div class="data item content" id="reviews">
<h2>Reviews ({{ reviews|length }}){% if reviews %} · average {{ "%.1f"|format(average) }} of 5{% endif %}</h2>
<div id="product-review-container">{% for r in reviews %}<div class="review-item"><b class="review-title">{{ r.title }}</b>
<div class="rating-result" title="{{ r.rating * 20 }}%"><span class="rating">{{ r.rating }} stars</span></div> by <span class="review-author">{{ r.author }}</span>
<p class="review-content">{{ r.body }}</p></div>{% endfor %}</div>
<h3>Write Your Own Review</h3><form method="post" action="/review/product/post/id/{{ p.id }}/">
<label>Rating <select name="rating">{% for n in range(5, 0, -1) %}<option>{{ n }}</option>{% endfor %}</select></label>
<label>Nickname <input name="nickname"></label><label>Summary <input name="title"></label>
<label>Review <textarea name="detail"></textarea></label><button type="submit">Submit Review</button></form></div>
</div></div></div></div></div>{% endblock %}""",
    "cart.html": MONEY + OPTIONS + """{% extends "layout.html" %}{% block title %}Shopping Cart{% endblock %}{% block content %}
<h1>Shopping Cart</h1>{% if items %}<table id="shopping-cart-table"><tr><th>Item</th><th>Price</th><th>Qty</th><th>Subtotal</th><th></th></tr>
{% for i in items %}<tr class="cart item"><td><a href="/{{ i.slug }}.html" class="product-item-name">{{ i.name }}</a>{{ option_list(i.options) }}</td>
<td>{{ money(i.price_cents) }}</td><td class="qty">{{ i.qty }}</td><td>{{ money(i.price_cents * i.qty) }}</td>
<td><form class="inline" method="post" action="/checkout/cart/delete/"><input type="hidden" name="id" value="{{ i.id }}">
<button type="submit" class="action-delete">Remove item</button></form></td></tr>{% endfor %}</table>
<p>Order Total: <span class="grand-total">{{ money(total) }}</span></p><a href="/checkout/" class="checkout">Proceed to Checkout</a>
{% else %}<p class="cart-empty">You have no items in your shopping cart.</p>{% endif %}{% endblock %}""",
    "checkout.html": MONEY + """{% extends "layout.html" %}{% block title %}Checkout{% endblock %}{% block content %}
<h1>Checkout</h1><p>{{ items|length }} item(s), total {{ money(total) }}</p><form method="post" action="/checkout/">
<label>Full name <input name="name" value="{{ address.name }}"></label><label>Street <input name="street" value="{{ address.street }}"></label>
<label>City <input name="city" value="{{ address.city }}"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="place-order">Place Order</button></form>{% endblock %}""",
    "success.html": """{% extends "layout.html" %}{% block title %}Success Page{% endblock %}{% block content %}
<h1>Thank you for your purchase!</h1><p>Your order number is: <a href="/sales/order/view/order_id/{{ order_id }}/" class="order-number">{{ order_id }}</a>.</p>{% endblock %}""",
    "orders.html": MONEY + """{% extends "layout.html" %}{% block title %}My Orders{% endblock %}{% block content %}
<h1>My Orders</h1><table id="my-orders-table"><tr><th>Order #</th><th>Date</th><th>Ship To</th><th>Order Total</th><th>Status</th><th></th></tr>
{% for o in orders %}<tr><td class="id">{{ "%09d"|format(o.id) }}</td><td class="date">{{ o.created[:10] }}</td><td>{{ o.ship_name }}</td>
<td class="total">{{ money(o.total_cents) }}</td><td class="status">{{ o.status }}</td>
<td><a href="/sales/order/view/order_id/{{ o.id }}/">View Order</a></td></tr>{% endfor %}</table>{% endblock %}""",
    "order.html": MONEY + OPTIONS + """{% extends "layout.html" %}{% block title %}Order # {{ "%09d"|format(o.id) }}{% endblock %}
{% block content %}<h1>Order # {{ "%09d"|format(o.id) }}</h1><p class="order-status">{{ o.status }}</p><p>Order Date: {{ o.created[:10] }}</p>
<div class="order-details-items ordered"><table class="data table table-order-items items-ordered" id="my-orders-table">
<thead><tr><th>Product Name</th><th>SKU</th><th>Price</th><th>Qty</th><th>Subtotal</th></tr></thead>{% for i in items %}
<tbody><tr><td class="col name"><strong class="product name product-item-name"><a href="/{{ i.slug }}.html">{{ i.name }}</a></strong>{{ option_list(i.options) }}</td>
<td class="col sku">{{ i.sku }}</td><td class="col price">{{ money(i.price_cents) }}</td>
<td class="col qty"><span class="title">Ordered</span> <span class="content">{{ i.qty }}</span></td>
<td class="col subtotal">{{ money(i.price_cents * i.qty) }}</td></tr></tbody>{% endfor %}</table></div>
<p>Grand Total: <span class="grand-total">{{ money(o.total_cents) }}</span></p>
<p>Shipping Address: {{ o.ship_name }}, {{ o.ship_address }}</p>{% endblock %}""",
    "wishlist.html": """{% extends "layout.html" %}{% block title %}My Wish List{% endblock %}{% block content %}
<h1>My Wish List</h1><div class="wishlist">{% set products = items %}{% include "grid.html" %}</div>
{% for i in items %}<form method="post" action="/wishlist/index/remove/"><input type="hidden" name="product" value="{{ i.id }}">
<button type="submit" class="btn-remove">Remove {{ i.name }}</button></form>{% endfor %}{% endblock %}""",
    "account.html": """{% extends "layout.html" %}{% block title %}My Account{% endblock %}{% block content %}
<h1>My Account</h1><div class="box-information"><p class="name">{{ display }}</p><p class="email">{{ email }}</p></div>
<h2>Default Shipping Address</h2><form method="post" action="/customer/address/formPost/">
<label>Full name <input name="name" value="{{ address.name }}"></label><label>Street <input name="street" value="{{ address.street }}"></label>
<label>City <input name="city" value="{{ address.city }}"></label><button type="submit">Save Address</button></form>{% endblock %}""",
    "login.html": """{% extends "layout.html" %}{% block title %}Customer Login{% endblock %}{% block content %}
<h1>Customer Login</h1><form method="post" action="/customer/account/loginPost/">
<label>Email <input name="login[username]" id="email"></label><label>Password <input name="login[password]" type="password" id="pass"></label>
{% if error %}<p class="error">{{ error }}</p>{% endif %}<button type="submit" id="send2">Sign In</button></form>{% endblock %}""",
}

PRODUCT_COLUMNS = "p.id, p.sku, p.name, p.slug, p.price_cents, p.image_id"


FIXTURE = ("emma.lopez@gmail.com", "Emma Lopez", "101 S San Mateo Dr", "San Mateo")  # email, name, street, city


def parse_options(stored: str) -> list[tuple[str, str]]:
    """An item's stored options (JSON ``[[name, value], ...]``) as pairs; a malformed value shows none."""
    try:
        pairs = json.loads(stored or "[]")
    except ValueError:
        return []
    return [(str(p[0]), str(p[1])) for p in pairs if isinstance(p, list) and len(p) == 2] if isinstance(pairs, list) else []


class Shopping(Site):
    name = "shopping"
    schema = SCHEMA
    templates_source = {**TEMPLATES, **shopping_admin.TEMPLATES}
    default_size = 60
    login_path = "/customer/account/login/"
    json_paths = ("/rest/",)
    accounts = ((FIXTURE[0], FIXTURE[0], "Password.123", FIXTURE[1]),)
    other_sessions = {"shopping_admin": (shopping_admin.ADMIN_COOKIE, shopping_admin.ADMIN_PURPOSE, "admin")}

    def __init__(self, seed: int = 0, size: int | None = None, links: Mapping[str, str] | None = None) -> None:
        super().__init__(seed, size, links)
        self.templates.filters.update({"options": parse_options, **shopping_admin.FILTERS})

    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        names = list(CATEGORIES)
        db.executemany("INSERT INTO categories VALUES (?, ?, ?)",
                       [(i + 1, name, content.slugify(name)) for i, name in enumerate(names)])
        slugs = {content.slugify(name) for name in names}
        for n in range(1, self.size + 1):
            category = rng.randrange(len(names))
            item = rng.choice(CATEGORIES[names[category]])
            name = f"{rng.choice(content.ADJECTIVES).capitalize()} {item}"
            slug = f"{content.slugify(name)}-{n}"
            assert slug not in slugs
            sku = "B0" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(8))
            picture = images.random_picture(rng)
            image_id = self.add_picture(db, f"product:{n}", picture)
            price = rng.randint(5, 120) * 100 + rng.choice((0, 49, 95, 99))
            db.execute("INSERT INTO products (id, sku, name, slug, category_id, price_cents, description, image_id) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (n, sku, name, slug, category + 1, price, content.paragraph(rng, item.lower()), image_id))
            for r in range(rng.choice((0, 1, 2, 3))):
                author, _ = content.person(rng)
                rating = rng.randint(1, 5)
                db.execute("INSERT INTO reviews (product_id, author, rating, title, body, created) VALUES "
                           "(?, ?, ?, ?, ?, ?)", (n, author, rating, ("Awful", "Meh", "OK", "Good", "Great")[rating - 1],
                                                  content.sentence(rng, item.lower()), content.stamp(n * 50 + r)))
        email, display, street, city = FIXTURE
        db.execute("INSERT INTO addresses VALUES (?, ?, ?, ?)", FIXTURE)
        fixture_orders = []
        for o in range(1, 4):  # a short order history for the fixture customer, the store's latest orders
            picks = rng.sample(range(1, self.size + 1), k=min(self.size, rng.randint(1, 3)))
            rows = [db.execute("SELECT id, name, sku, price_cents FROM products WHERE id = ?", (pid,)).fetchone()
                    for pid in picks]
            fixture_orders.append(OrderSpec(email, shopping_data.when(o * 4000), ("Complete", "Complete", "Canceled")[o - 1],
                                            display, f"{street}, {city}", [(*row, 1, "[]") for row in rows]))
        shopping_data.seed(db, random.Random(f"shopping-admin:{self.seed}"), self.size, fixture_orders, FIXTURE)

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        return [("/", self.home, ["GET"]),
                ("/catalogsearch/result/", self.search, ["GET"]),
                ("/catalogsearch/result/index/", self.search, ["GET"]),
                ("/checkout/cart/", self.cart, ["GET"]),
                ("/checkout/cart/add/", self.cart_add, ["POST"]),
                ("/checkout/cart/delete/", self.cart_delete, ["POST"]),
                ("/checkout/", self.checkout, ["GET", "POST"]),
                ("/checkout/onepage/success/", self.success, ["GET"]),
                ("/sales/order/history/", self.orders, ["GET"]),
                ("/sales/order/view/order_id/{order_id:int}/", self.order, ["GET"]),
                ("/wishlist/", self.wishlist, ["GET"]),
                ("/wishlist/index/add/", self.wishlist_add, ["POST"]),
                ("/wishlist/index/remove/", self.wishlist_remove, ["POST"]),
                ("/customer/account/", self.account, ["GET"]),
                ("/customer/address/formPost/", self.save_address, ["POST"]),
                ("/customer/account/login/", lambda ctx: ctx.render("login.html", error=None), ["GET"]),
                ("/customer/account/loginPost/", self.login, ["POST"]),
                ("/customer/account/logout/", self.logout, ["GET"]),
                ("/review/product/post/id/{product_id:int}/", self.review, ["POST"]),
                *shopping_admin.pages(),
                *shopping_rest.pages(),
                ("/{slug}.html", self.slug_page, ["GET"]),
                ("/{identifier}", self.cms_page, ["GET"])]

    # catalogue ---------------------------------------------------------------------------------
    def home(self, ctx: Ctx) -> Response:
        return ctx.render("home.html", categories=ctx.db.execute("SELECT * FROM categories ORDER BY id").fetchall(),
                          products=ctx.db.execute(f"SELECT {PRODUCT_COLUMNS} FROM products p WHERE p.status = ? "
                                                  "ORDER BY id LIMIT 8", (ENABLED,)),
                          home=ctx.db.execute("SELECT title, content FROM cms_pages WHERE identifier = 'home' AND "
                                              "active = 1").fetchone())

    def cms_page(self, ctx: Ctx) -> Response:
        """A CMS page the admin enabled, at its URL key (Magento's ``/about-us``)."""
        row = ctx.db.execute("SELECT title, content FROM cms_pages WHERE identifier = ? AND active = 1",
                             (ctx.path["identifier"],)).fetchone()
        if row is None:
            raise HTTPException(404, f"no page at /{ctx.path['identifier'][:100]}")
        return ctx.render("cms.html", page=row)

    def _listing(self, ctx: Ctx, heading: str, where: str, args: list[object], path: str) -> Response:
        order = ctx.query.get("product_list_order", "position")
        direction = "desc" if ctx.query.get("product_list_dir") == "desc" else "asc"
        column = SORTS.get(order, "id")
        column = "price_cents" if column == "price" else column
        page = page_number(ctx)
        where = f"p.status = {ENABLED} AND ({where})"  # a disabled product is gone from the store
        total = ctx.db.execute(f"SELECT COUNT(*) FROM products p WHERE {where}", args).fetchone()[0]
        rows = ctx.db.execute(f"SELECT {PRODUCT_COLUMNS} FROM products p WHERE {where} ORDER BY p.{column} {direction}, "
                              f"p.id LIMIT ? OFFSET ?", [*args, PER_PAGE, (page - 1) * PER_PAGE]).fetchall()
        return ctx.render("list.html", heading=heading, products=rows, total=total, path=path,
                          q=ctx.query.get("q"), order=order, direction=direction, page=page,
                          more=page * PER_PAGE < total)

    def search(self, ctx: Ctx) -> Response:
        words = search_words(ctx.query.get("q", ""), "q")
        where = " AND ".join(["(p.name LIKE ? OR p.description LIKE ? OR p.sku = ?)"] * len(words)) or "1 = 1"
        args: list[object] = [v for w in words for v in (f"%{w}%", f"%{w}%", w)]
        return self._listing(ctx, f"Search results for: '{ctx.query.get('q', '')}'", where, args,
                             "/catalogsearch/result/")

    def slug_page(self, ctx: Ctx) -> Response:
        slug = ctx.path["slug"]
        category = ctx.db.execute("SELECT * FROM categories WHERE slug = ?", (slug,)).fetchone()
        if category is not None:
            return self._listing(ctx, category["name"], "p.category_id = ?", [category["id"]], f"/{slug}.html")
        product = ctx.db.execute("SELECT p.*, c.name AS category, c.slug AS category_slug FROM products p JOIN "
                                 "categories c ON c.id = p.category_id WHERE p.slug = ? AND p.status = ?",
                                 (slug, ENABLED)).fetchone()
        if product is None:
            raise HTTPException(404, f"no product or category at /{slug}.html")
        reviews = ctx.db.execute("SELECT * FROM reviews WHERE product_id = ? AND status = ? ORDER BY id",
                                 (product["id"], APPROVED)).fetchall()
        average = sum(r["rating"] for r in reviews) / len(reviews) if reviews else 0.0
        attributes = ctx.db.execute("SELECT label, value FROM product_attributes WHERE product_id = ? ORDER BY position",
                                    (product["id"],)).fetchall()
        return ctx.render("product.html", p=product, reviews=reviews, average=average, percent=round(average * 20),
                          attributes=attributes, option=PRODUCT_OPTIONS.get(product["category"]))

    def review(self, ctx: Ctx) -> Response:
        """A customer's review, shown at once (the shipped store tasks read it back from the page;
        Magento would hold it as Pending until the admin approves it)."""
        product = self._product(ctx, ctx.path["product_id"])
        try:
            rating = int(ctx.form.get("rating", ""))
        except ValueError:
            rating = 0
        detail = form_text(ctx.form, "detail", MAX_TEXT)
        if not 1 <= rating <= 5 or not detail:
            raise HTTPException(400, "a review needs a rating from 1 to 5 and a text")
        author = form_text(ctx.form, "nickname", MAX_NAME) or self._display(ctx) or "Guest"
        created = ctx.db.execute("SELECT COALESCE(MAX(created), ?) FROM reviews", (content.stamp(0),)).fetchone()[0]
        ctx.db.execute("INSERT INTO reviews (product_id, author, rating, title, body, created, status) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", (product["id"], author, rating,
                                                        form_text(ctx.form, "title", MAX_NAME), detail, created, APPROVED))
        return ctx.redirect(f"/{product['slug']}.html")

    # cart and orders ---------------------------------------------------------------------------
    def _cart_items(self, ctx: Ctx, user: str) -> list[sqlite3.Row]:
        return ctx.db.execute("SELECT c.id, c.qty, c.options, p.id AS product_id, p.name, p.slug, p.sku, p.price_cents, "
                              "p.qty AS stock, p.in_stock, p.status FROM cart c JOIN products p ON p.id = c.product_id "
                              "WHERE c.username = ? ORDER BY c.id", (user,)).fetchall()

    def cart(self, ctx: Ctx) -> Response:
        items = self._cart_items(ctx, ctx.need_user())
        return ctx.render("cart.html", items=items, total=sum(i["price_cents"] * i["qty"] for i in items))

    def cart_add(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        product = self._product(ctx, ctx.form.get("product", ""))
        qty = whole(ctx.form.get("qty", "1"), "qty", 1, MAX_QTY)
        if product["status"] != ENABLED or not product["in_stock"]:
            raise HTTPException(400, f"{product['name']} is out of stock")
        options = shopping_data.options_json(self._chosen_options(ctx, product))
        row = ctx.db.execute("SELECT id FROM cart WHERE username = ? AND product_id = ? AND options = ?",
                             (user, product["id"], options)).fetchone()
        if row:
            ctx.db.execute("UPDATE cart SET qty = MIN(qty + ?, ?) WHERE id = ?", (qty, MAX_QTY, row[0]))
        else:
            ctx.db.execute("INSERT INTO cart (username, product_id, qty, options) VALUES (?, ?, ?, ?)",
                           (user, product["id"], qty, options))
        return ctx.redirect("/checkout/cart/")

    def _chosen_options(self, ctx: Ctx, product: sqlite3.Row) -> list[tuple[str, str]]:
        """The product's option (a size) when the form chose one: one of its values, or a 400 naming them."""
        category = ctx.db.execute("SELECT name FROM categories WHERE id = ?", (product["category_id"],)).fetchone()[0]
        option = PRODUCT_OPTIONS.get(category)
        if option is None:
            return []
        name, values = option
        chosen = form_text(ctx.form, f"options[{name}]", 40)
        if chosen and chosen not in values:
            raise HTTPException(400, f"options[{name}] must be one of {', '.join(values)}, got {chosen!r}")
        return [(name, chosen)] if chosen else []

    def cart_delete(self, ctx: Ctx) -> Response:
        ctx.db.execute("DELETE FROM cart WHERE id = ? AND username = ?", (ctx.form.get("id"), ctx.need_user()))
        return ctx.redirect("/checkout/cart/")

    def checkout(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        items = self._cart_items(ctx, user)
        total = sum(i["price_cents"] * i["qty"] for i in items)
        address = self._address(ctx, user)
        if ctx.request.method == "GET":
            return ctx.render("checkout.html", items=items, total=total, address=address, error=None)
        name, street, city = (form_text(ctx.form, k, MAX_LINE) for k in ("name", "street", "city"))
        short = [i["name"] for i in items if i["status"] != ENABLED or not i["in_stock"] or i["qty"] > i["stock"]]
        if not items or not (name and street and city) or short:
            error = ("Your cart is empty." if not items else "Fill in the name, street and city." if not short else
                     f"The requested qty is not available: {', '.join(short)}.")
            return ctx.render("checkout.html", status=400, items=items, total=total, address=address, error=error)
        order_id = ctx.db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM orders").fetchone()[0]
        created = shopping_data.when(20000 + order_id)  # after every seeded order, so it is the latest
        ctx.db.execute("INSERT INTO orders (id, username, created, status, total_cents, ship_name, ship_address, "
                       "updated) VALUES (?, ?, ?, 'Pending', ?, ?, ?, ?)",
                       (order_id, user, created, total, name, f"{street}, {city}", created))
        ctx.db.executemany("INSERT INTO order_items (order_id, product_id, name, sku, price_cents, qty, options) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?)", [(order_id, i["product_id"], i["name"], i["sku"],
                                                             i["price_cents"], i["qty"], i["options"]) for i in items])
        for i in items:  # Magento takes what is sold off the stock; the last one sold is out of stock
            ctx.db.execute("UPDATE products SET qty = qty - ?, in_stock = (qty - ? > 0) WHERE id = ?",
                           (i["qty"], i["qty"], i["product_id"]))
        ctx.db.execute("DELETE FROM cart WHERE username = ?", (user,))
        return ctx.redirect(f"/checkout/onepage/success/?order_id={order_id}")

    def success(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        latest = ctx.db.execute("SELECT MAX(id) FROM orders WHERE username = ?", (user,)).fetchone()[0]
        return ctx.render("success.html", order_id=ctx.query.get("order_id", latest))

    def orders(self, ctx: Ctx) -> Response:
        return ctx.render("orders.html", orders=ctx.db.execute(
            "SELECT * FROM orders WHERE username = ? ORDER BY id DESC", (ctx.need_user(),)).fetchall())

    def order(self, ctx: Ctx) -> Response:
        row = ctx.db.execute("SELECT * FROM orders WHERE id = ? AND username = ?",
                             (ctx.path["order_id"], ctx.need_user())).fetchone()
        if row is None:
            raise HTTPException(404, f"no order {ctx.path['order_id']} for this customer")
        items = ctx.db.execute("SELECT i.*, p.slug FROM order_items i JOIN products p ON p.id = i.product_id "
                               "WHERE i.order_id = ?", (row["id"],)).fetchall()
        return ctx.render("order.html", o=row, items=items)

    # wishlist and account ----------------------------------------------------------------------
    def wishlist(self, ctx: Ctx) -> Response:
        items = ctx.db.execute(f"SELECT {PRODUCT_COLUMNS} FROM wishlist w JOIN products p ON p.id = w.product_id "
                               "WHERE w.username = ? ORDER BY w.id", (ctx.need_user(),)).fetchall()
        return ctx.render("wishlist.html", items=items)

    def wishlist_add(self, ctx: Ctx) -> Response:
        product = self._product(ctx, ctx.form.get("product", ""))
        ctx.db.execute("INSERT OR IGNORE INTO wishlist (username, product_id) VALUES (?, ?)",
                       (ctx.need_user(), product["id"]))
        return ctx.redirect("/wishlist/")

    def wishlist_remove(self, ctx: Ctx) -> Response:
        ctx.db.execute("DELETE FROM wishlist WHERE username = ? AND product_id = ?",
                       (ctx.need_user(), ctx.form.get("product")))
        return ctx.redirect("/wishlist/")

    def account(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        row = ctx.db.execute("SELECT display, email FROM accounts WHERE username = ?", (user,)).fetchone()
        return ctx.render("account.html", display=row["display"], email=row["email"], address=self._address(ctx, user))

    def save_address(self, ctx: Ctx) -> Response:
        user = ctx.need_user()
        ctx.db.execute("INSERT OR REPLACE INTO addresses VALUES (?, ?, ?, ?)",
                       (user, *(form_text(ctx.form, k, MAX_LINE) for k in ("name", "street", "city"))))
        return ctx.redirect("/customer/account/")

    def login(self, ctx: Ctx) -> Response:
        user = self.check_login(ctx.db, ctx.form.get("login[username]", ""), ctx.form.get("login[password]", ""))
        if user is None:
            return ctx.render("login.html", status=401, error="The account sign-in was incorrect.")
        ctx.log_in(user)
        return ctx.redirect("/customer/account/")

    def logout(self, ctx: Ctx) -> Response:
        ctx.log_out()
        return ctx.redirect("/")

    # helpers -----------------------------------------------------------------------------------
    def _product(self, ctx: Ctx, product_id: object) -> sqlite3.Row:
        row = ctx.db.execute("SELECT * FROM products WHERE id = ?", (str(product_id),)).fetchone()
        if row is None:
            raise HTTPException(404, f"no product {product_id}")
        return row

    def _address(self, ctx: Ctx, user: str) -> dict[str, str]:
        row = ctx.db.execute("SELECT name, street, city FROM addresses WHERE username = ?", (user,)).fetchone()
        return dict(row) if row else {"name": "", "street": "", "city": ""}

    def _display(self, ctx: Ctx) -> str | None:
        if ctx.user is None:
            return None
        return ctx.db.execute("SELECT display FROM accounts WHERE username = ?", (ctx.user,)).fetchone()[0]
