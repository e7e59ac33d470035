"""The small framework every local site is built on.

A site subclass declares its schema, seeds its content from ``(seed, size)``, and lists its routes
as plain synchronous functions of a ``Ctx``. The framework builds the seeded database once, in
memory, keeps it as the pristine copy, and serves a working copy; ``POST /reset`` copies the
pristine one over it with SQLite's backup API (milliseconds, measured by the tests). Handlers run
in Starlette's threadpool under one lock, so SQLite and Pillow never block uvicorn's event loop and
a reset never interleaves with a request."""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping
from urllib.parse import urlencode, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from nodes.browser.sites import images

SESSION_COOKIE = "fb_session"  # each site's cookie is this plus its name: sites on one host, ports apart,
# share their cookies (cookies know no ports), so a login to one must not replace another's


def session_cookie_name(site: str) -> str:
    return f"{SESSION_COOKIE}_{site}"


def session_cookie_value(site: str, seed: int, username: str, purpose: str = "") -> str:
    """The session cookie of ``username`` on site ``site`` built with ``seed``: the same for every server
    of that site and seed, through resets and restarts, so a login state made once keeps working.
    ``purpose`` (an admin session, an API token) signs a credential no other purpose accepts."""
    secret = hashlib.sha256(f"framebus-site:{site}:{seed}".encode()).digest()
    message = f"{purpose}\0{username}" if purpose else username
    mac = hmac.new(secret, message.encode(), hashlib.sha256).hexdigest()[:32]
    return f"{username}|{mac}"


def login_state(site: type[Site], seed: int, base_url: str, username: str | None = None,
                for_site: str | None = None) -> dict[str, Any]:
    """A Playwright storage state in which ``username`` is logged in to the site at ``base_url``: what
    WebArena's auto-login script saves after filling in a login form, made here without one (the site
    signs its own cookies). Without ``username``: the account the site keeps for the benchmark site
    ``for_site`` (``login_accounts``, e.g. the admin of a shop's admin panel), else its first account.
    ValueError names the accounts."""
    if for_site in site.other_sessions:  # a back office with a cookie of its own (the shop's admin panel)
        name, purpose, account = site.other_sessions[for_site]
        username = username or account
    else:
        name, purpose = session_cookie_name(site.name), ""
        known = [account[0] for account in site.accounts]
        if not known:
            raise ValueError(f"site {site.name} has no accounts to log in with")
        if username is None:
            username = site.login_accounts.get(for_site or "", known[0])
        if username not in known:
            raise ValueError(f"site {site.name} has no account {username!r} (accounts: {', '.join(known)})")
    cookie = {"name": name, "value": session_cookie_value(site.name, seed, username, purpose),
              "domain": urlsplit(base_url).hostname or "127.0.0.1", "path": "/", "expires": -1, "httpOnly": True,
              "secure": False, "sameSite": "Lax"}
    return {"cookies": [cookie], "origins": []}


IMAGES_SCHEMA = """
CREATE TABLE images (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, kind TEXT NOT NULL, colour TEXT NOT NULL,
                     count INTEGER NOT NULL, text TEXT NOT NULL, background TEXT NOT NULL, png BLOB NOT NULL);
CREATE INDEX images_owner ON images(owner);
CREATE TABLE accounts (username TEXT PRIMARY KEY, email TEXT NOT NULL, password TEXT NOT NULL,
                       display TEXT NOT NULL);
"""


