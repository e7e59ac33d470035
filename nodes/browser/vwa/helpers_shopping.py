"""The shopping site's ``func:`` helpers, by VWA's and WebArena's names, arguments and return types.

Two kinds, as in WebArena's ``evaluation_harness/helper_functions.py``:

* REST helpers ask the shop's Magento REST API as its admin (``shopping_get_latest_order_url``, the
  ``shopping_get_sku_latest_review_*`` family, ``shopping_get_sku_product_page_url``). They talk
  HTTP to ``ctx.base_urls["shopping"]``, so they work the same against the local shop
  (nodes/browser/sites/shopping_rest.py) and a real Magento. The admin account is WebArena's
  default, overridable with SHOPPING_ADMIN_USER / SHOPPING_ADMIN_PASSWORD. A reply other than 200
  is an error naming the URL and status (WebArena asserts there too): a helper that cannot ask
  must not look like a wrong answer.
* Page helpers read the final page through ``PageServices.evaluate`` (the order's
  ``#my-orders-table``, the product's details table, price box, reviews tab and rating). Like
  VWA's, they answer an empty value (``""``, ``0``) when the page does not have what they read.
  Arguments reach the page's JavaScript as JSON literals, never spliced into its source.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote

import httpx2 as httpx  # httpx's maintained successor (same API), which starlette's TestClient and openai use

from nodes.browser.vwa.helpers import REGISTRY, HelperContext, _require_page

#: WebArena's shopping admin (its ACCOUNTS["shopping_site_admin"])
ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin1234"
TIMEOUT_S = 20.0
OR = " |OR| "


# ---- REST ------------------------------------------------------------------------------------------

def _shop(ctx: HelperContext) -> str:
    base = ctx.base_urls.get("shopping")
    if not base:
        raise ValueError(f"the shopping helpers need the shopping site's base URL (base_urls has "
                         f"{', '.join(sorted(ctx.base_urls)) or 'none'})")
    return base.rstrip("/")


def admin_credentials() -> tuple[str, str]:
    return os.environ.get("SHOPPING_ADMIN_USER", ADMIN_USER), os.environ.get("SHOPPING_ADMIN_PASSWORD", ADMIN_PASSWORD)


def _checked(reply: httpx.Response) -> Any:
    if reply.status_code != 200:
        raise RuntimeError(f"{reply.request.method} {reply.request.url} answered {reply.status_code}: "
                           f"{reply.text[:200]}")
    return reply.json()


async def _get(ctx: HelperContext, path: str, params: dict[str, str] | None = None) -> Any:
    """GET a REST path as the admin: a fresh token each time, as WebArena's helpers take one."""
    base = _shop(ctx)
    username, password = admin_credentials()
    async with httpx.AsyncClient(timeout=TIMEOUT_S) as client:
        token = _checked(await client.post(f"{base}/rest/default/V1/integration/admin/token",
                                           json={"username": username, "password": password}))
        if not isinstance(token, str):
            raise RuntimeError(f"{base}/rest/default/V1/integration/admin/token answered {token!r}, not a token")
        return _checked(await client.get(f"{base}{path}", params=params,
                                         headers={"Authorization": f"Bearer {token}"}))


def _sku_path(sku: str) -> str:
    return "/rest/V1/products/" + quote(sku, safe="")  # a SKU is one path segment, whatever it holds


@REGISTRY.register("shopping_get_latest_order_url")
async def shopping_get_latest_order_url(ctx: HelperContext) -> str:
    """The store's page of the most recently created order (``/sales/order/view/order_id/N/``)."""
    found = await _get(ctx, "/rest/V1/orders", {"searchCriteria[sortOrders][0][field]": "created_at",
                                                "searchCriteria[sortOrders][0][direction]": "DESC",
                                                "searchCriteria[pageSize]": "1"})
    items = found.get("items") if isinstance(found, dict) else None
    if not items:
        raise RuntimeError(f"{_shop(ctx)}/rest/V1/orders lists no orders")
    return f"{_shop(ctx)}/sales/order/view/order_id/{int(items[0]['increment_id'])}/"


async def _latest_review(ctx: HelperContext, sku: str) -> dict[str, Any] | None:
    reviews = await _get(ctx, _sku_path(sku) + "/reviews")
    if not isinstance(reviews, list):
        raise RuntimeError(f"{_shop(ctx)}{_sku_path(sku)}/reviews answered {str(reviews)[:80]}, not a list")
    return reviews[-1] if reviews else None  # Magento lists them oldest first


@REGISTRY.register("shopping_get_sku_latest_review_author")
async def shopping_get_sku_latest_review_author(ctx: HelperContext, sku: str) -> str:
    review = await _latest_review(ctx, sku)
    return "" if review is None else str(review["nickname"])


@REGISTRY.register("shopping_get_sku_latest_review_rating")
async def shopping_get_sku_latest_review_rating(ctx: HelperContext, sku: str) -> str:
    """The latest review's rating as a percentage string ("80" for four stars), as WebArena's."""
    review = await _latest_review(ctx, sku)
    if review is None:
        return ""
    rating = review["ratings"][0]
    if rating.get("rating_name") != "Rating":
        raise RuntimeError(f"review of {sku}: expected a rating named 'Rating', got {rating.get('rating_name')!r}")
    return str(rating["percent"])


@REGISTRY.register("shopping_get_sku_latest_review_text")
async def shopping_get_sku_latest_review_text(ctx: HelperContext, sku: str) -> str:
    review = await _latest_review(ctx, sku)
    return "" if review is None else str(review["detail"])


