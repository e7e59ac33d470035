"""The local web sites: real uvicorn servers on 127.0.0.1, real SQLite, real HTTP, real Chromium.

Each site is served by ``python -m nodes.browser.sites.server`` in a child process (as the site node
runs it); one test runs a site through the site node itself, kills its server and sees it come back."""

from __future__ import annotations

import hashlib
import http.cookiejar
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from nodes.browser.sites.supervise import free_port
from tests.helpers import alive, wait_until

ROOT = Path(__file__).resolve().parents[1]


class Server:
    """One site's server process, its output in a file (never an unread pipe)."""

    def __init__(self, site: str, seed: int = 0, size: int | None = None, links: dict[str, str] | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix=f"site-{site}-", suffix=".log", delete=False)
        cmd = [sys.executable, "-m", "nodes.browser.sites.server", "--site", site, "--port", str(self.port),
               "--seed", str(seed), "--links", json.dumps(links or {})]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(cmd + (["--size", str(size)] if size else []), env=env, cwd=ROOT,
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if not wait_until(self._up, timeout=30):
            self.stop()
            raise AssertionError(f"{site} did not start:\n" + Path(self.log.name).read_text())

    def _up(self) -> bool:
        assert self.proc.poll() is None, Path(self.log.name).read_text()
        try:
            return get(self.url + "/healthz").status == 200
        except OSError:
            return False

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        os.unlink(self.log.name)


class Reply:
    def __init__(self, status: int, body: bytes, url: str):
        self.status, self.body, self.url = status, body, url

    @property
    def text(self) -> str:
        return self.body.decode()


class Browser:
    """urllib with a cookie jar: enough of a browser for server-side pages."""

    def __init__(self, base: str):
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def get(self, path: str) -> Reply:
        return self._open(urllib.request.Request(self.base + path))

    def post(self, path: str, **fields: str) -> Reply:
        data = urllib.parse.urlencode(fields).encode()
        return self._open(urllib.request.Request(self.base + path, data=data, method="POST"))

    def _open(self, request: urllib.request.Request) -> Reply:
        try:
            with self.opener.open(request, timeout=10) as r:
                return Reply(r.status, r.read(), r.url)
        except urllib.error.HTTPError as e:
            return Reply(e.code, e.read(), request.full_url)


def get(url: str) -> Reply:
    return Browser("").get(url)


def post_reset(base: str) -> float:
    started = time.perf_counter()
    reply = Browser(base).post("/reset")
    elapsed = time.perf_counter() - started
    assert reply.status == 200 and json.loads(reply.body)["reset_s"] < 1.0
    return elapsed


def listen_addresses(port: int) -> set[str]:
    """Local addresses of listening TCP sockets on ``port`` (IPv4 and IPv6), from /proc."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, port_hex = local.partition(":")
            if state == "0A" and int(port_hex, 16) == port:
                found.add(address)
    return found


@pytest.fixture(scope="module")
def classifieds():
    server = Server("classifieds", seed=7)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def wiki():
    server = Server("wiki", seed=7)
    yield server
    server.stop()


# --- classifieds ------------------------------------------------------------------------------

def test_classifieds_pages_search_and_filters(classifieds):
    web = Browser(classifieds.url)
    home = web.get("/")
    assert home.status == 200 and "Categories" in home.text
    attrs = json.loads(web.get("/images.json").body)
    first = web.get("/index.php?page=item&id=1")
    assert first.status == 200 and f'src="/images/{attrs[0]["id"]}.png"' in first.text
    title = re.search(r'<h1 class="item-title">(.*?)</h1>', first.text).group(1)
    word = title.split()[-1]
    found = web.get(f"/index.php?page=search&sPattern={word}")
    assert "index.php?page=item&id=1\"" in found.text
    cheap = web.get("/index.php?page=search&sCategory=2&sPriceMax=50&sOrder=i_price&iOrderType=asc")
    prices = [int(p.replace(",", "")) for p in re.findall(r'class="price">\$([\d,]+)<', cheap.text)]
    assert prices == sorted(prices) and all(p <= 50 for p in prices)
    assert web.get("/index.php?page=search&sCategory=abc").status == 400
    assert web.get("/index.php?page=item&id=99999").status == 404
    assert web.get("/images/1.png").body[:8] == b"\x89PNG\r\n\x1a\n"


def test_classifieds_post_comment_edit_then_reset(classifieds):
    web = Browser(classifieds.url)
    assert web.post("/index.php?page=login", email="blake.sullivan@gmail.com", password="wrong").status == 401
    assert web.get("/index.php?page=item&action=item_add").status == 401
    assert web.post("/index.php?page=login", email="blake.sullivan@gmail.com", password="Password.123").status == 200
    before = web.get("/index.php?page=search").text
    posted = web.post("/index.php?page=item&action=item_add", title="Green teapot", description="<b>as new</b>",
                      price="$1,250", catId="2", city="Boston")
    assert posted.status == 200 and "Green teapot" in posted.text and "$1,250" in posted.text
    assert "&lt;b&gt;as new&lt;/b&gt;" in posted.text  # text typed by a user is data, never markup
    new_id = int(posted.url.rsplit("=", 1)[1])
    web.post(f"/index.php?page=item&action=add_comment&id={new_id}", title="Hi", body="Is it blue?")
    assert "Is it blue?" in web.get(f"/index.php?page=item&id={new_id}").text
    mine = web.get("/index.php?page=user&action=items").text
    owned = int(re.search(r"page=item&id=(\d+)", mine).group(1))
    edited = web.post(f"/index.php?page=item&action=item_edit&id={owned}", title="Edited", description="d",
                      price="25000", catId="1", city="Albany")
    assert 'id="item-price">$25,000<' in edited.text
    stranger = Browser(classifieds.url)
    assert stranger.post(f"/index.php?page=item&action=item_edit&id={owned}", title="x", price="1").status == 401

    elapsed = post_reset(classifieds.url)
    assert elapsed < 1.0, f"reset took {elapsed:.3f} s"
    assert web.get(f"/index.php?page=item&id={new_id}").status == 404
    assert web.get("/index.php?page=search").text == before
    # the login survives the reset (a storage_state made once keeps working)
    assert "Signed in as" in web.get("/").text
    # VWA's own reset call, with its token
    assert web.post("/index.php?page=reset", token="nope").status == 403
    assert web.post("/index.php?page=reset", token="4b61655535e7ed388f0d40a93600254c").status == 200


# --- wiki -------------------------------------------------------------------------------------

def test_wiki_articles_and_search(wiki):
    web = Browser(wiki.url)
    main = web.get("/")
    assert main.status == 200 and main.url.endswith("/wikipedia_en_all_maxi_2022-05/A/Main_Page")
    boston = web.get("/wikipedia_en_all_maxi_2022-05/A/Boston")
    population = re.search(r"<th>Population</th><td>([\d,]+)</td>", boston.text).group(1)
    assert f"had {population} inhabitants" in boston.text
    found = web.get("/search?content=wikipedia_en_all_maxi_2022-05&pattern=Boston")
    assert found.status == 200 and 'href="/wikipedia_en_all_maxi_2022-05/A/Boston"' in found.text
    assert web.get("/wikipedia_en_all_maxi_2022-05/A/No_such_page").status == 404
    colours = {a["colour"] for a in json.loads(web.get("/images.json").body) if a["owner"].startswith("article:")}
    assert {"red", "blue"} <= colours


# --- shopping ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shopping():
    server = Server("shopping", seed=7)
    yield server
    server.stop()


def test_shopping_catalogue_search_and_product_pages(shopping):
    web = Browser(shopping.url)
    home = web.get("/")
    category = re.search(r'<li><a href="(/[a-z0-9-]+\.html)">', home.text).group(1)
    listed = web.get(category + "?product_list_order=price&product_list_dir=asc")
    prices = [float(p.replace(",", "")) for p in re.findall(r'class="price">\$([\d,.]+)<', listed.text)]
    assert prices and prices == sorted(prices)
    product = re.search(r'href="(/[a-z0-9-]+\.html)" class="product-item-link"', listed.text).group(1)
    page = web.get(product)
    sku = re.search(r'<span class="value">(B0\w{8})</span>', page.text).group(1)
    assert 'class="product-image-photo big"' in page.text and "Reviews (" in page.text
    assert product in web.get(f"/catalogsearch/result/?q={sku}").text
    assert web.get("/no-such-thing.html").status == 404
    assert web.get("/checkout/cart/").status == 401  # the cart belongs to a signed-in customer


def test_shopping_cart_wishlist_checkout_review_then_reset(shopping):
    web = Browser(shopping.url)
    bad = web.post("/customer/account/loginPost/", **{"login[username]": "emma.lopez@gmail.com", "login[password]": "x"})
    assert bad.status == 401
    web.post("/customer/account/loginPost/", **{"login[username]": "emma.lopez@gmail.com",
                                                 "login[password]": "Password.123"})
    history = web.get("/sales/order/history/").text
    assert history.count("View Order") == 3
    cart = web.post("/checkout/cart/add/", product="4", qty="2")
    assert cart.text.count('class="cart item"') == 1 and '<td class="qty">2</td>' in cart.text
    assert 'class="wishlist"' in web.post("/wishlist/index/add/", product="6").text
    assert web.post("/checkout/", name="Emma Lopez", street="", city="").status == 400
    done = web.post("/checkout/", name="Emma Lopez", street="1 Main St", city="Boston")
    order_id = int(re.search(r'class="order-number">(\d+)<', done.text).group(1))
    seeded = max(int(n) for n in re.findall(r"/sales/order/view/order_id/(\d+)/", history))  # the store's latest
    assert order_id == seeded + 1 and web.get("/sales/order/history/").text.count("View Order") == 4
    assert "1 Main St, Boston" in web.get(f"/sales/order/view/order_id/{order_id}/").text
    assert "You have no items" in web.get("/checkout/cart/").text
    web.post("/review/product/post/id/4/", rating="5", nickname="Em", title="Lovely", detail="Really lovely")
    web.post("/checkout/cart/add/", product="9")

    assert post_reset(shopping.url) < 1.0
    assert web.get("/sales/order/history/").text == history
    assert "You have no items" in web.get("/checkout/cart/").text
    assert 'class="product-item' not in web.get("/wishlist/").text
    assert web.get(f"/sales/order/view/order_id/{order_id}/").status == 404


# --- forum ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def forum():
    server = Server("forum", seed=7)
    yield server
    server.stop()


def _score(page: str) -> int:
    return int(re.search(r'<span class="vote-count">(-?\d+)</span>', page).group(1))


def test_forum_listing_post_vote_comment_block_then_reset(forum):
    web = Browser(forum.url)
    pics = web.get("/f/pics/new")
    post = re.search(r'href="(/f/pics/(\d+)/[a-z0-9-]+)" class="submission__link"', pics.text)
    path, post_id = post.group(1), int(post.group(2))
    page = web.get(path)
    assert page.status == 200 and 'class="submission__image big"' in page.text
    assert web.get(f"/f/pics/{post_id}").url.endswith(path)
    assert web.post(f"/sv/{post_id}", choice="1").status == 401
    assert web.post("/login_check", _username="MarvelsGrantMan136", _password="test1234").status == 200
    before = _score(web.get(path).text)
    assert _score(web.post(f"/sv/{post_id}", choice="1").text) == before + 1
    assert _score(web.post(f"/sv/{post_id}", choice="-1").text) == before - 1
    assert web.post(f"/sv/{post_id}", choice="7").status == 400
    commented = web.post(f"/f/pics/{post_id}/-/comment", comment="<script>alert(1)</script> nice")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; nice" in commented.text
    made = web.post("/submit", title="A brand new post", body="hello", forum="DIY")
    assert made.status == 200 and re.search(r"/f/DIY/\d+/a-brand-new-post$", made.url)
    assert web.post("/submit", title="", forum="DIY").status == 400
    author = re.search(r'class="submission__submitter">([^<]+)<', page.text).group(1)
    assert path in web.get("/f/pics/new").text
    web.post(f"/user/{author}/block_user")
    assert author in web.get("/user/MarvelsGrantMan136/block_list").text
    assert path not in web.get("/f/pics/new").text  # a blocked user's posts are hidden from the blocker

    assert post_reset(forum.url) < 1.0
    assert _score(web.get(path).text) == before and "alert(1)" not in web.get(path).text
    assert path in web.get("/f/pics/new").text and "Nobody." in web.get("/user/MarvelsGrantMan136/block_list").text
    assert web.get(made.url.replace(forum.url, "")).status == 404


# --- homepage ---------------------------------------------------------------------------------

def test_homepage_lists_sites_and_accounts(classifieds, forum):
    home = Server("homepage", links={"classifieds": classifieds.url, "forum": forum.url})
    try:
        web = Browser(home.url)
        page = web.get("/").text
        assert f'href="{classifieds.url}"' in page and f'href="{forum.url}"' in page
        accounts = web.get("/password.html").text
        for username, password in (("blake.sullivan@gmail.com", "Password.123"), ("emma.lopez@gmail.com",
                                   "Password.123"), ("MarvelsGrantMan136", "test1234"), ("byteblaze", "hello1234"),
                                   ("admin", "admin1234")):
            assert f'<td class="username">{username}</td>' in accounts and password in accounts
        # the listed accounts really log in
        assert Browser(forum.url).post("/login_check", _username="MarvelsGrantMan136", _password="test1234").status == 200
        assert post_reset(home.url) < 1.0
    finally:
        home.stop()


# --- every site -------------------------------------------------------------------------------

def _fingerprint(base: str, paths: list[str]) -> str:
    digest = hashlib.sha256()
    attrs = json.loads(get(base + "/images.json").body)
    digest.update(json.dumps(attrs, sort_keys=True).encode())
    for attr in attrs:
        digest.update(get(base + attr["url"]).body)
    for path in paths:
        digest.update(get(base + path).body)
    return digest.hexdigest()


SAMPLE_PAGES = {
    "classifieds": ["/", "/index.php?page=search", "/index.php?page=item&id=5"],
    "wiki": ["/wikipedia_en_all_maxi_2022-05/A/Main_Page", "/wikipedia_en_all_maxi_2022-05/A/Boston"],
    "shopping": ["/", "/catalogsearch/result/?q=a"],
    "forum": ["/", "/f/pics", "/forums"],
    "forge": ["/explore", "/a11yproject/a11yproject.com/-/commits/main", "/a11yproject/a11yproject.com/-/issues"],
}


@pytest.mark.parametrize("site", sorted(SAMPLE_PAGES))
def test_same_seed_same_site_and_loopback_only(site):
    a, b, c = Server(site, seed=3, size=20), Server(site, seed=3, size=20), Server(site, seed=4, size=20)
    try:
        assert _fingerprint(a.url, SAMPLE_PAGES[site]) == _fingerprint(b.url, SAMPLE_PAGES[site])
        assert _fingerprint(a.url, SAMPLE_PAGES[site]) != _fingerprint(c.url, SAMPLE_PAGES[site])
        assert listen_addresses(a.port) == {"0100007F"}  # 127.0.0.1 only, no 0.0.0.0, no IPv6
    finally:
        for server in (a, b, c):
            server.stop()


# --- the site node ------------------------------------------------------------------------------

async def test_site_node_serves_resets_restarts_and_stops():
    from kernel.testing import Harness

    async with Harness(quiet=True) as h:
        h.add("classifieds", "nodes.browser.sites.node:SiteNode", params={"site": "classifieds", "seed": 1, "size": 15})
        probe = h.probe()
        await h.start()
        base = await probe.request("classifieds", "site.url")
        port = int(base.rsplit(":", 1)[1])
        assert base.startswith("http://127.0.0.1:") and listen_addresses(port) == {"0100007F"}
        attrs = await probe.request("classifieds", "site.attributes")
        assert len(attrs) == 15 and {"kind", "colour", "count", "text", "background", "url", "owner"} <= set(attrs[0])
        web = Browser(base)
        web.post("/index.php?page=login", email="blake.sullivan@gmail.com", password="Password.123")
        assert web.post("/index.php?page=item&action=item_add", title="Extra", price="3", catId="1").status == 200
        assert "16 results" in web.get("/index.php?page=search").text
        reply = await probe.request("classifieds", "site.reset")
        assert reply["reset_s"] < 1.0 and "15 results" in web.get("/index.php?page=search").text

        server_pid = int(Path(f"/proc/{h.pid('classifieds')}/task/{h.pid('classifieds')}/children").read_text().split()[0])
        os.kill(server_pid, 9)
        assert wait_until(lambda: not alive(server_pid), timeout=10)
        # the node starts its server again on the same port; the node itself stays up
        assert (await probe.request("classifieds", "site.attributes", timeout=30))[0] == attrs[0]
        assert get(base + "/healthz").status == 200
        new_pid = int(Path(f"/proc/{h.pid('classifieds')}/task/{h.pid('classifieds')}/children").read_text().split()[0])
        assert new_pid != server_pid
    assert wait_until(lambda: not alive(new_pid), timeout=10), "the site server outlived its node"


# --- real Chromium ------------------------------------------------------------------------------

async def test_chromium_renders_pages_with_images(classifieds):
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                           args=["--no-sandbox", "--disable-gpu"])
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 2048})
            await page.goto(classifieds.url + "/index.php?page=search&sCategory=3")
            await page.wait_for_load_state("load")
            loaded = await page.evaluate("[...document.images].map(i => i.complete && i.naturalWidth)")
            assert loaded and all(width == 256 for width in loaded)
            await page.click(".card.listing a")
            await page.wait_for_url(re.compile(r"page=item&id=\d+"))
            assert await page.evaluate("document.querySelector('.item-photo').naturalWidth") == 256
            shot = await page.screenshot()
            assert len(shot) > 10_000
        finally:
            await browser.close()
