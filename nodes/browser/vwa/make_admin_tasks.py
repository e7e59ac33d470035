"""Writes nodes/browser/vwa/data/admin_tasks.json: WebArena-format tasks on the shop's admin panel
(``__SHOPPING_ADMIN__``, the shop's own ``/admin``), drawn from the seeded shop (seed 0, default
size), so every answer, URL and page check is a stored fact.

    python -m nodes.browser.vwa.make_admin_tasks [--out FILE] [--seed 0]

The kinds follow WebArena's shopping-admin tasks: lookups in the grids and reports scored by
``exact_match``/``must_include``, navigation and filters scored by ``url_match`` (with the grid's
active filters read by ``program_html``, as WebArena's task 145 does), state changes
(``require_reset``) scored by ``program_html`` on the admin's edit pages with WebArena's own
locators (``product[price]``, ``product[status]``, ``status_id``, ``#order_status``...), checks in
the store of what the admin changed (through the page helpers ``shopping_get_product_price`` and
``shopping_get_num_reviews``), the REST helpers (``shopping_get_sku_latest_review_*``,
``shopping_get_latest_order_url``), and unachievable tasks (``N/A``). Gold actions use the locator
notation of nodes/browser/gold.py; a field is cleared (click, Ctrl+a, Backspace) before it is typed
into, and a ``select`` is chosen by typing its option's label and Enter. A pure function of the
seed: running it twice writes the same bytes."""

from __future__ import annotations

import calendar
import json
import random
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from nodes.browser.sites.shopping import FIXTURE, Shopping
from nodes.browser.sites.shopping_data import PENDING
from nodes.browser.vwa.make_local_tasks import LOGIN, generator_main, A, Builder, S, answer, html, money, pick, rows, unachievable, url

OUT = Path(__file__).resolve().parent / "data" / "admin_tasks.json"
NAV = {"customers": "click [css=#menu-magento-backend a.item-customer-manage]",
       "orders": "click [css=#menu-magento-backend a.item-sales-order]",
       "products": "click [css=#menu-magento-backend a.item-catalog-products]",
       "reviews": "click [css=#menu-magento-backend a.item-reviews-all]",
       "pending": "click [css=#menu-magento-backend a.item-reviews-pending]",
       "pages": "click [css=#menu-magento-backend a.item-cms-page]",
       "sales": "click [css=#menu-magento-backend a.item-report-salesroot-sales]",
       "bestsellers": "click [css=#menu-magento-backend a.item-report-products-bestsellers]"}
VALUE = "document.querySelector('[name=\"{}\"]').value"  # WebArena's form checks
BY_ID = "document.querySelector('[id=\"{}\"]').value"


def replace(selector: str, text: str) -> list[str]:
    """Gold steps that empty a filled field and type ``text`` into it (typing alone appends)."""
    return [f"click [css={selector}]", "press [Control+a]", "press [Backspace]", f"type [css={selector}] [{text}] [0]"]


def number(order_id: int) -> str:
    return f"{order_id:09d}"


def find_order(order_id: int) -> list[str]:
    return [NAV["orders"], f"type [css=#fulltext] [{number(order_id)}] [1]",
            f"click [css=#sales_order_grid a[href$='/order_id/{order_id}/']]"]


def find_product(row: sqlite3.Row) -> list[str]:
    return [NAV["products"], f"type [css=#fulltext] [{row['sku']}] [1]",
            f"click [css=#product_listing a[href$='/edit/id/{row['id']}/']]"]


def find_customer(row: sqlite3.Row) -> list[str]:
    return [NAV["customers"], f"type [css=#fulltext] [{row['email']}] [1]",
            f"click [css=#customer_listing a[href$='/edit/id/{row['id']}/']]"]


def find_review(row: sqlite3.Row) -> list[str]:
    return [NAV["reviews"], f"type [css=#fulltext] [{row['sku']}] [1]",
            f"click [css=#reviewGrid_table a[href$='/edit/id/{row['id']}/']]"]


