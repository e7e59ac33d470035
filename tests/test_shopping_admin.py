"""The shop's admin panel, its REST subset and the shopping func: helpers (issue 37's WebArena shopping admin).

The site is the real Starlette app: in-process behind Starlette's TestClient for the pages, the
REST API, hostile input and resets; served by a real uvicorn on 127.0.0.1 (a socket bound to port
0) for the REST helpers, which talk HTTP as they do to a real Magento; read by a real Chromium for
the page helpers. Answers are read from the seeded database with SQL of the test's own, never from
the code under test. The graph test plays a subset of nodes/browser/vwa/data/admin_tasks.json
through launch/vwa_admin_gold.yaml: the gold sequences score 1, each one perturbed (a wrong answer,
a wrong click, a dropped step) scores 0."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
import pytest_asyncio
import uvicorn
from starlette.testclient import TestClient

from nodes.browser.actions import parse_action
from nodes.browser.env import BrowserEnv, site_node
from nodes.browser.gold import parse_gold
from nodes.browser.sites.framework import login_state, session_cookie_name
from nodes.browser.sites.shopping import FIXTURE, Shopping
from nodes.browser.sites.shopping_data import APPROVED, PENDING
from nodes.browser.vwa import helpers_shopping as hs
from nodes.browser.vwa.helpers import HelperContext
from nodes.browser.vwa.make_admin_tasks import build
from nodes.browser.vwa.page import PlaywrightPageServices
from nodes.browser.vwa.registry import REGISTRY
from nodes.browser.vwa.tasks import load_task_file
from tests.helpers import ROOT
from tests.vwa_runs import run_tasks

FILE = ROOT / "nodes/browser/vwa/data/admin_tasks.json"
GOLD = ROOT / "launch" / "vwa_admin_gold.yaml"
TASKS: list[dict[str, Any]] = json.loads(FILE.read_text())
ADMIN = {"login[username]": "admin", "login[password]": "admin1234", "referer": "/admin/dashboard/"}
CUSTOMER = {"login[username]": FIXTURE[0], "login[password]": "Password.123"}
browser_test = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def site() -> Iterator[Shopping]:
    shop = Shopping(seed=0)
    yield shop


@pytest.fixture
def web(site: Shopping) -> Iterator[TestClient]:
    """A fresh client (no cookies) on the module's shop, reset after the test."""
    yield TestClient(site.app(), raise_server_exceptions=False)
    site.reset()


def admin(client: TestClient) -> TestClient:
    reply = client.post("/admin/", data=ADMIN)
    assert reply.status_code == 200 and "Lifetime Sales" in reply.text, reply.text[:300]
    return client


def sql(site: Shopping, query: str, *args: Any) -> list[sqlite3.Row]:
    return site.db.execute(query, args).fetchall()


def refused(reply: Any, *words: str) -> None:
    assert reply.status_code == 400, (reply.status_code, reply.text[:300])
    for word in words:
        assert word in reply.text, reply.text[:300]


# ---- the admin panel ---------------------------------------------------------------------------------

def test_site_login_for_shopping_admin_is_the_admins_session_and_not_a_customers(web: TestClient) -> None:
    """WebArena's .auth/shopping_admin_state.json, made by the site (site.login) instead of a login form."""
    admin = login_state(Shopping, 0, "http://testserver/admin", for_site="shopping_admin")["cookies"][0]
    customer = login_state(Shopping, 0, "http://testserver/")["cookies"][0]
    assert admin["name"] == "fb_admin" and customer["name"] == session_cookie_name("shopping")
    signed_in = TestClient(web.app, cookies={admin["name"]: admin["value"]}).get("/admin/dashboard/")
    assert 'name="login[username]"' not in signed_in.text and "Dashboard" in signed_in.text
    as_customer = TestClient(web.app, cookies={customer["name"]: customer["value"]})
    assert 'name="login[username]"' in as_customer.get("/admin/dashboard/").text
    forged = TestClient(web.app, cookies={"fb_admin": customer["value"]})  # a customer's signature on the admin cookie
    assert 'name="login[username]"' in forged.get("/admin/dashboard/").text


def test_admin_pages_need_the_admin_and_a_customer_session_is_not_one(web: TestClient) -> None:
    page = web.get("/admin/sales/order/?status=Canceled")
    assert page.status_code == 200 and 'name="login[username]"' in page.text  # the sign-in form, at that URL
    assert 'name="referer" value="/admin/sales/order/?status=Canceled"' in page.text
    bad = web.post("/admin/", data={**ADMIN, "login[password]": "wrong"})
    assert bad.status_code == 401 and "sign-in was incorrect" in bad.text
    web.post("/customer/account/loginPost/", data=CUSTOMER)
    assert 'name="login[username]"' in web.get("/admin/dashboard/").text  # a customer is no admin
    assert web.post("/admin/catalog/product/save/id/1/", data={"product[name]": "x"}).status_code == 401
    went = web.post("/admin/", data={**ADMIN, "referer": "/admin/sales/order/?status=Canceled"})
    assert went.url.path == "/admin/sales/order/" and "Active filters" in went.text
    assert web.post("/admin/", data={**ADMIN, "referer": "//evil.example/x"}).url.path == "/admin/dashboard/"
    fresh = TestClient(web.app)
    fresh.cookies.set(session_cookie_name("shopping"), web.cookies.get("fb_admin") or "")  # the admin's as a customer's
    assert fresh.get("/checkout/cart/").status_code == 401
    web.get("/admin/admin/auth/logout/")
    assert 'name="login[username]"' in web.get("/admin/dashboard/").text


