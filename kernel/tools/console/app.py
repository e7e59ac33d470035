"""The console's web app: Starlette routes for the page, its static files and one WebSocket.

Every request and socket must carry the token (``?token=`` or the ``framebus_console`` cookie the
page gets): none gives 401, a wrong one 403. The socket also needs an ``Origin`` that is the
console's own page (``http://127.0.0.1:PORT`` or ``http://localhost:PORT``): a browser sends the
cookie to every port of the host (SameSite does not separate ports), so without that check a page
served on any other loopback port could open the socket in the person's name. A refused socket is
answered at the handshake (HTTP 401/403 naming why; close code 4401/4403 where the server cannot
send a body), before anything is read or sent, and counted (``refused``). The page sets
``frame-ancestors 'none'``, so no other site can frame it under a decoy for a click. The socket
speaks msgpack both ways: the server sends ``{"type": "batch", "items": {key: value}}`` with the
newest value of each key the page has not had yet, and answers each ``{"id", "op", ...}`` a page
sends with ``{"type": "reply", "id", "ok", ...}`` or ``{"type": "reply", "id", "ok": false,
"error"}``, the error naming what was wrong. ``/frame/{episode}/{t}`` serves the replay view's
recorded frames (kernel.tools.console.replay); it needs the token like every other request.
"""

from __future__ import annotations

import asyncio
import hmac
import sqlite3
from pathlib import Path
from typing import Any

import msgpack
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from kernel.tools.console.hub import Hub, pack, step_number

STATIC = Path(__file__).parent / "static"
FILES = {"console.js": "text/javascript", "msgpack.js": "text/javascript", "replay.js": "text/javascript",
         "console.css": "text/css", "index.html": "text/html"}
COOKIE = "framebus_console"


def check_token(expected: str, given: str | None) -> int | None:
    """None when ``given`` is the token; else the HTTP status to refuse with (401 none, 403 wrong)."""
    if not given:
        return 401
    return None if hmac.compare_digest(given.encode(), expected.encode()) else 403


def own_origins(port: int) -> frozenset[str]:
    """The origins the console's own page has: it listens on 127.0.0.1, which a browser also
    reaches as ``localhost``."""
    return frozenset({f"http://127.0.0.1:{port}", f"http://localhost:{port}"})


def socket_refusal(token: str, given: str | None, origin: str | None, port: int) -> tuple[int, str] | None:
    """None when a socket may open; else the HTTP status and the reason to refuse it with.

    The token alone is not enough: the cookie holding it reaches the console from a page on any
    port of the host, so only the console's own origin may use it. A client that is no browser
    has no cookie, and needs the token, which only the person who started the run has."""
    if origin not in own_origins(port):
        shown = "none" if origin is None else ascii(origin[:60])
        return 403, f"origin {shown} is not this console's own (http://127.0.0.1:{port})"
    status = check_token(token, given)
    if status is None:
        return None
    return status, "no token" if status == 401 else "wrong token"


def _given(conn: Request | WebSocket) -> str | None:
    return conn.query_params.get("token") or conn.cookies.get(COOKIE)