@REGISTRY.register("shopping_get_sku_latest_review_title")
async def shopping_get_sku_latest_review_title(ctx: HelperContext, sku: str) -> str:
    review = await _latest_review(ctx, sku)
    return "" if review is None else str(review["title"])


@REGISTRY.register("shopping_get_sku_product_page_url")
async def shopping_get_sku_product_page_url(ctx: HelperContext, sku: str) -> str:
    """The store page of the product with ``sku`` (its url_key + ".html"), "" when it has none."""
    product = await _get(ctx, _sku_path(sku))
    if not product:
        return ""
    for attribute in product.get("custom_attributes") or []:
        if attribute.get("attribute_code") == "url_key":
            return f"{_shop(ctx)}/{attribute['value']}.html"
    return ""


# ---- the page ----------------------------------------------------------------------------------------

# Each row group (tbody) of the order's items table is one product: its cells keyed by their
# second class (Magento's "col name", "col sku", ...), the name cell's dt/dd pairs as options.
ORDER_PRODUCTS_JS = """() => {
  try {
    return [...document.querySelector('#my-orders-table').getElementsByTagName('tbody')].map((group) => {
      const row = {};
      for (const cell of group.getElementsByTagName('td')) {
        const key = cell.className.split(' ')[1];
        if (!key) continue;
        row[key] = cell.outerText;
        const list = key === 'name' ? cell.querySelector('dl') : null;
        if (list) {
          const options = {};
          const parts = [...list.children];
          for (let i = 0; i + 1 < parts.length; i += 2) options[parts[i].outerText] = parts[i + 1].outerText;
          row.options = options;
        }
      }
      return row;
    });
  } catch (e) { return []; }
}"""
ATTRIBUTES_JS = """(wanted) => {
  try {
    const terms = wanted.toLowerCase().split(' |or| ');
    return [...document.querySelector('#productDetails_detailBullets_sections1 > tbody').children]
      .filter((row) => terms.some((term) => row.children[0].outerText.toLowerCase().includes(term)))
      .map((row) => row.children[1].outerText).join(', ');
  } catch (e) { return ''; }
}"""
PRICE_JS = """() => {
  try {
    const box = document.querySelector('#maincontent > div.columns > div > div.product-info-main > '
      + 'div.product-info-price > div.price-box.price-final_price > span > span');
    const value = parseFloat(box.outerText.substr(1));
    return value ? value : 0;
  } catch (e) { return 0; }
}"""
REVIEWS_JS = """() => {
  try {
    const value = parseInt(document.querySelector('#tab-label-reviews-title').outerText.split(' ')[1]);
    return value ? value : 0;
  } catch (e) { return 0; }
}"""
RATING_JS = """() => {
  try {
    const value = parseFloat(document.querySelector('.rating-result').title.replace('%', ''));
    return value ? value : 0;
  } catch (e) { return 0; }
}"""


async def _call(page: Any, helper: str, function: str, *args: Any) -> Any:
    services = _require_page(page, helper)
    return await services.evaluate(f"({function})({', '.join(json.dumps(a) for a in args)})")


async def shopping_get_all_product_order(page: Any) -> list[dict[str, Any]]:
    """Every product of the order page open in ``page``: name, sku, price, qty ("Ordered 2"),
    subtotal and, where chosen, options; [] when the page shows no order."""
    found = await _call(page, "shopping_get_all_product_order", ORDER_PRODUCTS_JS)
    return [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []


@REGISTRY.register("shopping_get_order_product_name_list")
async def shopping_get_order_product_name_list(ctx: HelperContext, page: Any) -> str:
    products = await shopping_get_all_product_order(page)
    return OR.join(str(p.get("name", "")) for p in products)


@REGISTRY.register("shopping_get_order_product_quantity")
async def shopping_get_order_product_quantity(ctx: HelperContext, page: Any, sku: str) -> int:
    """How many of ``sku`` (or of any of ``a |OR| b``) the order page says were ordered; 0 if none."""
    skus = sku.split(OR) if "|OR|" in sku else [sku]
    for product in await shopping_get_all_product_order(page):
        if str(product.get("sku", "")).strip() in skus:
            try:
                return int(str(product.get("qty", ""))[len("Ordered"):])
            except ValueError:
                return 0
    return 0


@REGISTRY.register("shopping_get_order_product_option")
async def shopping_get_order_product_option(ctx: HelperContext, page: Any, sku: str, option_name: str) -> str:
    for product in await shopping_get_all_product_order(page):
        if str(product.get("sku", "")).strip() == sku:
            options = product.get("options")
            return str(options.get(option_name, "")) if isinstance(options, dict) else ""
    return ""


@REGISTRY.register("shopping_get_product_attributes")
async def shopping_get_product_attributes(ctx: HelperContext, page: Any, attribute: str) -> str:
    """The product page's details rows whose label holds ``attribute`` (or ``a |OR| b``), their values
    joined by ', '."""
    value = await _call(page, "shopping_get_product_attributes", ATTRIBUTES_JS, attribute)
    return value if isinstance(value, str) else ""


@REGISTRY.register("shopping_get_product_price")
async def shopping_get_product_price(ctx: HelperContext, page: Any) -> float | int:
    value = await _call(page, "shopping_get_product_price", PRICE_JS)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


@REGISTRY.register("shopping_get_num_reviews")
async def shopping_get_num_reviews(ctx: HelperContext, page: Any) -> int:
    value = await _call(page, "shopping_get_num_reviews", REVIEWS_JS)
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


@REGISTRY.register("shopping_get_rating_as_percentage")
async def shopping_get_rating_as_percentage(ctx: HelperContext, page: Any) -> float | int:
    value = await _call(page, "shopping_get_rating_as_percentage", RATING_JS)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0