def test_every_admin_page_renders_for_the_admin(web: TestClient, site: Shopping) -> None:
    admin(web)
    order, customer, product, review = (sql(site, f"SELECT MAX(id) FROM {t}")[0][0]
                                        for t in ("orders", "customers", "products", "reviews"))
    for path in ("/admin/dashboard/", "/admin/admin/dashboard/", "/admin/sales/order/?search=000000001&sort=total&dir=asc",
                 f"/admin/sales/order/view/order_id/{order}/", "/admin/customer/index/?sort=name",
                 f"/admin/customer/index/edit/id/{customer}/", "/admin/catalog/product/?status=1&stock=1&sort=qty&dir=desc",
                 f"/admin/catalog/product/edit/id/{product}/", "/admin/review/product/?status=2",
                 "/admin/review/product/pending/", f"/admin/review/product/edit/id/{review}/", "/admin/cms/page/",
                 "/admin/cms/page/new/", "/admin/cms/page/edit/page_id/2/",
                 "/admin/reports/report_sales/sales/?from=1/1/22&to=12/31/22&period_type=month",
                 "/admin/reports/report_sales/bestsellers/?from=1/1/22&to=12/31/22&period_type=year"):
        reply = web.get(path)
        assert reply.status_code == 200 and "/ Magento Admin</title>" in reply.text, (path, reply.text[:300])
    grid = web.get("/admin/sales/order/?status=Canceled").text
    canceled = sql(site, "SELECT COUNT(*) FROM orders WHERE status = 'Canceled'")[0][0]
    assert f"{canceled} records found" in grid and "<span>Canceled</span>" in grid
    assert web.get("/admin/review/product/edit/id/999999").status_code == 404
    assert "Rating isn't Available" in web.get("/admin/review/product/edit/id/999999").text
    for path in ("/admin/sales/order/view/order_id/999999/", "/admin/catalog/product/edit/id/999999/",
                 "/admin/customer/index/edit/id/999999/", "/admin/cms/page/edit/page_id/999999/"):
        assert web.get(path).status_code == 404, path
    refused(web.get("/admin/sales/order/?sort=drop+table"), "sort must be one of")
    refused(web.get("/admin/sales/order/?status=Lost"), "status must be one of")


def test_admin_changes_show_in_the_store_and_store_orders_in_the_admin(web: TestClient, site: Shopping) -> None:
    admin(web)
    product = sql(site, "SELECT * FROM products WHERE id = 5")[0]
    page = f"/{product['slug']}.html"
    form = {"product[name]": "Renamed Mug", "product[price]": "12.50", "product[quantity_and_stock_status][qty]": "7",
            "product[quantity_and_stock_status][is_in_stock]": "1", "product[status]": "1",
            "product[description]": "New words."}
    saved = web.post("/admin/catalog/product/save/id/5/", data=form)
    assert "You saved the product." in saved.text and 'name="product[price]" value="12.50"' in saved.text
    assert "You saved the product." not in web.get("/admin/catalog/product/edit/id/5/").text  # shown once
    shown = web.get(page).text
    assert "Renamed Mug" in shown and '<span class="price">$12.50</span>' in shown and "New words." in shown
    web.post("/admin/catalog/product/save/id/5/", data={**form, "product[quantity_and_stock_status][is_in_stock]": "0"})
    assert "Out of stock" in web.get(page).text and 'id="product-addtocart-button"' not in web.get(page).text
    web.post("/admin/catalog/product/save/id/5/", data={**form, "product[status]": "2"})
    assert web.get(page).status_code == 404
    assert 'class="product-item-link"' not in web.get(f"/catalogsearch/result/?q={product['sku']}").text
    # the store's side: an order placed there is the admin's latest, and takes its stock
    web.post("/admin/catalog/product/save/id/5/", data=form)
    web.post("/customer/account/loginPost/", data=CUSTOMER)
    web.post("/checkout/cart/add/", data={"product": "5", "qty": "8"})
    short = web.post("/checkout/", data={"name": "Emma Lopez", "street": "1 Main St", "city": "Boston"})
    assert short.status_code == 400 and "requested qty is not available" in short.text  # 7 in stock
    web.post("/checkout/cart/delete/", data={"id": str(sql(site, "SELECT id FROM cart")[0][0])})
    web.post("/checkout/cart/add/", data={"product": "5", "qty": "7"})
    done = web.post("/checkout/", data={"name": "Emma Lopez", "street": "1 Main St", "city": "Boston"})
    number = int(re.search(r'class="order-number">(\d+)<', done.text).group(1))
    assert number == sql(site, "SELECT MAX(id) FROM orders")[0][0]
    grid = web.get("/admin/sales/order/").text
    assert grid.index(f"{number:09d}") < grid.index(f"{number - 1:09d}")  # newest first
    assert 'class="qty">0<' in web.get("/admin/catalog/product/?search=" + product["sku"]).text
    assert "Out of stock" in web.get(page).text  # the last one sold


