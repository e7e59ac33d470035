"""The local sites refuse numbers and searches they cannot hold with a 400 that names the parameter.

Each site runs in-process behind Starlette's TestClient (no uvicorn, no browser): what an agent or a
fuzzing script would type into the address bar or a form, sent as it would send it."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from nodes.browser.sites.classifieds import Classifieds
from nodes.browser.sites.forum import Forum
from nodes.browser.sites.framework import Site
from nodes.browser.sites.shopping import Shopping
from nodes.browser.sites.wiki import Wiki

HUGE = str(10**23)  # past SQLite's 64-bit integers: the driver raised OverflowError, a 500
ESSAY = "+".join(f"word{n}" for n in range(1200))  # each word was one more LIKE clause: too deep for SQLite


def client(cls: type[Site]) -> TestClient:
    return TestClient(cls(size=12).app(), raise_server_exceptions=False)


def refused(response, *names: str) -> None:
    assert response.status_code == 400, (response.status_code, response.text[:300])
    for name in names:
        assert name in response.text, response.text[:300]


def case(label: str, cls: type[Site], url: str, *names: str):
    return pytest.param(cls, url, names, id=label)


@pytest.mark.parametrize(("cls", "url", "names"), [
    case("shopping-page", Shopping, f"/catalogsearch/result/?q=mug&p={HUGE}", "p must be a page number from 1 to"),
    case("shopping-search", Shopping, f"/catalogsearch/result/?q={ESSAY}", "q: a search takes at most", "got 1200"),
    case("shopping-order-id", Shopping, f"/sales/order/view/order_id/{HUGE}/", "order_id must be a whole number"),
    case("shopping-image-id", Shopping, f"/images/{HUGE}.png", "image_id"),
    case("classifieds-page", Classifieds, f"/index.php?page=search&iPage={HUGE}", "iPage"),
    case("classifieds-price-min", Classifieds, f"/index.php?page=search&sPriceMin={HUGE}",
         "sPriceMin must be a whole number from 0 to"),
    case("classifieds-price-max", Classifieds, "/index.php?page=search&sPriceMax=1e23", "sPriceMax"),
    case("classifieds-category", Classifieds, f"/index.php?page=search&sCategory={HUGE}", "sCategory"),
    case("classifieds-search", Classifieds, f"/index.php?page=search&sPattern={ESSAY}", "sPattern", "at most"),
    case("classifieds-item-id", Classifieds, f"/index.php?page=item&id={HUGE}", "id must be a whole number"),
    case("forum-front-page", Forum, f"/?p={HUGE}", "p must be a page number"),
    case("forum-page", Forum, f"/f/all?p={HUGE}", "p must be a page number"),
    case("forum-short-id", Forum, f"/f/all/{HUGE}", "id must be a whole number"),
    case("forum-post-id", Forum, f"/f/all/{HUGE}/some-slug", "id must be a whole number"),
    case("wiki-search", Wiki, f"/search?pattern={ESSAY}", "pattern: a search takes at most"),
    case("wiki-page", Wiki, f"/search?pattern=circle&pageNumber={HUGE}", "pageNumber"),
])
def test_huge_numbers_and_long_searches_are_a_400_with_the_reason(cls, url, names):
    refused(client(cls).get(url), *names)


def test_sites_still_take_ordinary_pages_and_searches():
    assert client(Shopping).get("/catalogsearch/result/?q=mug&p=2").status_code == 200
    assert client(Classifieds).get("/index.php?page=search&iPage=0&sPriceMax=100").status_code == 200
    assert client(Wiki).get("/search?pattern=red+circle&pageNumber=1").status_code == 200
    assert client(Forum).get("/f/all?p=-3").status_code == 200  # a link built from page - 1 still lands


def test_shopping_cart_quantity_is_bounded():
    web = client(Shopping)
    web.post("/customer/account/loginPost/",
             data={"login[username]": "emma.lopez@gmail.com", "login[password]": "Password.123"})
    refused(web.post("/checkout/cart/add/", data={"product": "1", "qty": HUGE}), "qty must be a whole number from 1 to")
    refused(web.post("/checkout/cart/add/", data={"product": "1", "qty": "1e23"}), "qty")
    assert web.post("/checkout/cart/add/", data={"product": "1", "qty": "2"}, follow_redirects=False).status_code == 303
    assert 'class="qty">2<' in web.get("/checkout/cart/").text


def test_classifieds_listing_price_is_bounded():
    web = client(Classifieds)
    user, password = Classifieds.accounts[0][1], Classifieds.accounts[0][2]
    web.post("/index.php?page=login", data={"email": user, "password": password})
    form = {"title": "Lamp", "description": "A lamp", "catId": "1", "city": "Boston"}
    refused(web.post("/index.php?page=item&action=item_add", data={**form, "price": HUGE}),
            "The price must be a whole number of dollars from 0 to")
    refused(web.post("/index.php?page=item&action=item_add", data={**form, "price": "20", "catId": HUGE}), "catId")
    assert web.post("/index.php?page=item&action=item_add", data={**form, "price": "20"},
                    follow_redirects=False).status_code == 303
