"""A small real web site for the browser environment's tests: Starlette on uvicorn, on 127.0.0.1 and a
free port, in a thread of the test process.

Each page exercises something the environment must get right: links and a link opening a new tab,
a form with a text box, a select and a button, a button whose script changes the page, images (drawn
with Pillow), a page several viewports long, content that arrives after the load event, a download,
a link to an outside host, and elements the Set-of-Marks rules must drop (too small, too large,
hidden, off screen).
"""

from __future__ import annotations

import html
import io
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from PIL import Image, ImageDraw
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

VIEW_W, VIEW_H = 800, 600  # the tests' viewport: small pages draw and screenshot fast


def _page(title: str, body: str) -> HTMLResponse:
    return HTMLResponse(f"<!doctype html><html><head><title>{html.escape(title)}</title>"
                        f"<style>body{{margin:0;font:16px sans-serif}} a,button,input{{margin:4px}}</style>"
                        f"</head><body>{body}</body></html>")


def _png(colour: str, size: int = 64) -> bytes:
    img = Image.new("RGB", (size, size), colour)
    ImageDraw.Draw(img).ellipse((8, 8, size - 8, size - 8), fill="white")
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def site(outside: str) -> Starlette:
    """The test site; ``outside`` is the base URL of a host the browser must never reach."""

    async def home(request: Request) -> Response:
        return _page("Home", f"""
          <h1>Test site home</h1>
          <p>Welcome to the test site.</p>
          <a href="/form">Go to the form</a>
          <a href="/long">A long page</a>
          <a href="/images">Pictures</a>
          <a href="/late">Late content</a>
          <a href="/tab-target" target="_blank">Open in a new tab</a>
          <a href="{outside}/secret">Outside link</a>
          <a href="/download">Download a file</a>
          <button id="count" onclick="this.textContent = 'Clicked ' + (++window.n) + ' times'">Click me</button>
          <script>window.n = 0</script>
          <span id="hoverme" onmouseover="document.getElementById('tip').textContent = 'Hover tip shown'"
                style="display:inline-block;padding:6px;border:1px solid #888" tabindex="0">Hover over me</span>
          <span id="tip"></span>
          <a href="/tiny" style="display:inline-block;width:4px;height:4px;overflow:hidden;font-size:2px">t</a>
          <input type="hidden" name="secret" value="x">
          <a href="/nowhere" style="position:absolute;top:3000px">Far below</a>
          <div tabindex="0" style="position:absolute;left:0;top:0;z-index:-1;width:{VIEW_W}px;height:{VIEW_H}px">Huge</div>
        """)

    async def form(request: Request) -> Response:
        return _page("Form", """
          <h1>Tell us your name</h1>
          <form method="post" action="/submit">
            <input type="text" name="name" placeholder="Your name">
            <select name="colour"><option>red</option><option>blue</option></select>
            <textarea name="note"></textarea>
            <button type="submit">Send</button>
          </form>
        """)

    async def submit(request: Request) -> Response:
        data = await request.form()
        return _page("Thanks", f"<h1>Hello {html.escape(str(data.get('name', '')))}</h1>"
                               f"<p>Colour: {html.escape(str(data.get('colour', '')))}</p>"
                               f"<a href='/'>Home</a>")

    async def long(request: Request) -> Response:
        sections = "".join(f'<div style="height:{VIEW_H}px"><h2>Section {i}</h2></div>' for i in range(1, 6))
        return _page("Long page", sections)

    async def images(request: Request) -> Response:
        return _page("Pictures", """
          <div class="gallery">
            <img src="/img/red.png" alt="A red disc" width="64" height="64">
            <a href="/form"><img src="/img/blue.png" alt="A blue disc" width="64" height="64"></a>
          </div>
          <img class="other" src="/img/green.png" alt="" width="64" height="64">
        """)

    async def image(request: Request) -> Response:
        colour = request.path_params["colour"]
        if colour not in ("red", "blue", "green"):
            return PlainTextResponse("no such image", status_code=404)
        return Response(_png(colour), media_type="image/png")

    async def late(request: Request) -> Response:
        # the text arrives from a slow request made at the load event, and is shown a moment later:
        # a fixed short wait misses it, a settled page (network idle, then a quiet DOM) does not
        return _page("Late", """
          <p id="slot">Waiting</p>
          <script>
            window.addEventListener('load', () =>
              fetch('/late-data').then(r => r.text()).then(t => setTimeout(() => {
                document.getElementById('slot').textContent = t; }, 40)));
          </script>
        """)

    def late_data(request: Request) -> Response:
        time.sleep(0.3)  # a slow back end (a sync endpoint runs in Starlette's thread pool)
        return PlainTextResponse("Arrived late")

    async def delayed(request: Request) -> Response:
        # a click whose effect lands 200 ms later (longer than the quiet window), and a picture a
        # script fetches after the load event: both must be in the next observation
        return _page("Delayed", """
          <button id="later" onclick="setTimeout(() => {
            document.getElementById('out').textContent = 'Shown later'; }, 200)">Show later</button>
          <p id="out">Not yet</p>
          <div id="pics"></div>
          <script>
            window.addEventListener('load', () => setTimeout(() => fetch('/late-data').then(() => {
              const img = document.createElement('img');
              img.src = '/img/green.png'; img.alt = 'A fetched disc'; img.width = 64; img.height = 64;
              const link = document.createElement('a');
              link.href = '/form'; link.appendChild(img);
              document.getElementById('pics').appendChild(link); }), 0));
          </script>
        """)

    async def tab_target(request: Request) -> Response:
        return _page("New tab page", "<h1>Opened in a new tab</h1>")

    async def download(request: Request) -> Response:
        return Response(b"file body", media_type="application/octet-stream",
                        headers={"Content-Disposition": 'attachment; filename="data.bin"'})

    return Starlette(routes=[
        Route("/", home), Route("/form", form), Route("/submit", submit, methods=["POST"]), Route("/long", long),
        Route("/images", images), Route("/img/{colour}.png", image), Route("/late", late),
        Route("/late-data", late_data), Route("/delayed", delayed),
        Route("/tab-target", tab_target), Route("/download", download),
    ])


def outside_site(hits: list[str]) -> Starlette:
    """A host outside the sandbox: it records every request that reaches it."""

    async def anything(request: Request) -> Response:
        hits.append(request.url.path)
        return _page("Outside", "<h1>You should not be here</h1>")

    return Starlette(routes=[Route("/{path:path}", anything)])


@contextmanager
def serve(app: Starlette) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 and a free port in a thread; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test site did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