def test_order_status_changes_and_comments(web: TestClient, site: Shopping) -> None:
    admin(web)
    pending = sql(site, "SELECT o.id, i.product_id, i.qty FROM orders o JOIN order_items i ON i.order_id = o.id "
                  "WHERE o.status = 'Pending' ORDER BY o.id LIMIT 1")[0]
    stock = sql(site, "SELECT qty FROM products WHERE id = ?", pending["product_id"])[0][0]
    base = f"/admin/sales/order/%s/order_id/{pending['id']}/"
    held = web.post(base % "hold")
    assert '<span id="order_status">On Hold</span>' in held.text and "You put the order on hold." in held.text
    refused(web.post(base % "cancel"), "only a Pending or Processing order can be canceled")
    assert '<span id="order_status">Pending</span>' in web.post(base % "unhold").text  # back to what it was
    assert '<span id="order_status">Canceled</span>' in web.post(base % "cancel").text
    assert sql(site, "SELECT qty FROM products WHERE id = ?", pending["product_id"])[0][0] >= stock + pending["qty"]
    refused(web.post(base % "unhold"), "not On Hold")
    web.post(base % "addComment", data={"history[comment]": "first", "history[is_customer_notified]": "1"})
    view = web.post(base % "addComment", data={"history[comment]": "second <b>bold</b>"}).text
    notes = re.findall(r'<div class="note-list-comment">(.*?)</div>', view)
    assert notes == ["second &lt;b&gt;bold&lt;/b&gt;", "first"] and "Customer Notified" in view
    refused(web.post(base % "addComment", data={"history[comment]": "  "}), "history[comment] is required")


def test_reviews_moderation_and_the_store(web: TestClient, site: Shopping) -> None:
    admin(web)
    review = sql(site, "SELECT r.*, p.slug FROM reviews r JOIN products p ON p.id = r.product_id WHERE r.status = ? "
                 "ORDER BY r.id LIMIT 1", PENDING)[0]
    page = f"/{review['slug']}.html"
    assert review["body"] not in web.get(page).text  # pending: not in the store
    waiting = sql(site, "SELECT COUNT(*) FROM reviews WHERE status = ?", PENDING)[0][0]
    assert f"{waiting} records found" in web.get("/admin/review/product/pending/").text
    form = {"status_id": str(APPROVED), "nickname": review["author"], "title": "Edited", "detail": review["body"]}
    edit = web.post(f"/admin/review/product/save/id/{review['id']}/", data=form)
    assert "You saved the review." in edit.text and '<option value="1" selected>' in edit.text
    assert "Edited" in web.get(page).text and review["body"] in web.get(page).text
    web.post(f"/admin/review/product/delete/id/{review['id']}/")
    assert "Rating isn't Available" in web.get(f"/admin/review/product/edit/id/{review['id']}/").text
    assert "Edited" not in web.get(page).text
    other = sql(site, "SELECT MAX(id) FROM reviews")[0][0]
    refused(web.post(f"/admin/review/product/save/id/{other}/", data={**form, "status_id": "9"}), "status_id must be one of")
    assert web.post(f"/admin/review/product/save/id/{review['id']}/", data=form).status_code == 404  # deleted


def test_cms_pages_in_the_admin_and_the_store(web: TestClient) -> None:
    admin(web)
    assert "About us" in web.get("/about-us").text and web.get("/customer-service").status_code == 404
    page = {"page_id": "5", "title": "Our Story", "identifier": "about-us", "content": "We began small.", "is_active": "1"}
    assert 'name="title" value="Our Story"' in web.post("/admin/cms/page/save/", data=page).text
    assert "Our Story" in web.get("/about-us").text and "We began small." in web.get("/about-us").text
    web.post("/admin/cms/page/save/", data={**page, "is_active": "0"})
    assert web.get("/about-us").status_code == 404
    new = web.post("/admin/cms/page/save/", data={**page, "page_id": "", "identifier": "returns", "title": "Returns"})
    assert "You saved the page." in new.text and "Returns" in web.get("/returns").text
    refused(web.post("/admin/cms/page/save/", data={**page, "page_id": "", "identifier": "home"}), "already used by page 2")
    refused(web.post("/admin/cms/page/save/", data={**page, "identifier": "admin"}), "identifier (URL Key)")
    refused(web.post("/admin/cms/page/save/", data={**page, "identifier": "Bad Key.html"}), "identifier (URL Key)")
    home = {"page_id": "2", "title": "Hello shoppers", "identifier": "home", "content": "Hi.", "is_active": "1"}
    web.post("/admin/cms/page/save/", data=home)
    assert "<title>Hello shoppers</title>" in web.get("/").text