@dataclass
class Ctx:
    """One request as a handler sees it: parsed query and form, the logged-in user, the database."""

    request: Request
    site: Site
    db: sqlite3.Connection
    query: QueryParams
    form: dict[str, str]
    path: Mapping[str, Any]
    user: str | None
    files: dict[str, bytes] = field(default_factory=dict)
    cookies_out: dict[str, str | None] = field(default_factory=dict)
    body: bytes = b""  # a POST's JSON body (the REST routes'); empty for forms

    def render(self, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        page = self.site.templates.get_template(template).render(
            user=self.user, site=self.site, url_for_query=_with_query, request=self.request, **values)
        return self._finish(HTMLResponse(page, status_code=status))

    def redirect(self, url: str) -> Response:
        return self._finish(RedirectResponse(url, status_code=303))

    def json(self, data: Any, status: int = 200) -> Response:
        return self._finish(JSONResponse(data, status_code=status))

    def need_user(self) -> str:
        """The logged-in user, or a 401 that names the site's login page."""
        if self.user is None:
            raise HTTPException(401, f"log in first at {self.site.login_path}")
        return self.user

    def log_in(self, username: str) -> None:
        self.cookies_out[self.site.cookie_name] = self.site.sign(username)
        self.user = username

    def log_out(self) -> None:
        self.cookies_out[self.site.cookie_name] = None
        self.user = None

    def _finish(self, response: Response) -> Response:
        for name, value in self.cookies_out.items():
            if value is None:
                response.delete_cookie(name, path="/")
            else:
                response.set_cookie(name, value, path="/", httponly=True, samesite="lax")
        return response


def _with_query(path: str, **params: Any) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return f"{path}?{urlencode(kept)}" if kept else path


Handler = Callable[[Ctx], Response]


class Site:
    """Base of a local site. Subclasses set ``name``, ``schema``, ``templates_source``, ``build``
    and ``pages`` (a list of ``(path, handler, methods)``)."""

    name: ClassVar[str] = ""
    schema: ClassVar[str] = ""
    templates_source: ClassVar[dict[str, str]] = {}
    default_size: ClassVar[int] = 40
    login_path: ClassVar[str] = "/login"
    json_paths: ClassVar[tuple[str, ...]] = ()  # path prefixes whose errors are JSON ({"message": ...}), not a page
    accounts: ClassVar[tuple[tuple[str, str, str, str], ...]] = ()  # (username, email, password, display)
    login_accounts: ClassVar[dict[str, str]] = {}  # benchmark site -> the account its tasks start logged in as
    #: benchmark site -> (cookie name, signing purpose, account) of a session that is not a customer's
    #: (WebArena's shopping_admin is the shop's admin panel, signed in with a cookie of its own)
    other_sessions: ClassVar[dict[str, tuple[str, str, str]]] = {}

    def __init__(self, seed: int = 0, size: int | None = None, links: Mapping[str, str] | None = None) -> None:
        self.seed = seed
        self.size = int(size or self.default_size)
        if self.size < 1:
            raise ValueError(f"site {self.name}: size must be at least 1, got {self.size}")
        self.links = dict(links or {})
        self.lock = threading.Lock()
        self.cookie_name = session_cookie_name(self.name)
        self.templates = jinja2.Environment(loader=jinja2.DictLoader(self.templates_source), autoescape=True,
                                            undefined=jinja2.StrictUndefined)
        started = time.perf_counter()
        self.pristine = sqlite3.connect(":memory:", check_same_thread=False)
        self.pristine.executescript(IMAGES_SCHEMA + self.schema)
        self.pristine.executemany("INSERT INTO accounts VALUES (?, ?, ?, ?)", self.accounts)
        self.build(self.pristine, random.Random(f"{self.name}:{seed}"))
        self.pristine.commit()
        self.build_s = time.perf_counter() - started
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.pristine.backup(self.db)

    # content -----------------------------------------------------------------------------------
    def build(self, db: sqlite3.Connection, rng: random.Random) -> None:
        raise NotImplementedError

    def pages(self) -> list[tuple[str, Handler, list[str]]]:
        raise NotImplementedError

    def add_picture(self, db: sqlite3.Connection, owner: str, picture: images.Picture) -> int:
        """Draw ``picture``, store it with its attributes, return its id (served at /images/<id>.png)."""
        cur = db.execute("INSERT INTO images (owner, kind, colour, count, text, background, png) VALUES "
                         "(?, ?, ?, ?, ?, ?, ?)", (owner, picture.kind, picture.colour, picture.count, picture.text,
                                                   picture.background, images.draw(picture)))
        return int(cur.lastrowid or 0)

    # state -------------------------------------------------------------------------------------
    def reset(self) -> float:
        """Restore the seeded state; returns the seconds it took."""
        started = time.perf_counter()
        with self.lock:
            self.pristine.backup(self.db)
        return time.perf_counter() - started

    def attributes(self) -> list[dict[str, Any]]:
        """Every stored image with what it shows: the answer key of visual questions."""
        with self.lock:
            rows = self.db.execute("SELECT id, owner, kind, colour, count, text, background FROM images "
                                   "ORDER BY id").fetchall()
        return [{**dict(row), "url": f"/images/{row['id']}.png"} for row in rows]

    # sessions ----------------------------------------------------------------------------------
    def sign(self, username: str, purpose: str = "") -> str:
        """A session cookie that survives resets and restarts (same seed, same secret), so a
        Playwright storage_state made once keeps working. ``purpose`` keeps other credentials
        (an admin session, an API token) from being accepted as a customer's cookie, or the reverse."""
        return session_cookie_value(self.name, self.seed, username, purpose)

    def session_user(self, cookie: str | None, purpose: str = "") -> str | None:
        if not cookie or "|" not in cookie:
            return None
        username, _, mac = cookie.rpartition("|")
        return username if hmac.compare_digest(self.sign(username, purpose), cookie) and mac else None

    def check_login(self, db: sqlite3.Connection, login: str, password: str) -> str | None:
        row = db.execute("SELECT username FROM accounts WHERE (username = ? OR email = ?) AND password = ?",
                         (login.strip(), login.strip(), password)).fetchone()
        return None if row is None else str(row[0])

    # serving -----------------------------------------------------------------------------------
    def call(self, handler: Handler, request: Request, form: dict[str, str], files: dict[str, bytes],
             body: bytes = b"") -> Response:
        """Run one handler in the threadpool, under the site lock."""
        with self.lock:
            ctx = Ctx(request=request, site=self, db=self.db, query=request.query_params, form=form,
                      path=request.path_params, user=self.session_user(request.cookies.get(self.cookie_name)),
                      files=files, body=body)
            try:
                response = handler(ctx)
                self.db.commit()
            except BaseException:
                self.db.rollback()
                raise
        return response

    def app(self) -> Starlette:
        routes = [Route("/reset", self._reset_endpoint, methods=["POST"]),
                  Route("/images.json", self._attributes_endpoint, methods=["GET"]),
                  Route("/images/{image_id:int}.png", _endpoint(_image), methods=["GET"]),
                  Route("/healthz", _healthz, methods=["GET"])]
        routes += [Route(path, _endpoint(handler), methods=methods) for path, handler, methods in self.pages()]
        app = Starlette(routes=routes, exception_handlers={HTTPException: _error_page})
        app.state.site = self
        return app

    async def _reset_endpoint(self, request: Request) -> Response:
        seconds = await run_in_threadpool(self.reset)
        return JSONResponse({"site": self.name, "reset_s": seconds})

    async def _attributes_endpoint(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self.attributes))


