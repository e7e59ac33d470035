"""The shop's back office as seeded content: customers, two years of their orders, stock levels,
product details, reviews awaiting moderation, CMS pages and the admin account.

WebArena's shopping admin is the same Magento as the store, over the same database; so is ours
(nodes/browser/sites/shopping_admin.py). Everything here is drawn from a random stream of its own
(``shopping-admin:<seed>``) after the catalogue is built, so the catalogue, its reviews and the
fixture customer's three orders are exactly what they were before the back office existed (the
shipped tasks were written from them); only order numbers move, because orders are numbered by
date and the fixture customer's are the most recent."""

from __future__ import annotations

import json
import random
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from nodes.browser.sites import content

#: Magento's order status labels (what the grids show) -> status codes (what the REST API returns)
STATUS_CODES = {"Pending": "pending", "Processing": "processing", "Complete": "complete", "Canceled": "canceled",
                "On Hold": "holded", "Closed": "closed"}
#: status code -> Magento's order state
STATES = {"pending": "new", "processing": "processing", "complete": "complete", "canceled": "canceled",
          "holded": "holded", "closed": "closed"}
#: Magento's review status ids
APPROVED, PENDING, NOT_APPROVED = 1, 2, 3
REVIEW_STATUSES = {APPROVED: "Approved", PENDING: "Pending", NOT_APPROVED: "Not Approved"}
#: product status ids (Magento: 1 enabled, 2 disabled)
ENABLED, DISABLED = 1, 2
#: the option a product of these categories is ordered with (Magento's configurable products)
PRODUCT_OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "T-Shirts": ("Size", ("S", "M", "L", "XL")),
    "Hoodies & Sweatshirts": ("Size", ("S", "M", "L", "XL")),
    "Blankets & Throws": ("Size", ("Throw", "Twin", "Queen", "King")),
}
#: WebArena's shopping admin account (its ACCOUNTS["shopping_admin"])
ADMIN_USER, ADMIN_PASSWORD = "admin", "admin1234"
REGIONS = {"Pittsburgh": ("Pennsylvania", "152"), "Philadelphia": ("Pennsylvania", "191"),
           "Boston": ("Massachusetts", "021"), "Hartford": ("Connecticut", "061"),
           "Providence": ("Rhode Island", "029"), "Albany": ("New York", "122"), "Newark": ("New Jersey", "071"),
           "Burlington": ("Vermont", "054"), "Portland": ("Maine", "041"), "Buffalo": ("New York", "142")}
STREETS = ("Maple Ave", "Oak St", "Pine Rd", "Cedar Ln", "Elm St", "Harbor Way", "Hill St", "Lake Dr", "Park Pl")
MAKERS = ("Northwind", "Cedar & Pine", "Bluebird Goods", "Harbor Home", "Summit Supply", "Kestrel", "Lumen & Co")
HISTORY_DAYS = 730  # seeded orders span the two years before the content's epoch
CMS_PAGES = (  # Magento's default pages, in its order (page 2 is the home page)
    ("404 Not Found", "no-route", "The page you requested was not found, and we have a fine guess why.", 1),
    ("Home Page", "home", "Welcome to One Stop Market: blankets, mugs, tees, hoodies, pillows and backpacks.", 1),
    ("Enable Cookies", "enable-cookies", "Cookies must be enabled in your browser to use the cart.", 1),
    ("Privacy and Cookie Policy", "privacy-policy-cookie-restriction-mode",
     "We keep the data an order needs and nothing else.", 1),
    ("About us", "about-us", "One Stop Market started as a stall and grew into a web shop.", 1),
    ("Customer Service", "customer-service", "Write to us and we answer within two working days.", 0),
)


@dataclass
class OrderSpec:
    """One order before it has a number: orders are numbered in date order once all are drawn."""

    username: str
    created: str
    status: str
    ship_name: str
    ship_address: str
    items: list[tuple[int, str, str, int, int, str]] = field(default_factory=list)  # product, name, sku, price, qty, options
    hold_before: str = ""

    @property
    def total_cents(self) -> int:
        return sum(price * qty for _, _, _, price, qty, _ in self.items)