def test_reports_count_what_the_database_holds(web: TestClient, site: Shopping) -> None:
    admin(web)
    month = web.get("/admin/reports/report_sales/sales/?from=1/1/2022&to=12/31/2022&period_type=month").text
    assert 'id="sales_report_from" value="1/1/22"' in month and 'id="sales_report_to" value="12/31/22"' in month
    counted = {f"{int(m[5:7])}/{m[:4]}": n for m, n in sql(
        site, "SELECT substr(created, 1, 7), COUNT(*) FROM orders WHERE created LIKE '2022%' GROUP BY 1")}
    shown = dict(re.findall(r'<td class="period">([^<]+)</td><td class="orders">(\d+)</td>', month))
    assert {k: int(v) for k, v in shown.items()} == counted
    canceled_only = web.get("/admin/reports/report_sales/sales/?from=2022-01-01&to=2022-12-31&period_type=year"
                            "&order_status=Canceled").text
    assert re.search(r'class="orders">(\d+)<', canceled_only).group(1) == str(sql(
        site, "SELECT COUNT(*) FROM orders WHERE created LIKE '2022%' AND status = 'Canceled'")[0][0])
    best = web.get("/admin/reports/report_sales/bestsellers/?from=1/1/22&to=12/31/22&period_type=year").text
    top = sql(site, "SELECT i.name, SUM(i.qty) AS n FROM order_items i JOIN orders o ON o.id = i.order_id WHERE "
              "o.created LIKE '2022%' AND o.status != 'Canceled' GROUP BY i.product_id ORDER BY n DESC, i.name LIMIT 1")[0]
    assert re.search(r'class="product">([^<]+)</td>', best).group(1) == top["name"]
    refused(web.get("/admin/reports/report_sales/sales/?from=13/45/22&to=1/1/23"), "from must be a date like 2/1/23")
    refused(web.get("/admin/reports/report_sales/sales/?from=2/1/23&to=1/1/23"), "is before from")
    refused(web.get("/admin/reports/report_sales/sales/?from=2/1/23"), "needs both dates")
    refused(web.get("/admin/reports/report_sales/sales/?from=1/1/22&to=1/2/22&period_type=week"), "period_type")


def test_hostile_input_is_refused_or_escaped_and_gone_after_a_reset(web: TestClient, site: Shopping) -> None:
    admin(web)
    before = list(site.db.iterdump())
    form = {"product[name]": "Mug", "product[price]": "10.00", "product[quantity_and_stock_status][qty]": "3",
            "product[quantity_and_stock_status][is_in_stock]": "1", "product[status]": "1", "product[description]": ""}
    save = "/admin/catalog/product/save/id/3/"
    refused(web.post(save, data={**form, "product[name]": "x" * (1 << 20)}), "product[name] may hold at most 255")
    refused(web.post(save, data={**form, "product[description]": "y" * (1 << 20)}), "product[description]")
    refused(web.post(save, data={**form, "product[name]": "nul\x00byte"}), "must not contain NUL")
    refused(web.post(save, data={**form, "product[name]": "   "}), "product[name] is required")
    for price in ("abc", "-1", "1.234", "1e309", "NaN", "10000000"):
        refused(web.post(save, data={**form, "product[price]": price}), "product[price] must be a price")
    refused(web.post(save, data={**form, "product[quantity_and_stock_status][qty]": "9" * 30}), "qty")
    refused(web.post(save, data={**form, "product[status]": "3"}), "product[status] must be one of")
    refused(web.get("/admin/sales/order/?search=" + "w" * 300), "search may hold at most 200")
    refused(web.get("/admin/customer/index/?search=" + "+".join(["w"] * 40)), "a search takes at most")
    refused(web.post("/admin/customer/index/save/id/2/", data={"customer[firstname]": "A\x00", "customer[lastname]": "B"}),
            "NUL")
    refused(web.post("/review/product/post/id/1/", data={"rating": "5", "detail": "z" * (1 << 20)}), "detail")
    web.post("/customer/account/loginPost/", data=CUSTOMER)
    refused(web.post("/customer/address/formPost/", data={"name": "n" * 300, "street": "s", "city": "c"}), "name")
    quoted = "O'Brien \"<script>alert(1)</script>\" -- '; DROP TABLE products; --"
    web.post(save, data={**form, "product[name]": quoted})
    page = web.get("/admin/catalog/product/?search=O%27Brien").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    assert sql(site, "SELECT name FROM products WHERE id = 3")[0][0] == quoted
    big = web.post("/rest/V1/integration/admin/token", content=b'{"username": "' + b"a" * (1 << 17) + b'"}',
                   headers={"content-type": "application/json"})
    assert big.status_code == 413 and "at most 65,536 bytes" in big.json()["message"]
    site.reset()
    assert list(site.db.iterdump()) == before


def test_reset_restores_the_seeded_shop_in_well_under_a_second(web: TestClient, site: Shopping) -> None:
    admin(web)
    before = list(site.db.iterdump())
    web.post("/admin/sales/order/cancel/order_id/%d/" % sql(site, "SELECT id FROM orders WHERE status = 'Pending'")[0][0])
    web.post("/admin/cms/page/save/", data={"page_id": "", "title": "Extra", "identifier": "extra", "content": "",
                                            "is_active": "1"})
    web.post("/admin/review/product/delete/id/1/")
    assert list(site.db.iterdump()) != before
    times = []
    for _ in range(5):
        started = time.perf_counter()
        assert web.post("/reset").json()["site"] == "shopping"
        times.append(time.perf_counter() - started)
    assert list(site.db.iterdump()) == before
    print(f"reset over HTTP: best {min(times) * 1000:.1f} ms, worst {max(times) * 1000:.1f} ms")
    assert max(times) < 1.0