def admin(b: Builder, rng: random.Random, seed: int) -> None:
    db = Shopping(seed=seed).db
    home = f"{A}/"
    login = LOGIN[A]
    customers = rows(db, "SELECT c.*, c.firstname || ' ' || c.lastname AS name, (SELECT COUNT(*) FROM orders o WHERE "
                     "o.username = c.email) AS n_orders FROM customers c ORDER BY c.id")
    orders = rows(db, "SELECT o.*, c.firstname || ' ' || c.lastname AS customer FROM orders o JOIN customers c ON "
                  "c.email = o.username ORDER BY o.id")
    products = rows(db, "SELECT p.*, (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id AND r.status = 1) AS "
                    "approved FROM products p ORDER BY p.id")
    names = Counter(p["name"] for p in products)
    unique = [p for p in products if names[p["name"]] == 1]
    reviews = rows(db, "SELECT r.*, p.sku, p.slug, p.name AS product, (SELECT MAX(id) FROM reviews x WHERE "
                   "x.product_id = r.product_id) AS latest, (SELECT COUNT(*) FROM reviews x WHERE x.product_id = "
                   "r.product_id AND x.status = 1) AS approved FROM reviews r JOIN products p ON p.id = r.product_id "
                   "ORDER BY r.id")
    others = [c for c in customers if c["email"] != FIXTURE[0]]

    # ---- lookups --------------------------------------------------------------------------------------
    for c in pick(rng, others, 3):
        b.add(template="What is the email address of our customer {{name}}?", values={"name": c["name"]}, start=home,
              ev=answer("exact_match", c["email"]),
              gold=[*login, NAV["customers"], f"type [css=#fulltext] [{c['name']}] [1]", f"stop [{c['email']}]"],
              level=("easy", "easy", "easy"))
    for c in pick(rng, [c for c in others if c["n_orders"] >= 2], 3):
        b.add(template="How many orders has the customer {{name}} placed in total?", values={"name": c["name"]},
              start=home, ev=answer("must_include", [str(c["n_orders"])]),
              gold=[*login, *find_customer(c), f"stop [{c['n_orders']}]"], level=("medium", "easy", "medium"))
    for o in pick(rng, orders, 3):
        total = money(o["total_cents"])
        b.add(template="What is the grand total of order #{{number}}?", values={"number": number(o["id"])},
              start=home, ev=answer("must_include", [total]),
              gold=[*login, *find_order(o["id"]), f"stop [{total}]"], level=("easy", "easy", "easy"))
    for o in pick(rng, [o for o in orders if o["username"] != FIXTURE[0]], 2):
        b.add(template="Which customer placed order #{{number}}? Answer with their name.",
              values={"number": number(o["id"])}, start=home, ev=answer("exact_match", o["customer"]),
              gold=[*login, NAV["orders"], f"type [css=#fulltext] [{number(o['id'])}] [1]", f"stop [{o['customer']}]"],
              level=("easy", "easy", "easy"))
    pending = sum(r["status"] == PENDING for r in reviews)
    b.add(template="How many product reviews are waiting for approval?", values={}, start=home,
          ev=answer("must_include", [str(pending)]), gold=[*login, NAV["pending"], f"stop [{pending}]"],
          level=("easy", "easy", "easy"))
    for p in pick(rng, unique, 3):
        b.add(template="How many units of {{product}} do we have in stock?", values={"product": p["name"]}, start=home,
              ev=answer("exact_match", str(p["qty"])),
              gold=[*login, NAV["products"], f"type [css=#fulltext] [{p['name']}] [1]", f"stop [{p['qty']}]"],
              level=("easy", "easy", "easy"))
    months = Counter(o["created"][:7] for o in orders if o["created"] < "2023-01")
    for month in sorted(pick(rng, sorted(months), 2)):
        year, mon = int(month[:4]), int(month[5:])
        last = calendar.monthrange(year, mon)[1]
        b.add(template="How many orders did the store receive in {{month}}?",
              values={"month": f"{calendar.month_name[mon]} {year}"}, start=home,
              ev=answer("must_include", [str(months[month])]),
              gold=[*login, NAV["sales"], f"type [css=#sales_report_from] [{mon}/1/{year % 100:02d}] [0]",
                    f"type [css=#sales_report_to] [{mon}/{last}/{year % 100:02d}] [0]",
                    "type [css=#sales_report_period_type] [Month] [1]", "click [css=#filter_form_submit]",
                    f"stop [{months[month]}]"], level=("medium", "easy", "medium"),
              comments="The Orders report counts orders of any status by purchase date.")
    for year in (2021, 2022):
        sold = Counter()
        for item in rows(db, "SELECT i.name, i.qty FROM order_items i JOIN orders o ON o.id = i.order_id WHERE "
                         "o.status != 'Canceled' AND o.created LIKE ? || '%'", str(year)):
            sold[item["name"]] += item["qty"]
        (top, n), (_, second) = sold.most_common(2)
        if n == second:
            continue  # a tie has no single answer
        b.add(template="Which product sold the most units in {{year}}?", values={"year": year}, start=home,
              ev=answer("must_include", [top]),
              gold=[*login, NAV["bestsellers"], f"type [css=#sales_report_from] [1/1/{year % 100:02d}] [0]",
                    f"type [css=#sales_report_to] [12/31/{year % 100:02d}] [0]",
                    "type [css=#sales_report_period_type] [Year] [1]", "click [css=#filter_form_submit]",
                    f"stop [{top}]"], level=("medium", "easy", "medium"),
              comments="Bestsellers leave canceled orders out, as Magento's report does.")
    for missing in ("Ada Lovelace", "Grace Hopper"):
        b.add(template="What is the phone number of our customer {{name}}?", values={"name": missing}, start=home,
              ev=unachievable(f"No customer is called {missing}."),
              gold=[*login, NAV["customers"], f"type [css=#fulltext] [{missing}] [1]", "stop [N/A]"],
              level=("medium", "easy", "medium"))

    # ---- navigation -------------------------------------------------------------------------------------
    b.add(template="Show me all customers.", values={}, start=home, ev=url(f"{A}/customer/index/", "GOLD in PRED"),
          gold=[*login, NAV["customers"], "stop"], level=("easy", "easy", "easy"))
    b.add(template="Show me the reviews that are waiting for approval.", values={}, start=home,
          ev=url(f"{A}/review/product/pending/", "GOLD in PRED"), gold=[*login, NAV["pending"], "stop"],
          level=("easy", "easy", "easy"))
    for status in ("Canceled", "On Hold"):
        ev = url(f"{A}/sales/order/?status={status.replace(' ', '+')}", "GOLD in PRED")
        ev["eval_types"].append("program_html")
        ev["program_html"] = [{"url": "last", "locator": "document.querySelector(\"div.admin__data-grid-filters-current\")"
                               ".outerText", "required_contents": {"must_include": [status]}}]
        b.add(template="Show me the orders that are {{status}}.", values={"status": status}, start=home, ev=ev,
              gold=[*login, NAV["orders"], f"type [css=#order-status-filter] [{status}] [1]",
                    "click [css=.admin__data-grid-header button.action-apply]", "stop"],
              level=("easy", "easy", "medium"))
    for p in pick(rng, unique, 2):
        b.add(template="Open the edit page of the product {{product}}.", values={"product": p["name"]}, start=home,
              ev=url(f"{A}/catalog/product/edit/id/{p['id']}/"), gold=[*login, *find_product(p), "stop"],
              level=("easy", "easy", "easy"))
    for year in (2021, 2022):
        ev = url(f"{A}/reports/report_sales/sales/", "GOLD in PRED")
        ev["eval_types"].append("program_html")
        ev["program_html"] = [{"url": "last", "locator": BY_ID.format("sales_report_from"),
                               "required_contents": {"exact_match": f"1/1/{year % 100}"}},
                              {"url": "last", "locator": BY_ID.format("sales_report_to"),
                               "required_contents": {"exact_match": f"12/31/{year % 100}"}}]
        b.add(template="Generate the orders report for the whole of {{year}}, month by month.", values={"year": year},
              start=home, ev=ev,
              gold=[*login, NAV["sales"], f"type [css=#sales_report_from] [1/1/{year}] [0]",
                    f"type [css=#sales_report_to] [12/31/{year}] [0]", "type [css=#sales_report_period_type] [Month] [1]",
                    "click [css=#filter_form_submit]", "stop"], level=("medium", "easy", "medium"),
              comments="Dates typed with a four-digit year come back in Magento's M/D/YY.")

    # ---- state changes: orders ------------------------------------------------------------------------------
    open_orders = [o for o in orders if o["status"] in ("Pending", "Processing") and o["username"] != FIXTURE[0]]
    chosen = pick(rng, open_orders, 4)
    for o in chosen[:2]:
        view = f"{A}/sales/order/view/order_id/{o['id']}/"
        b.add(template="Cancel order #{{number}}.", values={"number": number(o["id"])}, start=home, reset=True,
              ev=html(view, "document.querySelector(\"#order_status\").outerText", exact_match="Canceled"),
              gold=[*login, *find_order(o["id"]), "click [css=#order-view-cancel-button]", "stop"],
              level=("easy", "easy", "medium"))
    for o in chosen[2:3]:
        view = f"{A}/sales/order/view/order_id/{o['id']}/"
        b.add(template="Put order #{{number}} on hold.", values={"number": number(o["id"])}, start=home, reset=True,
              ev=html(view, "document.querySelector(\"#order_status\").outerText", exact_match="On Hold"),
              gold=[*login, *find_order(o["id"]), "click [css=#order-view-hold-button]", "stop"],
              level=("easy", "easy", "medium"))
    for o, note in zip(chosen[3:4], ("Your order is packed and ships tomorrow.",)):
        view = f"{A}/sales/order/view/order_id/{o['id']}/"
        b.add(template="Notify the customer of order #{{number}} with the comment \"{{comment}}\".",
              values={"number": number(o["id"]), "comment": note}, start=home, reset=True,
              ev=html(view, "document.querySelector(\"#order_history_block\").querySelector(\".note-list\")"
                      ".firstElementChild.querySelector(\".note-list-comment\").outerText", exact_match=note),
              gold=[*login, *find_order(o["id"]), f"type [css=#history_comment] [{note}] [0]",
                    "click [css=#history_notify]", "click [css=#order_history_block button.action-save]", "stop"],
              level=("medium", "easy", "medium"))

    # ---- state changes: products ------------------------------------------------------------------------
    chosen = pick(rng, unique, 9)
    for p in chosen[:2]:
        edit = f"{A}/catalog/product/edit/id/{p['id']}/"
        ev = html(edit, VALUE.format("product[status]"), exact_match="2")
        ev["program_html"].append({"url": f"{S}/{p['slug']}.html", "locator": "",
                                   "required_contents": {"must_include": ["no product or category"]}})
        b.add(template="Disable the product {{product}}: it has quality issues.", values={"product": p["name"]},
              start=home, reset=True, ev=ev,
              gold=[*login, *find_product(p), "type [css=#product-status] [No] [1]", "click [css=#save-button]", "stop"],
              level=("easy", "easy", "medium"), comments="A disabled product is gone from the store too.")
    for p, cut in zip(chosen[2:4], (500, 1000)):
        new = p["price_cents"] - cut
        edit = f"{A}/catalog/product/edit/id/{p['id']}/"
        ev = html(edit, VALUE.format("product[price]"), exact_match=f"{new / 100:.2f}")
        ev["program_html"].append({"url": f"{S}/{p['slug']}.html", "locator": "func:shopping_get_product_price(__page__)",
                                   "required_contents": {"required_values": [f"== {new / 100:g}"]}})
        b.add(template="Reduce the price of {{product}} by ${{amount}}.",
              values={"product": p["name"], "amount": cut // 100}, start=home, reset=True, ev=ev,
              gold=[*login, *find_product(p), *replace("#product-price", f"{new / 100:.2f}"), "click [css=#save-button]",
                    "stop"], level=("medium", "easy", "medium"),
              comments="The store's price box shows the new price (VWA's shopping_get_product_price).")
    for p, arrived in zip(chosen[4:6], (5, 12)):
        edit = f"{A}/catalog/product/edit/id/{p['id']}/"
        b.add(template="{{n}} more units of {{product}} arrived. Update its stock.",
              values={"n": arrived, "product": p["name"]}, start=home, reset=True,
              ev=html(edit, VALUE.format("product[quantity_and_stock_status][qty]"), exact_match=str(p["qty"] + arrived)),
              gold=[*login, *find_product(p), *replace("#product-qty", str(p["qty"] + arrived)),
                    "click [css=#save-button]", "stop"], level=("medium", "easy", "medium"))
    for p in chosen[6:7]:
        edit = f"{A}/catalog/product/edit/id/{p['id']}/"
        b.add(template="Mark {{product}} as out of stock.", values={"product": p["name"]}, start=home, reset=True,
              ev=html(edit, VALUE.format("product[quantity_and_stock_status][is_in_stock]"), exact_match="0"),
              gold=[*login, *find_product(p), "type [css=#product-stock] [Out of Stock] [1]", "click [css=#save-button]",
                    "stop"], level=("easy", "easy", "medium"))
    for p in chosen[7:8]:
        new = f"{p['name']} (Limited Edition)"
        edit = f"{A}/catalog/product/edit/id/{p['id']}/"
        b.add(template="Rename the product {{product}} to \"{{name}}\".", values={"product": p["name"], "name": new},
              start=home, reset=True, ev=html(edit, VALUE.format("product[name]"), exact_match=new),
              gold=[*login, *find_product(p), *replace("#product-name", new), "click [css=#save-button]", "stop"],
              level=("easy", "easy", "medium"))

    # ---- state changes: reviews ---------------------------------------------------------------------------
    waiting = [r for r in reviews if r["status"] == PENDING]
    for r in pick(rng, waiting, 2):
        edit = f"{A}/review/product/edit/id/{r['id']}/"
        ev = html(edit, VALUE.format("status_id"), exact_match="1")
        ev["program_html"].append({"url": f"{S}/{r['slug']}.html", "locator": "func:shopping_get_num_reviews(__page__)",
                                   "required_contents": {"exact_match": str(r["approved"] + 1)}})
        b.add(template="Approve the review \"{{title}}\" by {{nickname}} of {{product}}.",
              values={"title": r["title"], "nickname": r["author"], "product": r["product"]}, start=home, reset=True,
              ev=ev, gold=[*login, *find_review(r), "type [css=#status_id] [Approved] [1]", "click [css=#save_button]",
                           "stop"], level=("easy", "easy", "medium"),
              comments="Approved, it counts in the store's Reviews tab (VWA's shopping_get_num_reviews).")
    latest = [r for r in reviews if r["id"] == r["latest"]]
    earlier = {r["product_id"]: r for r in reviews if r["id"] != r["latest"]}  # the last but one of each product
    for r in pick(rng, [r for r in latest if r["product_id"] in earlier], 1):
        before = earlier[r["product_id"]]
        ev = html(f"{A}/review/product/edit/id/{r['id']}/", "", must_include=["Rating isn't Available"])
        ev["program_html"].append({"url": "last", "locator": f"func:shopping_get_sku_latest_review_author('{r['sku']}')",
                                   "required_contents": {"exact_match": before["author"]}})
        b.add(template="Delete the review by {{nickname}} of {{product}}.",
              values={"nickname": r["author"], "product": r["product"]}, start=home, reset=True, ev=ev,
              gold=[*login, *find_review(r), "click [css=.page-actions #delete]", "stop"],
              level=("easy", "easy", "medium"),
              comments="The product's latest review is then the one before it (the REST API's last).")
    for r, title in zip(pick(rng, latest, 2), ("Exactly what I wanted", "Not worth the money")):
        b.add(template="Change the summary of the latest review of {{product}} to \"{{title}}\".",
              values={"product": r["product"], "title": title}, start=home, reset=True,
              ev=html("last", f"func:shopping_get_sku_latest_review_title('{r['sku']}')", exact_match=title),
              gold=[*login, *find_review(r), *replace("#title", title), "click [css=#save_button]", "stop"],
              level=("medium", "easy", "medium"), comments="Read back through Magento's REST API as the admin.")

    # ---- state changes: customers and CMS pages -----------------------------------------------------------
    for c, phone in zip(pick(rng, others, 1), ("412-555-0199",)):
        edit = f"{A}/customer/index/edit/id/{c['id']}/"
        b.add(template="Change the phone number of our customer {{name}} to {{phone}}.",
              values={"name": c["name"], "phone": phone}, start=home, reset=True,
              ev=html(edit, VALUE.format("customer[telephone]"), exact_match=phone),
              gold=[*login, *find_customer(c), *replace("input[name='customer[telephone]']", phone), "click [css=#save]",
                    "stop"], level=("easy", "easy", "medium"))
    pages = rows(db, "SELECT * FROM cms_pages ORDER BY id")
    for page, title in ((pages[1], "Welcome to One Stop Market!"), (pages[4], "Our Story")):
        edit = f"{A}/cms/page/edit/page_id/{page['id']}/"
        b.add(template="Change the title of the \"{{page}}\" page of the site to \"{{title}}\".",
              values={"page": page["title"], "title": title}, start=home, reset=True,
              ev=html(edit, "document.querySelector('input[name=\"title\"]').value", exact_match=title),
              gold=[*login, NAV["pages"], f"click [css=#cms_page_listing a[href$='/page_id/{page['id']}/']]",
                    *replace("#title", title), "click [css=#cms_page_form #save]", "stop"],
              level=("easy", "easy", "medium"))
    page = next(p for p in pages if p["active"] and p["identifier"] == "enable-cookies")
    b.add(template="Disable the \"{{page}}\" page of the site.", values={"page": page["title"]}, start=home,
          reset=True, ev=html(f"{A}/cms/page/edit/page_id/{page['id']}/", VALUE.format("is_active"), exact_match="0"),
          gold=[*login, NAV["pages"], f"click [css=#cms_page_listing a[href$='/page_id/{page['id']}/']]",
                "type [css=#is_active] [No] [1]", "click [css=#cms_page_form #save]", "stop"],
          level=("easy", "easy", "medium"))

    # ---- the store and its admin together -------------------------------------------------------------------
    new_order = orders[-1]["id"] + 1
    for p in pick(rng, [p for p in unique if p["qty"] >= 5], 1):
        ev = html("func:shopping_get_latest_order_url()", "document.querySelector(\".order-details-items.ordered\")"
                  ".outerText", must_include=[p["sku"]])
        ev["program_html"].append({"url": f"{A}/sales/order/view/order_id/{new_order}/",
                                   "locator": "document.querySelector(\"#order_status\").outerText",
                                   "required_contents": {"exact_match": "On Hold"}})
        b.add(template="Buy the {{product}} in the store as Emma Lopez, then put her new order on hold in the admin "
              "panel.", values={"product": p["name"]}, start=f"{S}/", reset=True, ev=ev,
              gold=[*LOGIN[S], f"type [css=input[name=q]] [{p['name']}] [1]",
                    f"click [css=a.product-item-link[href$='/{p['slug']}.html']]", "click [css=#product-addtocart-button]",
                    "click [css=a.checkout]", "click [css=#place-order]", *login,
                    f"click [css=#lastOrdersGrid a[href$='/order_id/{new_order}/']]",
                    "click [css=#order-view-hold-button]", "stop"],
              level=("hard", "easy", "hard"),
              comments=f"The new order is number {new_order}, the store's latest (VWA's shopping_get_latest_order_url).")


def build(seed: int = 0) -> list[dict[str, Any]]:
    b = Builder()
    admin(b, random.Random(f"tasks:admin:{seed}"), seed)
    for task in b.tasks:  # a task whose checks read the store uses the store too
        if S in json.dumps(task["eval"]) and "shopping" not in task["sites"]:
            task["sites"].insert(0, "shopping")
    return b.tasks


def main(argv: list[str] | None = None) -> int:
    return generator_main(argv, __doc__ or "", OUT, build, "the shop's")


if __name__ == "__main__":
    raise SystemExit(main())
