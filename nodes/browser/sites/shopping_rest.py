"""A subset of Magento's REST API on the local shop: enough for WebArena's and VisualWebArena's
evaluation helpers (nodes/browser/vwa/helpers_shopping.py) to run the same against this site and a
real Magento.

    POST /rest/default/V1/integration/admin/token   {"username", "password"} -> "<token>"
    GET  /rest/V1/orders?searchCriteria[...]          {"items": [...], "search_criteria": {...}, "total_count": N}
    GET  /rest/V1/orders/<entity id>                  one order
    GET  /rest/V1/products/<sku>                      a product, its url_key among custom_attributes
    GET  /rest/V1/products/<sku>/reviews              every review of it, oldest first, any status

Every route also answers with Magento's optional store code (``/rest/default/V1/...``). All but the
token need ``Authorization: Bearer <token>`` (401 otherwise). A token is an HMAC of the admin's name
under the site's seed secret: it survives resets, as a Magento token survives a cache flush. Errors
are Magento's JSON ``{"message": ...}``; a search criterion this subset does not know is a 400 that
names it, never silently ignored."""

from __future__ import annotations

import hmac
import json
import re
import sqlite3
from typing import Any

from starlette.exceptions import HTTPException
from starlette.responses import Response

from nodes.browser.sites.framework import MAX_PAGE, Ctx, Handler, whole
from nodes.browser.sites.shopping_data import STATES, STATUS_CODES

TOKEN_PURPOSE = "rest-token"
PREFIXES = ("/rest/V1", "/rest/default/V1", "/rest/all/V1")
MAX_PAGE_SIZE = 1000
MAX_INDEX = 20  # sortOrders[i], filter_groups[g], filters[f]
SIGN_IN_FAILED = ("The account sign-in was incorrect or your account is disabled temporarily. Please wait and try "
                  "again later.")
NO_PRODUCT = "The product that was requested doesn't exist. Verify the product and try again."
STATUS_SQL = "CASE o.status " + " ".join(f"WHEN '{label}' THEN '{code}'" for label, code in STATUS_CODES.items()) + " END"
#: the order fields a search criterion may name -> their SQL over ``orders o``
ORDER_FIELDS = {"entity_id": "o.id", "increment_id": "printf('%09d', o.id)", "created_at": "o.created",
                "updated_at": "o.updated", "grand_total": "(o.total_cents / 100.0)", "status": STATUS_SQL,
                "customer_email": "o.username"}
CONDITIONS = {"eq": "=", "neq": "!=", "gt": ">", "gteq": ">=", "lt": "<", "lteq": "<=", "like": "LIKE",
              "in": "IN", "nin": "NOT IN"}
_PAGING = re.compile(r"^searchCriteria\[(pageSize|currentPage)\]$")
_SORT = re.compile(r"^searchCriteria\[sortOrders\]\[(\d+)\]\[(field|direction)\]$")
_FILTER = re.compile(r"^searchCriteria\[filter_groups\]\[(\d+)\]\[filters\]\[(\d+)\]\[(field|value|condition_type)\]$")


def pages() -> list[tuple[str, Handler, list[str]]]:
    out: list[tuple[str, Handler, list[str]]] = []
    for prefix in PREFIXES:
        out += [(f"{prefix}/integration/admin/token", admin_token, ["POST"]),
                (f"{prefix}/orders", orders, ["GET"]),
                (f"{prefix}/orders/{{order_id:int}}", order, ["GET"]),
                (f"{prefix}/products/{{sku}}/reviews", product_reviews, ["GET"]),
                (f"{prefix}/products/{{sku}}", product, ["GET"])]
    return out


def token_for(ctx: Ctx, username: str) -> str:
    return ctx.site.sign(username, TOKEN_PURPOSE).rpartition("|")[2]


def _bearer(ctx: Ctx, resource: str) -> str:
    """The admin a request's bearer token belongs to, or Magento's 401."""
    header = ctx.request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        for (username,) in ctx.db.execute("SELECT username FROM admin_users ORDER BY username"):
            if hmac.compare_digest(token_for(ctx, username), token.strip()):
                return str(username)
    raise HTTPException(401, f"The consumer isn't authorized to access {resource}.")


def admin_token(ctx: Ctx) -> Response:
    try:
        body = json.loads(ctx.body or b"null")
    except (ValueError, UnicodeDecodeError):
        raise HTTPException(400, "the body must be JSON: {\"username\": ..., \"password\": ...}") from None
    if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("username", "password")):
        raise HTTPException(400, "the body must be a JSON object with string fields username and password")
    row = ctx.db.execute("SELECT username FROM admin_users WHERE username = ? AND password = ?",
                         (body["username"], body["password"])).fetchone()
    if row is None:
        raise HTTPException(401, SIGN_IN_FAILED)
    return ctx.json(token_for(ctx, row[0]))