def test_the_seed_decides_the_back_office() -> None:
    a, b, c = Shopping(seed=3, size=20), Shopping(seed=3, size=20), Shopping(seed=4, size=20)
    assert list(a.db.iterdump()) == list(b.db.iterdump()) != list(c.db.iterdump())
    dates = [row[0] for row in a.db.execute("SELECT created FROM orders ORDER BY id")]
    assert dates == sorted(dates) and dates[0] < "2021-09" and dates[-1] > "2023-03"  # two years, numbered by date
    assert a.db.execute("SELECT MAX(id) FROM orders").fetchone()[0] == a.db.execute(
        "SELECT id FROM orders WHERE username = ? ORDER BY created DESC LIMIT 1", (FIXTURE[0],)).fetchone()[0]


# ---- the REST API ------------------------------------------------------------------------------------

def token(client: TestClient, **body: Any) -> Any:
    return client.post("/rest/default/V1/integration/admin/token", json=body or {"username": "admin",
                                                                                   "password": "admin1234"})


def test_rest_token_orders_products_and_reviews(web: TestClient, site: Shopping) -> None:
    granted = token(web)
    assert granted.status_code == 200 and isinstance(granted.json(), str) and len(granted.json()) == 32
    assert token(web, username="admin", password="nope").status_code == 401
    assert "sign-in was incorrect" in token(web, username="admin", password="nope").json()["message"]
    assert token(web, username=["admin"], password="x").status_code == 400
    bad = web.post("/rest/V1/integration/admin/token", content=b"{not json", headers={"content-type": "application/json"})
    assert bad.status_code == 400 and "must be JSON" in bad.json()["message"]
    auth = {"Authorization": f"Bearer {granted.json()}"}
    latest = {"searchCriteria[sortOrders][0][field]": "created_at", "searchCriteria[sortOrders][0][direction]": "DESC",
              "searchCriteria[pageSize]": "1"}
    assert web.get("/rest/V1/orders", params=latest).status_code == 401
    assert web.get("/rest/V1/orders", params=latest, headers={"Authorization": "Bearer abc"}).status_code == 401
    assert web.get("/rest/V1/orders", params=latest,
                   headers={"Authorization": f"Bearer {site.sign('admin', 'admin')}"}).status_code == 401
    found = web.get("/rest/V1/orders", params=latest, headers=auth).json()
    newest = sql(site, "SELECT * FROM orders ORDER BY created DESC LIMIT 1")[0]
    assert found["total_count"] == sql(site, "SELECT COUNT(*) FROM orders")[0][0] and len(found["items"]) == 1
    item = found["items"][0]
    assert item["increment_id"] == f"{newest['id']:09d}" and item["created_at"] == newest["created"]
    assert item["customer_email"] == FIXTURE[0] and item["grand_total"] == newest["total_cents"] / 100
    assert web.get("/rest/default/V1/orders", params=latest, headers=auth).json()["items"][0] == item
    oldest = web.get("/rest/V1/orders", params={**latest, "searchCriteria[sortOrders][0][direction]": "ASC"},
                     headers=auth).json()["items"][0]
    assert oldest["entity_id"] == 1
    canceled = web.get("/rest/V1/orders", headers=auth, params={
        "searchCriteria[filter_groups][0][filters][0][field]": "status",
        "searchCriteria[filter_groups][0][filters][0][value]": "canceled",
        "searchCriteria[filter_groups][1][filters][0][field]": "created_at",
        "searchCriteria[filter_groups][1][filters][0][value]": "2022-01-01",
        "searchCriteria[filter_groups][1][filters][0][condition_type]": "gteq"}).json()
    assert canceled["total_count"] == sql(site, "SELECT COUNT(*) FROM orders WHERE status = 'Canceled' AND "
                                          "created >= '2022-01-01'")[0][0]
    assert {o["status"] for o in canceled["items"]} == {"canceled"}
    second = web.get("/rest/V1/orders", headers=auth, params={"searchCriteria[pageSize]": "5",
                                                              "searchCriteria[currentPage]": "2"}).json()
    assert [o["entity_id"] for o in second["items"]] == [6, 7, 8, 9, 10]
    assert web.get("/rest/V1/orders/3", headers=auth).json()["entity_id"] == 3
    for params, word in (({"searchCriteria[bogus]": "1"}, "unknown query parameter"),
                         ({"searchCriteria[sortOrders][0][field]": "password"}, "field must be one of"),
                         ({"searchCriteria[pageSize]": "0"}, "pageSize"),
                         ({"searchCriteria[filter_groups][0][filters][0][field]": "status",
                           "searchCriteria[filter_groups][0][filters][0][condition_type]": "regexp"}, "condition_type")):
        reply = web.get("/rest/V1/orders", params=params, headers=auth)
        assert reply.status_code == 400 and word in reply.json()["message"], reply.text
    product = sql(site, "SELECT * FROM products WHERE id = 5")[0]
    shown = web.get(f"/rest/V1/products/{product['sku']}", headers=auth).json()
    assert shown["sku"] == product["sku"] and {"attribute_code": "url_key", "value": product["slug"]} in \
        shown["custom_attributes"]
    reviews = web.get(f"/rest/V1/products/{product['sku']}/reviews", headers=auth).json()
    stored = sql(site, "SELECT * FROM reviews WHERE product_id = 5 ORDER BY id")
    assert [(r["nickname"], r["title"], r["detail"]) for r in reviews] == [(s["author"], s["title"], s["body"])
                                                                           for s in stored]
    assert all(r["ratings"][0]["rating_name"] == "Rating" and r["ratings"][0]["percent"] == s["rating"] * 20
               for r, s in zip(reviews, stored))
    missing = web.get("/rest/V1/products/NO-SUCH-SKU/reviews", headers=auth)
    assert missing.status_code == 404 and "doesn't exist" in missing.json()["message"]


