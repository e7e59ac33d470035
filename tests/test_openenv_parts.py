"""The pure parts of the OpenEnv bridge: serving a graph (kernel.tools.openenv_serve: the address
and token checks, the action and observation mapping, the token gate) and playing a server
(nodes.game.openenv: the loopback check, the action field, the observation mapping)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("openenv", reason="openenv-core is not installed (the train extra)")

from pydantic import ValidationError  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.responses import PlainTextResponse  # noqa: E402
from starlette.routing import Route, WebSocketRoute  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402

from kernel.tools.openenv_serve import (  # noqa: E402
    SMALL_ARRAY,
    ClosedQuietly,
    GraphAction,
    ServeRefused,
    TokenGate,
    action_index,
    check_bind,
    is_loopback,
    observation_of,
)
from nodes.game.openenv.node import (  # noqa: E402
    OpenEnvParams,
    action_field,
    action_payload,
    check_url,
    framebus_obs,
    text_of,
)

TOKEN = "s3cret-token-of-24-chars"


# -- serving a graph ---------------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"])
def test_loopback_hosts_serve_without_a_token(host):
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.4", "example.org"])
def test_any_other_host_needs_a_token(host):
    assert not is_loopback(host)
    with pytest.raises(ServeRefused, match=r"--host .* needs --token"):
        check_bind(host, None)
    check_bind(host, TOKEN)


def test_a_short_token_is_refused():
    with pytest.raises(ServeRefused, match=r"--token: a token needs at least 16 characters \(got 5\)"):
        check_bind("0.0.0.0", "abcde")


def test_actions_are_names_or_indices_of_the_fixed_or_current_list():
    fixed = ["Up", "Down", "Left", "Right"]
    assert action_index("Left", fixed, []) == 2
    assert action_index(3, fixed, []) == 3
    assert action_index("b", [], ["a", "b"]) == 1  # an env whose actions change with the state
    with pytest.raises(ValueError, match="unknown action 'Jump'; allowed now: Up, Down, Left, Right"):
        action_index("Jump", fixed, [])
    with pytest.raises(ValueError, match="out of range: 4 actions"):
        action_index(4, fixed, [])
    with pytest.raises(ValueError, match="action name or its index"):
        action_index(True, fixed, [])
    assert GraphAction(action="Up").action == "Up" and GraphAction(action=1).action == 1


def test_observations_keep_the_convention_and_leave_big_arrays_out():
    body = {"text": "a room", "actions": ["go", "stay"], "goal": "leave", "idle": "stay", "env": "walk", "t": 3,
            "level": "v1-09", "position": np.array([1, 2]), "frame": np.zeros((64, 64, 3), np.uint8),
            "table": {"a": [1, 2.5, None]}, "blob": object()}
    obs = observation_of(body, episode="ep00007", reward=1.5, metrics={"score": np.float64(2.0)})
    assert (obs.text, obs.actions, obs.goal, obs.idle, obs.env, obs.t) == ("a room", ["go", "stay"], "leave", "stay",
                                                                          "walk", 3)
    assert obs.episode == "ep00007" and obs.reward == 1.5 and obs.done is False
    assert obs.fields == {"level": "v1-09", "position": [1, 2], "table": {"a": [1, 2.5, None]}}
    assert sorted(obs.omitted) == ["blob", "frame"]
    assert obs.metrics == {"score": 2.0}
    small = observation_of({"actions": [], "grid": np.ones((SMALL_ARRAY,), np.int8)})
    assert small.fields["grid"] == [1] * SMALL_ARRAY
    assert observation_of({"actions": [], "grid": np.ones((SMALL_ARRAY + 1,))}).omitted == ["grid"]


def _gated() -> TokenGate:
    async def hello(request):
        return PlainTextResponse(f"hello from {request.url.path}")

    async def ws(websocket):
        await websocket.accept()
        await websocket.send_text("open")
        await websocket.close()

    return TokenGate(Starlette(routes=[Route("/health", hello), WebSocketRoute("/ws", ws)]), TOKEN)


def test_the_token_gate_admits_a_bearer_header_or_a_path_prefix_and_nothing_else():
    client = TestClient(_gated())
    refused = client.get("/health")
    assert refused.status_code == 401 and "token is required" in refused.json()["detail"]
    assert client.get("/health", headers={"Authorization": "Bearer wrong-token-wrong-token"}).status_code == 401
    assert client.get(f"/{TOKEN}x/health").status_code == 401
    assert client.get("/health", headers={"Authorization": f"Bearer {TOKEN}"}).text == "hello from /health"
    assert client.get(f"/{TOKEN}/health").text == "hello from /health"  # the routes see their own paths
    with client.websocket_connect(f"/{TOKEN}/ws") as ws:
        assert ws.receive_text() == "open"
    with pytest.raises(WebSocketDisconnect) as closed:
        with client.websocket_connect("/ws") as ws:
            ws.receive_text()
    assert closed.value.code == 1008


# -- playing a server ---------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["http://127.0.0.1:8000", "ws://localhost:9/abc", "http://[::1]:8000/TOKEN"])
def test_urls_on_this_machine_are_allowed(url):
    assert check_url(url) == url


@pytest.mark.parametrize("url, why", [("http://10.0.0.2:8000", "must be on this machine"),
                                      ("https://example.org", "must be on this machine"),
                                      ("ftp://127.0.0.1/x", "http://, https://, ws:// or wss://")])
def test_other_urls_are_refused_naming_the_param(url, why):
    with pytest.raises(ValueError, match=f"params.url .*{why}"):
        check_url(url)
    with pytest.raises(ValidationError, match="params.url"):
        OpenEnvParams(url=url)


def test_the_node_needs_exactly_one_server(tmp_path):
    with pytest.raises(ValidationError, match="either params.url .* or params.package / params.app"):
        OpenEnvParams()
    with pytest.raises(ValidationError, match="not both"):
        OpenEnvParams(url="http://127.0.0.1:1", package=str(tmp_path))
    with pytest.raises(ValidationError, match="not both"):
        OpenEnvParams(url="http://127.0.0.1:1", app="echo_env.server.app:app")
    with pytest.raises(ValidationError, match="params.app 'server.app': module:attribute expected"):
        OpenEnvParams(app="server.app")
    assert OpenEnvParams(app="echo_env.server.app:app").package is None  # an installed env's app
    with pytest.raises(ValidationError, match=r"params.package .*no server.app module there"):
        OpenEnvParams(package=str(tmp_path))
    (tmp_path / "server").mkdir()
    (tmp_path / "server" / "app.py").write_text("app = None\n")
    assert OpenEnvParams(package=str(tmp_path)).served_app() == "server.app:app"


def test_the_action_field_is_the_only_required_one_or_the_named_one():
    echo = {"properties": {"metadata": {"type": "object"}, "message": {"type": "string"}}, "required": ["message"]}
    assert action_field(echo, None) == ("message", "string")
    two = {"properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}
    with pytest.raises(ValueError, match=r"params.action_field: the server's action has 2 required fields \(x, y"):
        action_field(two, None)
    assert action_field(two, "y") == ("y", "integer")
    with pytest.raises(ValueError, match="params.action_field 'z': the server's action has the fields x, y"):
        action_field(two, "z")
    served = {"properties": {"action": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}, "required": ["action"]}
    assert action_field(served, None) == ("action", None)
    assert action_payload("Up", "action", None) == {"action": "Up"}
    assert action_payload("3", "x", "integer") == {"x": 3}


def test_openenv_observations_map_to_the_convention():
    listed = framebus_obs({"text": "a room", "actions": ["go"], "goal": "out", "score": 1}, ["ignored"], None)
    assert (listed["text"], listed["actions"], listed["goal"], listed["idle"]) == ("a room", ["go"], "out", None)
    assert listed["openenv"]["score"] == 1  # type: ignore[typeddict-item]
    echo = framebus_obs({"echoed_message": "hi", "message_length": 2}, ["hello", "bye"], None)
    assert echo["actions"] == ["hello", "bye"] and echo["text"] == "echoed_message: hi\nmessage_length: 2"
    assert "goal" not in echo
    assert text_of({"board": "x.o", "text": "ignored"}, "board") == "x.o"


def test_a_session_whose_client_left_first_ends_without_an_error():
    """openenv-core closes every session's socket itself; when the client has closed it already,
    starlette raises WebSocketDisconnect, which ClosedQuietly keeps out of the server's log."""
    async def ws(websocket):
        await websocket.accept()
        await websocket.receive_text()
        raise WebSocketDisconnect(code=1006)  # as starlette's close() of a socket already gone

    async def hello(request):
        raise WebSocketDisconnect(code=1006)  # not a WebSocket: passed on as it is

    app = Starlette(routes=[WebSocketRoute("/ws", ws), Route("/health", hello)])
    with TestClient(ClosedQuietly(app)).websocket_connect("/ws") as session:
        session.send_text("bye")
    with pytest.raises(WebSocketDisconnect):  # the same session without it
        with TestClient(app).websocket_connect("/ws") as session:
            session.send_text("bye")
    with pytest.raises(WebSocketDisconnect):
        TestClient(ClosedQuietly(app)).get("/health")