# ---- orders --------------------------------------------------------------------------------------

def _criteria(ctx: Ctx) -> tuple[str, list[Any], str, int | None, int, dict[str, Any]]:
    """``searchCriteria[...]`` query parameters -> (where, args, order by, page size, page, echo)."""
    sorts: dict[int, dict[str, str]] = {}
    groups: dict[int, dict[int, dict[str, str]]] = {}
    size: int | None = None
    page = 1
    for key, value in ctx.query.multi_items():
        if (m := _PAGING.match(key)) is not None:
            if m.group(1) == "pageSize":
                size = whole(value, key, 1, MAX_PAGE_SIZE)
            else:
                page = whole(value, key, 1, MAX_PAGE)
        elif (m := _SORT.match(key)) is not None:
            sorts.setdefault(whole(m.group(1), key, 0, MAX_INDEX), {})[m.group(2)] = value
        elif (m := _FILTER.match(key)) is not None:
            group = groups.setdefault(whole(m.group(1), key, 0, MAX_INDEX), {})
            group.setdefault(whole(m.group(2), key, 0, MAX_INDEX), {})[m.group(3)] = value
        else:
            raise HTTPException(400, f"unknown query parameter {key[:80]!r} (this API takes searchCriteria[pageSize], "
                                "[currentPage], [sortOrders][i][field|direction] and "
                                "[filter_groups][g][filters][f][field|value|condition_type])")
    order_by: list[str] = []
    for i in sorted(sorts):
        field = sorts[i].get("field", "")
        direction = sorts[i].get("direction", "ASC").upper()
        if field not in ORDER_FIELDS or direction not in ("ASC", "DESC"):
            raise HTTPException(400, f"searchCriteria[sortOrders][{i}]: field must be one of "
                                f"{', '.join(ORDER_FIELDS)} and direction ASC or DESC")
        order_by.append(f"{ORDER_FIELDS[field]} {direction}")
    where: list[str] = []
    args: list[Any] = []
    for g in sorted(groups):  # filters in a group are OR-ed, groups AND-ed (Magento's rule)
        alternatives = []
        for f in sorted(groups[g]):
            spec = groups[g][f]
            key = f"searchCriteria[filter_groups][{g}][filters][{f}]"
            field, value, condition = spec.get("field", ""), spec.get("value", ""), spec.get("condition_type", "eq")
            if field not in ORDER_FIELDS or condition not in CONDITIONS:
                raise HTTPException(400, f"{key}: field must be one of {', '.join(ORDER_FIELDS)} and condition_type "
                                    f"one of {', '.join(CONDITIONS)}")
            if condition in ("in", "nin"):
                values = [v.strip() for v in value.split(",")][:100]
                alternatives.append(f"{ORDER_FIELDS[field]} {CONDITIONS[condition]} ({', '.join('?' * len(values))})")
                args += values
            else:
                alternatives.append(f"{ORDER_FIELDS[field]} {CONDITIONS[condition]} ?")
                args.append(value)
        if alternatives:
            where.append("(" + " OR ".join(alternatives) + ")")
    echo: dict[str, Any] = {"filter_groups": [{"filters": [groups[g][f] for f in sorted(groups[g])]} for g in sorted(groups)],
                            "sort_orders": [sorts[i] for i in sorted(sorts)]}
    if size is not None:
        echo["page_size"] = size
        echo["current_page"] = page
    return " AND ".join(where) or "1 = 1", args, ", ".join([*order_by, "o.id ASC"]), size, page, echo


def _money(cents: int) -> float:
    return round(cents / 100, 2)


def _order_json(db: sqlite3.Connection, o: sqlite3.Row) -> dict[str, Any]:
    code = STATUS_CODES.get(o["status"], o["status"].lower())
    items = db.execute("SELECT rowid, * FROM order_items WHERE order_id = ? ORDER BY rowid", (o["id"],)).fetchall()
    first, _, last = (o["firstname"] and f"{o['firstname']} {o['lastname']}" or o["ship_name"]).partition(" ")
    street, _, city = o["ship_address"].rpartition(", ")
    history = db.execute("SELECT * FROM order_comments WHERE order_id = ? ORDER BY id DESC", (o["id"],)).fetchall()
    return {
        "entity_id": o["id"], "increment_id": f"{o['id']:09d}", "created_at": o["created"],
        "updated_at": o["updated"] or o["created"], "status": code, "state": STATES.get(code, code),
        "customer_email": o["username"], "customer_firstname": first, "customer_lastname": last,
        "customer_id": o["customer_id"], "customer_is_guest": 0 if o["customer_id"] else 1,
        "order_currency_code": "USD", "base_currency_code": "USD",
        "grand_total": _money(o["total_cents"]), "base_grand_total": _money(o["total_cents"]),
        "subtotal": _money(o["total_cents"]), "total_item_count": len(items),
        "total_qty_ordered": float(sum(i["qty"] for i in items)),
        "items": [{"item_id": i["rowid"], "order_id": o["id"], "product_id": i["product_id"], "sku": i["sku"],
                   "name": i["name"], "product_type": "simple", "qty_ordered": float(i["qty"]),
                   "price": _money(i["price_cents"]), "row_total": _money(i["price_cents"] * i["qty"]),
                   "product_options": [{"label": k, "value": v} for k, v in json.loads(i["options"] or "[]")]}
                  for i in items],
        "billing_address": {"address_type": "billing", "firstname": first, "lastname": last, "street": [street],
                            "city": city, "region": o["region"] or "", "postcode": o["zip"] or "",
                            "country_id": "US", "telephone": o["phone"] or "", "email": o["username"]},
        "status_histories": [{"entity_id": h["id"], "parent_id": o["id"], "comment": h["comment"],
                              "created_at": h["created"], "status": STATUS_CODES.get(h["status"], h["status"]),
                              "is_customer_notified": h["notified"], "entity_name": "order"} for h in history],
    }