# ---- the helpers: REST ones over a real HTTP server ------------------------------------------------------

class Served:
    """A Shopping site on a real uvicorn, on a socket bound to 127.0.0.1 port 0, in a thread."""

    def __init__(self) -> None:
        self.site = Shopping(seed=0)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(self.site.app(), log_level="warning", access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.02)

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    server = Served()
    yield server
    server.close()


def context(served: Served, page: Any = None) -> HelperContext:
    return HelperContext(page, "", {"shopping": served.url + "/", "shopping_admin": served.url + "/admin"})


async def test_rest_helpers_answer_from_the_local_shop(served: Served, monkeypatch: pytest.MonkeyPatch) -> None:
    site, ctx = served.site, context(served)
    newest = sql(site, "SELECT id FROM orders ORDER BY created DESC LIMIT 1")[0][0]
    assert await hs.shopping_get_latest_order_url(ctx) == f"{served.url}/sales/order/view/order_id/{newest}/"
    product = sql(site, "SELECT p.id, p.sku, p.slug FROM products p WHERE (SELECT COUNT(*) FROM reviews r WHERE "
                  "r.product_id = p.id) >= 2 ORDER BY p.id LIMIT 1")[0]
    last = sql(site, "SELECT * FROM reviews WHERE product_id = ? ORDER BY id DESC LIMIT 1", product["id"])[0]
    sku = product["sku"]
    assert await hs.shopping_get_sku_latest_review_author(ctx, sku) == last["author"]
    assert await hs.shopping_get_sku_latest_review_rating(ctx, sku) == str(last["rating"] * 20)
    assert await hs.shopping_get_sku_latest_review_text(ctx, sku) == last["body"]
    assert await hs.shopping_get_sku_latest_review_title(ctx, sku) == last["title"]
    assert await hs.shopping_get_sku_product_page_url(ctx, sku) == f"{served.url}/{product['slug']}.html"
    bare = sql(site, "SELECT sku FROM products p WHERE NOT EXISTS (SELECT 1 FROM reviews r WHERE r.product_id = p.id) "
               "ORDER BY id LIMIT 1")[0][0]
    for helper in ("author", "rating", "text", "title"):
        assert await getattr(hs, f"shopping_get_sku_latest_review_{helper}")(ctx, bare) == ""
    # through the registry, as a task's func: string calls them
    from nodes.browser.vwa.funcs import parse_func
    assert await REGISTRY.call(parse_func(f"func:shopping_get_sku_latest_review_author('{sku}')"), ctx) == last["author"]
    assert await REGISTRY.call(parse_func("func:shopping_get_latest_order_url()"), ctx) == \
        f"{served.url}/sales/order/view/order_id/{newest}/"
    with pytest.raises(RuntimeError, match="answered 404"):
        await hs.shopping_get_sku_product_page_url(ctx, "NO-SUCH-SKU")
    with pytest.raises(RuntimeError, match="answered 404"):
        await hs.shopping_get_sku_latest_review_author(ctx, "odd/sku ?#")  # one path segment, not a route
    with pytest.raises(ValueError, match=r"base URL \(base_urls has reddit\)"):
        await hs.shopping_get_latest_order_url(HelperContext(None, "", {"reddit": "http://r"}))
    monkeypatch.setenv("SHOPPING_ADMIN_PASSWORD", "not-the-password")
    with pytest.raises(RuntimeError, match="integration/admin/token answered 401"):
        await hs.shopping_get_latest_order_url(ctx)


# ---- the helpers: page ones on a real Chromium -----------------------------------------------------------

@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chromium() -> Any:
    from playwright.async_api import async_playwright

    pw = await async_playwright().start()
    browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
    yield browser
    await browser.close()
    await pw.stop()