def build_app(hub: Hub, token: str, port: int) -> Starlette:
    """The console's routes; ``port`` is where it listens, which makes its own origin."""

    def refused(status: int) -> Response:
        hub.counts["refused"] += 1
        why = ("this console needs the token of its run: open the address `launch run --ui` or `launch ui` printed"
               if status == 401 else "wrong token for this console: open the address `launch run --ui` or "
               "`launch ui` printed")
        return PlainTextResponse(why + "\n", status_code=status)

    async def index(request: Request) -> Response:
        if (status := check_token(token, _given(request))) is not None:
            return refused(status)
        response = FileResponse(STATIC / "index.html", media_type="text/html")
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict")
        response.headers["Cache-Control"] = "no-store"
        # Framed by another site, the page would be its own origin with its cookie: a decoy over it
        # could have the person click Pause or a move without knowing.
        response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"
        response.headers["X-Frame-Options"] = "DENY"
        return response

    async def static(request: Request) -> Response:
        if (status := check_token(token, _given(request))) is not None:
            return refused(status)
        name = request.path_params["name"]
        if name not in FILES:
            return PlainTextResponse(f"no such file: {name!r} (the console serves {', '.join(FILES)})\n",
                                     status_code=404)
        return FileResponse(STATIC / name, media_type=FILES[name])

    async def favicon(request: Request) -> Response:
        if (status := check_token(token, _given(request))) is not None:
            return refused(status)
        return Response(status_code=204)

    async def frame(request: Request) -> Response:
        """``/frame/{episode}/{t}``: a recorded frame for the replay view, as the recorder wrote it (PNG)."""
        if (status := check_token(token, _given(request))) is not None:
            return refused(status)
        episode = request.path_params["episode"]
        try:
            t = step_number(request.path_params["t"], "frame")
        except ValueError as exc:
            return PlainTextResponse(f"{exc}\n", status_code=400)
        if hub.replays is None:
            return PlainTextResponse("this console has no run folder, so it has no frames\n", status_code=404)
        try:
            png = await asyncio.to_thread(hub.replays.frame, episode, t)
        except LookupError as exc:
            return PlainTextResponse(f"{exc.args[0] if exc.args else exc}\n", status_code=404)
        except sqlite3.Error as exc:  # another process holds the store's lock longer than the busy timeout
            return PlainTextResponse(f"the results store could not be read now ({exc}); try again\n", status_code=503)
        return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=300"})

    async def socket(ws: WebSocket) -> None:
        if (refusal := socket_refusal(token, _given(ws), ws.headers.get("origin"), port)) is not None:
            hub.counts["refused"] += 1
            status, why = refusal
            if "websocket.http.response" in ws.scope.get("extensions", {}):
                await ws.send_denial_response(PlainTextResponse(why + "\n", status_code=status))
            else:
                await ws.close(code=4000 + status, reason=why[:120])
            return
        await ws.accept()
        page = hub.open_page()
        sender = asyncio.get_running_loop().create_task(_send(ws, page))
        try:
            while True:
                data = await ws.receive_bytes()
                await ws.send_bytes(pack(await _answer(hub, data)))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            hub.close_page(page)
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)

    return Starlette(routes=[Route("/", index), Route("/static/{name}", static), Route("/favicon.ico", favicon),
                             Route("/frame/{episode}/{t}", frame), WebSocketRoute("/ws", socket)])


SEND_INTERVAL_S = 0.1
"""A page gets at most one batch this often: what changes faster (a step record 60 times a second)
is folded into the next batch as its newest value, so neither this process nor the browser spends
its time on updates nobody can see."""


async def _send(ws: WebSocket, page: Any) -> None:
    try:
        while True:
            items = await page.take()
            await ws.send_bytes(pack({"type": "batch", "items": items}))
            page.sent += 1
            await asyncio.sleep(SEND_INTERVAL_S)
    except (WebSocketDisconnect, RuntimeError, ConnectionError):
        pass
    except Exception as exc:  # a value that cannot be packed: close, so the page says so instead of going stale
        try:
            await ws.close(code=1011, reason=f"the console could not send an update: {type(exc).__name__}")
        except (RuntimeError, ConnectionError):
            pass


async def _answer(hub: Hub, data: bytes) -> dict[str, Any]:
    try:
        msg = msgpack.unpackb(data, raw=False)
    except Exception as exc:
        return {"type": "reply", "id": None, "ok": False, "error": f"not a msgpack message: {exc}"}
    if not isinstance(msg, dict):
        return {"type": "reply", "id": None, "ok": False, "error": f"a message must be a map, not {type(msg).__name__}"}
    try:
        return {"type": "reply", "id": msg.get("id"), **await hub.command(msg)}
    except Exception as exc:
        return {"type": "reply", "id": msg.get("id"), "ok": False, "error": str(exc) or type(exc).__name__}


async def serve(app: Starlette, port: int, host: str = "127.0.0.1") -> Any:
    """Start uvicorn on this loop; returns the server (``should_exit = True`` stops it)."""
    import uvicorn

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"the console serves on loopback only, not on {host!r}")
    # No per-message deflate: on loopback it only burns CPU beside the run (it was most of the
    # console's time: a few ms per batch), and JPEG frames do not shrink anyway.
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off", access_log=False,
                            ws="auto", ws_per_message_deflate=False)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # the node owns signals
    task = asyncio.get_running_loop().create_task(server.serve())
    for _ in range(200):
        if server.started or task.done():
            break
        await asyncio.sleep(0.025)
    if task.done():
        task.result()
        raise RuntimeError(f"the console could not listen on {host}:{port}")
    server.framebus_task = task  # type: ignore[attr-defined]
    return server