def _endpoint(handler: Handler) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        form: dict[str, str] = {}
        files: dict[str, bytes] = {}
        body = b""
        if request.method == "POST" and _is_json(request):
            body = await _bounded_body(request)
        elif request.method == "POST":
            async with request.form(max_files=4, max_part_size=4 << 20) as data:
                for key, value in data.multi_items():
                    if isinstance(value, str):
                        form[key] = value
                    elif (content := await value.read()):
                        files[key] = content
        for key, value in request.path_params.items():  # the routes' {id:int} take any run of digits
            if isinstance(value, int) and value > SQLITE_MAX:
                raise HTTPException(400, f"{key} must be a whole number from 0 to {SQLITE_MAX:,}, got {value}")
        site: Site = request.app.state.site
        return await run_in_threadpool(site.call, handler, request, form, files, body)

    endpoint.__name__ = getattr(handler, "__name__", "endpoint")
    return endpoint


def _is_json(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"


async def _bounded_body(request: Request) -> bytes:
    """A JSON body, read up to MAX_JSON_BODY bytes: a bigger one is a 413 before it is all in memory."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_JSON_BODY:
            raise HTTPException(413, f"a JSON body may hold at most {MAX_JSON_BODY:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _image(ctx: Ctx) -> Response:
    row = ctx.db.execute("SELECT png FROM images WHERE id = ?", (ctx.path["image_id"],)).fetchone()
    if row is None:
        raise HTTPException(404, f"no image {ctx.path['image_id']}")
    return Response(bytes(row[0]), media_type="image/png", headers={"Cache-Control": "no-store"})


async def _healthz(request: Request) -> Response:
    site: Site = request.app.state.site
    return JSONResponse({"site": site.name, "seed": site.seed, "size": site.size})


async def _error_page(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 500)
    detail = str(getattr(exc, "detail", exc))
    site: Site = request.app.state.site
    if site.json_paths and request.url.path.startswith(site.json_paths):
        return JSONResponse({"message": detail}, status_code=status)
    body = (f"<!doctype html><html><head><title>Error {status}</title></head><body><h1>Error {status}</h1>"
            f"<p>{jinja2.utils.markupsafe.escape(detail)}</p></body></html>")
    return HTMLResponse(body, status_code=status)


#: SQLite's INTEGER is signed 64-bit; the driver raises OverflowError (a 500) on a bigger Python int
#: rather than matching nothing, so every number a request carries is bounded before it reaches SQL
SQLITE_MAX = 2**63 - 1
#: past any listing the sites seed; a bigger page number is a broken link or a probe, not browsing
MAX_PAGE = 100_000
#: a search is a few words; each word adds a LIKE clause, and SQLite refuses an expression tree
#: deeper than 1,000, so a pasted essay would otherwise end in a 500
MAX_SEARCH_WORDS = 32
#: the REST routes take small JSON documents (a login, a filter); anything bigger is refused unread
MAX_JSON_BODY = 64 << 10


def whole(text: str, name: str, low: int = 0, high: int = SQLITE_MAX) -> int:
    """``text`` as a whole number from ``low`` to ``high``, or a 400 naming the parameter and the range."""
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise HTTPException(400, f"{name} must be a whole number from {low} to {high:,}, got {text[:40]!r}")
    return value


def page_number(ctx: Ctx, name: str = "p") -> int:
    """The page a listing asks for; 0 and below mean the first (as links built from ``page - 1`` may)."""
    text = ctx.query.get(name, "").strip()
    if not text:
        return 1
    try:
        value = int(text)
    except ValueError:
        value = MAX_PAGE + 1
    if value > MAX_PAGE:
        raise HTTPException(400, f"{name} must be a page number from 1 to {MAX_PAGE:,}, got {text[:40]!r}")
    return max(1, value)


def search_words(text: str, name: str) -> list[str]:
    """The words of a search box, or a 400 when there are more than a search can hold."""
    words = text.split()
    if len(words) > MAX_SEARCH_WORDS:
        raise HTTPException(400, f"{name}: a search takes at most {MAX_SEARCH_WORDS} words, got {len(words)}")
    return words


def form_text(values: Mapping[str, str], name: str, limit: int, *, required: bool = False) -> str:
    """A form or query field, stripped, or a 400 naming it: longer than ``limit`` characters, holding a
    NUL character (SQLite keeps it, but every page that shows it would cut the text there), or empty
    when ``required``. Bounding what a form stores keeps a pasted megabyte out of every page after it."""
    value = values.get(name, "")
    if len(value) > limit:
        raise HTTPException(400, f"{name} may hold at most {limit:,} characters, got {len(value):,}")
    if "\0" in value:
        raise HTTPException(400, f"{name} must not contain NUL characters")
    value = value.strip()
    if required and not value:
        raise HTTPException(400, f"{name} is required")
    return value


def to_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True)


def layout(brand: str, nav: str, css: str = "") -> str:
    """The shared page frame (a Jinja template): a header with the site's brand and links, the
    logged-in user, and a ``content`` block."""
    return """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{% block title %}""" + brand + """{% endblock %}</title>
<style>
body { font-family: sans-serif; margin: 0; background: #f4f4f4; color: #222; }
header { background: #2d3e50; color: #fff; padding: 10px 20px; display: flex; gap: 18px; align-items: center; }
header a { color: #fff; text-decoration: none; } header .brand { font-weight: bold; font-size: 1.3em; }
header .who { margin-left: auto; }
main { padding: 16px 24px; max-width: 1100px; }
.cards { display: flex; flex-wrap: wrap; gap: 14px; } .card { background: #fff; padding: 10px; width: 200px; border: 1px solid #ddd; }
.card img, .thumb { width: 160px; height: 160px; } .big { width: 320px; height: 320px; }
.price { color: #b12704; font-weight: bold; } .muted { color: #666; font-size: 0.9em; }
form.inline { display: inline; } label { display: block; margin-top: 6px; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 4px 8px; }
""" + css + """</style></head>
<body><header><a class="brand" href="/">""" + brand + """</a>""" + nav + """
<span class="who">{% if user %}Signed in as <span id="current-user">{{ user }}</span>{% endif %}</span></header>
<main>{% block content %}{% endblock %}</main></body></html>"""