@browser_test
async def test_page_helpers_read_the_store_pages(served: Served, chromium: Any) -> None:
    site = served.site
    page = await (await chromium.new_context(viewport={"width": 1280, "height": 2048})).new_page()
    services = PlaywrightPageServices(page)
    ctx = context(served, services)
    # a reviewed product: price box, details table, reviews tab, rating
    product = sql(site, "SELECT p.* FROM products p WHERE (SELECT COUNT(*) FROM reviews r WHERE r.product_id = p.id "
                  "AND r.status = 1) >= 2 ORDER BY p.id LIMIT 1")[0]
    ratings = [r[0] for r in sql(site, "SELECT rating FROM reviews WHERE product_id = ? AND status = 1", product["id"])]
    maker = sql(site, "SELECT value FROM product_attributes WHERE product_id = ? AND label = 'Manufacturer'",
                product["id"])[0][0]
    await services.goto(f"{served.url}/{product['slug']}.html")
    assert await hs.shopping_get_product_price(ctx, services) == product["price_cents"] / 100
    assert await hs.shopping_get_num_reviews(ctx, services) == len(ratings)
    assert await hs.shopping_get_rating_as_percentage(ctx, services) == round(sum(ratings) / len(ratings) * 20)
    assert await hs.shopping_get_product_attributes(ctx, services, "manufacturer |OR| brand name") == maker
    assert (await hs.shopping_get_product_attributes(ctx, services, "Product Dimensions")).endswith("Ounces")
    assert await hs.shopping_get_product_attributes(ctx, services, "no such row") == ""
    hostile = "'); document.body.innerHTML = 'owned'; ('"
    assert await hs.shopping_get_product_attributes(ctx, services, hostile) == ""
    assert await page.evaluate("document.body.innerText") != "owned"  # the argument stayed data
    # a product nobody reviewed: no rating, no count
    bare = sql(site, "SELECT slug FROM products p WHERE NOT EXISTS (SELECT 1 FROM reviews r WHERE r.product_id = p.id "
               "AND r.status = 1) ORDER BY id LIMIT 1")[0][0]
    await services.goto(f"{served.url}/{bare}.html")
    assert await hs.shopping_get_num_reviews(ctx, services) == 0
    assert await hs.shopping_get_rating_as_percentage(ctx, services) == 0
    # an order with a chosen size, placed through the page as the customer
    shirt = sql(site, "SELECT p.* FROM products p JOIN categories c ON c.id = p.category_id WHERE c.name = 'T-Shirts' "
                "ORDER BY p.id LIMIT 1")[0]
    other = sql(site, "SELECT p.* FROM products p JOIN categories c ON c.id = p.category_id WHERE c.name = 'Mugs & Cups' "
                "ORDER BY p.id LIMIT 1")[0]
    await services.goto(f"{served.url}/customer/account/login/")
    await page.fill("#email", FIXTURE[0])
    await page.fill("#pass", "Password.123")
    async with page.expect_navigation():
        await page.click("#send2")
    await services.goto(f"{served.url}/{shirt['slug']}.html")
    await page.select_option("select[name='options[Size]']", "M")
    await page.fill("input[name=qty]", "2")
    async with page.expect_navigation():
        await page.click("#product-addtocart-button")
    await services.goto(f"{served.url}/{other['slug']}.html")
    async with page.expect_navigation():
        await page.click("#product-addtocart-button")
    await services.goto(f"{served.url}/checkout/")
    async with page.expect_navigation():
        await page.click("#place-order")
    assert "Thank you for your purchase" in await page.content()
    url = await hs.shopping_get_latest_order_url(ctx)
    await services.goto(url)
    assert await hs.shopping_get_order_product_quantity(ctx, services, shirt["sku"]) == 2
    assert await hs.shopping_get_order_product_quantity(ctx, services, f"B0NOTHERE1 |OR| {other['sku']}") == 1
    assert await hs.shopping_get_order_product_quantity(ctx, services, "B0NOTHERE1") == 0
    assert await hs.shopping_get_order_product_option(ctx, services, shirt["sku"], "Size") == "M"
    assert await hs.shopping_get_order_product_option(ctx, services, other["sku"], "Size") == ""
    names = (await hs.shopping_get_order_product_name_list(ctx, services)).split(" |OR| ")
    assert names[0].startswith(shirt["name"]) and "Size" in names[0] and names[1] == other["name"]
    # a page that is not an order or a product: the empty answers
    await services.goto(f"{served.url}/about-us")
    assert await hs.shopping_get_order_product_name_list(ctx, services) == ""
    assert await hs.shopping_get_order_product_quantity(ctx, services, shirt["sku"]) == 0
    assert await hs.shopping_get_product_price(ctx, services) == 0
    with pytest.raises(ValueError, match="needs the page"):
        await hs.shopping_get_product_price(ctx, None)
    await page.context.close()
    served.site.reset()


# ---- the environment's site_nodes ---------------------------------------------------------------------

def test_site_nodes_name_a_node_or_a_path_under_it() -> None:
    assert site_node("shopping") == ("shopping", "") and site_node("shopping/admin") == ("shopping", "/admin")
    params = BrowserEnv.Params(site_nodes={"__SHOPPING__": "shopping", "__SHOPPING_ADMIN__": "shopping/admin"})
    assert params.site_nodes["__SHOPPING_ADMIN__"] == "shopping/admin"
    for bad in ("shopping//admin", "shopping/admin?x=1", "/admin", "shop ping"):
        with pytest.raises(pydantic.ValidationError, match=r"__SHOPPING_ADMIN__: .* is not a site node id or node/path"):
            BrowserEnv.Params(site_nodes={"__SHOPPING_ADMIN__": bad})