ORDER_SELECT = ("SELECT o.*, c.id AS customer_id, c.firstname, c.lastname, c.region, c.zip, c.phone FROM orders o "
                "LEFT JOIN customers c ON c.email = o.username")


def orders(ctx: Ctx) -> Response:
    _bearer(ctx, "Magento_Sales::actions_view")
    where, args, order_by, size, page, echo = _criteria(ctx)
    total = ctx.db.execute(f"SELECT COUNT(*) FROM orders o WHERE {where}", args).fetchone()[0]
    limit = f" LIMIT {size} OFFSET {(page - 1) * size}" if size is not None else ""
    rows = ctx.db.execute(f"{ORDER_SELECT} WHERE {where} ORDER BY {order_by}{limit}", args).fetchall()
    return ctx.json({"items": [_order_json(ctx.db, r) for r in rows], "search_criteria": echo, "total_count": total})


def order(ctx: Ctx) -> Response:
    _bearer(ctx, "Magento_Sales::actions_view")
    row = ctx.db.execute(f"{ORDER_SELECT} WHERE o.id = ?", (ctx.path["order_id"],)).fetchone()
    if row is None:
        raise HTTPException(404, "The entity that was requested doesn't exist. Verify the entity and try again.")
    return ctx.json(_order_json(ctx.db, row))


# ---- products and reviews --------------------------------------------------------------------------

def _product_row(ctx: Ctx) -> sqlite3.Row:
    row = ctx.db.execute("SELECT p.*, c.name AS category FROM products p JOIN categories c ON c.id = p.category_id "
                         "WHERE p.sku = ?", (ctx.path["sku"],)).fetchone()
    if row is None:
        raise HTTPException(404, NO_PRODUCT)
    return row


def product(ctx: Ctx) -> Response:
    _bearer(ctx, "Magento_Catalog::products")
    p = _product_row(ctx)
    details = ctx.db.execute("SELECT label, value FROM product_attributes WHERE product_id = ? ORDER BY position",
                             (p["id"],)).fetchall()
    custom = [{"attribute_code": "url_key", "value": p["slug"]},
              {"attribute_code": "description", "value": p["description"]},
              {"attribute_code": "category_ids", "value": [str(p["category_id"])]},
              *({"attribute_code": re.sub(r"\W+", "_", d["label"].lower()).strip("_"), "value": d["value"]}
                for d in details)]
    return ctx.json({
        "id": p["id"], "sku": p["sku"], "name": p["name"], "attribute_set_id": 4, "price": _money(p["price_cents"]),
        "status": p["status"], "visibility": 4, "type_id": "simple",
        "extension_attributes": {"website_ids": [1], "category_links": [{"position": 0, "category_id": str(p["category_id"])}],
                                 "stock_item": {"product_id": p["id"], "stock_id": 1, "qty": p["qty"],
                                                "is_in_stock": bool(p["in_stock"])}},
        "custom_attributes": custom})


def product_reviews(ctx: Ctx) -> Response:
    """Every review of the product in the order they were written (VWA's helpers take the last as
    the latest), whatever its moderation status, as the admin sees them."""
    _bearer(ctx, "Magento_Review::reviews_all")
    p = _product_row(ctx)
    rows = ctx.db.execute("SELECT * FROM reviews WHERE product_id = ? ORDER BY id", (p["id"],)).fetchall()
    return ctx.json([{"id": r["id"], "title": r["title"], "detail": r["body"], "nickname": r["author"],
                      "ratings": [{"vote_id": r["id"], "rating_id": 4, "rating_name": "Rating",
                                   "percent": r["rating"] * 20, "value": r["rating"]}],
                      "review_entity": "product", "review_type": 2, "review_status": r["status"],
                      "created_at": r["created"] + ":00", "entity_pk_value": p["id"], "store_id": 1, "stores": [1]}
                     for r in rows])