def options_json(pairs: list[tuple[str, str]]) -> str:
    """An ordered item's options as stored: a JSON list of [name, value] pairs ("[]" for none)."""
    return json.dumps([[name, value] for name, value in pairs])


def when(minutes: int) -> str:
    """``content.stamp`` with seconds, the way Magento writes created_at."""
    return content.stamp(minutes) + ":00"


def seed(db: sqlite3.Connection, rng: random.Random, size: int, fixture_orders: list[OrderSpec],
         fixture: tuple[str, str, str, str]) -> None:
    """Add the back office to a built catalogue. ``fixture_orders`` (the fixture customer's) join the
    drawn history; ``fixture`` is that customer's (email, name, street, city)."""
    products = db.execute("SELECT p.id, p.name, p.sku, p.price_cents, c.name FROM products p JOIN categories c "
                          "ON c.id = p.category_id ORDER BY p.id").fetchall()
    _stock_and_details(db, rng, products)
    customers = _customers(db, rng, 20 + size // 2, fixture)
    history = _history(rng, 40 + 2 * size, customers, products)
    _insert_orders(db, sorted(history + fixture_orders, key=lambda o: o.created))
    _reviews_to_moderate(db, rng, 4 + size // 3, [p[0] for p in products])
    db.executemany("INSERT INTO cms_pages (id, title, identifier, content, active, created, updated) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?)", [(i + 1, title, key, text, active, when(-HISTORY_DAYS * 1440 - 60),
                                              when(-HISTORY_DAYS * 1440 - 60))
                                             for i, (title, key, text, active) in enumerate(CMS_PAGES)])
    db.execute("INSERT INTO admin_users VALUES (?, ?, 'Admin', 'Store', 'admin@onestopmarket.com')",
               (ADMIN_USER, ADMIN_PASSWORD))


def _stock_and_details(db: sqlite3.Connection, rng: random.Random, products: list[tuple]) -> None:
    """Every product enabled and in stock (the shipped store tasks buy any of them), in varied amounts,
    with the details table VWA's product pages carry (its attribute helper reads the Manufacturer row)."""
    for product_id, _, _, _, _ in products:
        band = rng.random()
        qty = rng.randint(3, 9) if band < 0.1 else rng.randint(10, 49) if band < 0.3 else rng.randint(50, 400)
        db.execute("UPDATE products SET qty = ? WHERE id = ?", (qty, product_id))
        first = datetime(2020, 1, 6) + timedelta(days=rng.randint(0, 900))
        rows = [("Product Dimensions", f"{rng.randint(4, 30)} x {rng.randint(4, 30)} x {rng.randint(1, 12)} inches; "
                                       f"{rng.randint(3, 60)} Ounces"),
                ("Item model number", f"{rng.choice('ABCDEFGHJK')}{rng.randint(100, 999)}"),
                ("Date First Available", f"{first:%B} {first.day}, {first.year}"),
                ("Manufacturer", rng.choice(MAKERS))]
        db.executemany("INSERT INTO product_attributes VALUES (?, ?, ?, ?)",
                       [(product_id, i, label, value) for i, (label, value) in enumerate(rows)])


def _customers(db: sqlite3.Connection, rng: random.Random, count: int,
               fixture: tuple[str, str, str, str]) -> list[tuple[str, str, str, str]]:
    """Customers with unique names; the fixture customer first. Returns (email, name, address, since)."""
    email, name, street, city = fixture
    first, last = name.split(" ", 1)
    since = when(-HISTORY_DAYS * 1440 - 30 * 1440)
    db.execute("INSERT INTO customers (id, email, firstname, lastname, phone, street, city, region, zip, created) "
               "VALUES (1, ?, ?, ?, '650-555-0142', ?, ?, 'California', '94401', ?)", (email, first, last, street, city,
                                                                                       since))
    out = [(email, name, f"{street}, {city}", since)]
    names = rng.sample([(f, la) for f in content.FIRST for la in content.LAST if (f, la) != (first, last)],
                       k=min(count, len(content.FIRST) * len(content.LAST) - 1))
    for n, (given, family) in enumerate(names, start=2):
        city = rng.choice(list(REGIONS))
        region, zip_prefix = REGIONS[city]
        street = f"{rng.randint(10, 999)} {rng.choice(STREETS)}"
        address = f"{given.lower()}.{family.lower()}@{rng.choice(('gmail.com', 'yahoo.com', 'outlook.com'))}"
        # the first few join at the start of the history, so the earliest orders have someone to place them
        joined = -HISTORY_DAYS * 1440 - rng.randint(1, 60) * 1440 if n < 6 else \
            -rng.randint(30, HISTORY_DAYS + 30) * 1440
        db.execute("INSERT INTO customers (id, email, firstname, lastname, phone, street, city, region, zip, created) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (n, address, given, family, content.phone(rng), street, city, region,
                    f"{zip_prefix}{rng.randint(0, 99):02d}", when(joined)))
        out.append((address, f"{given} {family}", f"{street}, {city}", when(joined)))
    return out


def _history(rng: random.Random, count: int, customers: list[tuple[str, str, str, str]],
             products: list[tuple]) -> list[OrderSpec]:
    """Orders by the other customers over the two years before the epoch: recent ones still open,
    old ones mostly complete; each by a customer who had joined by then."""
    out = []
    for _ in range(count):
        minute = -rng.randint(1 * 1440, HISTORY_DAYS * 1440)
        created = when(minute)
        eligible = [c for c in customers[1:] if c[3] <= created] or customers[1:2]
        email, name, address, _ = rng.choice(eligible)
        recent = minute > -45 * 1440
        weights = (35, 30, 15, 10, 10, 0) if recent else (3, 4, 62, 18, 4, 9)
        status = rng.choices(list(STATUS_CODES), weights=weights)[0]
        spec = OrderSpec(email, created, status, name, address,
                         hold_before=rng.choice(("Pending", "Processing")) if status == "On Hold" else "")
        for product_id, pname, sku, price, category in rng.sample(products, k=min(len(products), rng.randint(1, 3))):
            option = PRODUCT_OPTIONS.get(category)
            pairs = [(option[0], rng.choice(option[1]))] if option else []
            spec.items.append((product_id, pname, sku, price, rng.choice((1, 1, 1, 2, 2, 3)), options_json(pairs)))
        out.append(spec)
    return out


def _insert_orders(db: sqlite3.Connection, orders: list[OrderSpec]) -> None:
    for number, order in enumerate(orders, start=1):
        db.execute("INSERT INTO orders (id, username, created, status, total_cents, ship_name, ship_address, "
                   "hold_before, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (number, order.username, order.created, order.status, order.total_cents, order.ship_name,
                    order.ship_address, order.hold_before, order.created))
        db.executemany("INSERT INTO order_items (order_id, product_id, name, sku, price_cents, qty, options) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)", [(number, *item) for item in order.items])


def _reviews_to_moderate(db: sqlite3.Connection, rng: random.Random, count: int, product_ids: list[int]) -> None:
    """Reviews customers sent that the store does not show yet (Pending) or that were turned down
    (Not Approved); they come after every approved one, as new reviews do."""
    start = db.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
    for n in range(count):
        author, _ = content.person(rng)
        rating = rng.randint(1, 5)
        status = rng.choices((PENDING, NOT_APPROVED), weights=(7, 3))[0]
        subject = rng.choice(("the fabric", "the colour", "the size", "the price", "the delivery", "the stitching"))
        db.execute("INSERT INTO reviews (product_id, author, rating, title, body, created, status) VALUES "
                   "(?, ?, ?, ?, ?, ?, ?)", (rng.choice(product_ids), author, rating,
                                             ("Awful", "Meh", "OK", "Good", "Great")[rating - 1],
                                             content.sentence(rng, subject), content.stamp(3100 + (start + n) * 17),
                                             status))