# ---- the task file -------------------------------------------------------------------------------------

def test_the_admin_task_file_is_the_generators_and_every_task_can_run() -> None:
    assert build(0) == TASKS
    tasks = load_task_file(FILE)
    assert len(tasks) >= 30 and [t.problems() for t in tasks if t.problems()] == []
    assert all("shopping_admin" in t.sites for t in tasks)
    assert {k for t in tasks for k in t.eval.eval_types} == {"string_match", "url_match", "program_html"}
    kinds = {k for t in tasks if t.eval.reference_answers for k in t.eval.reference_answers.kinds()}
    assert {"exact_match", "must_include", "fuzzy_match"} <= kinds
    text = json.dumps(TASKS)
    for helper in ("shopping_get_latest_order_url", "shopping_get_sku_latest_review_author",
                   "shopping_get_sku_latest_review_title", "shopping_get_product_price", "shopping_get_num_reviews"):
        assert f"func:{helper}(" in text, helper
    for task in TASKS:
        assert task["gold_actions"][-1].startswith("stop"), task["task_id"]
        for action in task["gold_actions"]:
            located = parse_gold(action)
            plain = located.with_id(1) if located.locator is not None else action
            parse_action(re.sub(r"__[A-Z_]+__", "http://127.0.0.1:1", plain))


# ---- graph: gold scores 1, perturbed 0 -------------------------------------------------------------------

def _first(pred: Any) -> dict[str, Any]:
    return next(t for t in TASKS if pred(t))


def _subset() -> list[dict[str, Any]]:
    """An exact answer, a plain URL, a filter (URL and page), a page helper, a REST helper, and a store
    checkout followed by an admin change (shopping_get_latest_order_url)."""
    kinds = [
        lambda t: (t["eval"]["reference_answers"] or {}).get("exact_match") and "@" in str(t["eval"]["reference_answers"]),
        lambda t: t["eval"]["eval_types"] == ["url_match"],
        lambda t: t["eval"]["eval_types"] == ["url_match", "program_html"] and "sales/order" in t["eval"]["reference_url"],
        lambda t: "shopping_get_num_reviews" in json.dumps(t["eval"]),
        lambda t: "shopping_get_sku_latest_review_author" in json.dumps(t["eval"]),
        lambda t: "shopping_get_latest_order_url" in json.dumps(t["eval"]),
    ]
    return [_first(k) for k in kinds]


def _perturb(task: dict[str, Any]) -> dict[str, Any]:
    """The same task with a gold sequence that goes wrong once."""
    gold = list(task["gold_actions"])
    types = task["eval"]["eval_types"]
    if types == ["url_match"]:  # a wrong click: another menu entry
        gold = [a.replace("item-customer-manage", "item-sales-order").replace("item-reviews-pending", "item-reviews-all")
                for a in gold]
    elif "program_html" in types:  # the final click (save, apply, delete, hold) dropped
        last_click = max(i for i, a in enumerate(gold) if a.startswith("click"))
        gold = gold[:last_click] + gold[last_click + 1:]
    else:  # a wrong answer
        gold[-1] = "stop [N/A]"
    assert gold != task["gold_actions"], task["task_id"]
    return {**task, "gold_actions": gold}


# one launch run each (a whole graph with Chromium): on one core under a full suite that is 1-2 minutes
@pytest.mark.timeout(300)
def test_admin_gold_sequences_score_one(tmp_path: Path) -> None:
    subset = _subset()
    assert len({t["task_id"] for t in subset}) == len(subset)
    gold = run_tasks(GOLD, tmp_path, subset, "gold", timeout=240)
    for task, m in zip(subset, gold):
        assert m["status"] == "completed" and m["success"] == 1.0 and m["failed_checks"] == [], (task["task_id"], m)
        assert m["steps"] == len(task["gold_actions"]), (task["task_id"], m)


@pytest.mark.timeout(300)
def test_admin_perturbed_sequences_score_zero(tmp_path: Path) -> None:
    subset = _subset()
    wrong = run_tasks(GOLD, tmp_path, [_perturb(t) for t in subset], "perturbed", timeout=240)
    for task, m in zip(subset, wrong):
        assert m["status"] == "completed" and m["success"] == 0.0 and m["failed_checks"], (task["task_id"], m)


def test_every_shopping_helper_is_registered() -> None:
    for name in ("shopping_get_latest_order_url", "shopping_get_sku_latest_review_author",
                 "shopping_get_sku_latest_review_rating", "shopping_get_sku_latest_review_text",
                 "shopping_get_sku_latest_review_title", "shopping_get_sku_product_page_url",
                 "shopping_get_order_product_name_list", "shopping_get_order_product_quantity",
                 "shopping_get_order_product_option", "shopping_get_product_attributes", "shopping_get_product_price",
                 "shopping_get_num_reviews", "shopping_get_rating_as_percentage"):
        assert name in REGISTRY, name
    assert asyncio.iscoroutinefunction(hs.shopping_get_latest_order_url)
