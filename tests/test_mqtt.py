"""Robots over MQTT: the bridge against a real mosquitto started by the test (killed and restarted
for the reconnect test), the rover device's protocol, and launch/robot_mqtt.yaml end to end."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import aiomqtt
import msgpack
import numpy as np
import pytest

from kernel.launchfile import LaunchError, load
from kernel.sdk.registry import load_node_class
from kernel.testing import Harness, Probe
from nodes.game.mqtt.codec import Codec, CodecError
from nodes.game.mqtt.mosquitto import Mosquitto, find_binary, free_port
from nodes.game.mqtt.robot import Device, Rover
from nodes.game.mqtt.rover import shortest_plan
from tests.helpers import launch

needs_broker = pytest.mark.skipif(find_binary() is None, reason="mosquitto is not installed "
                                  "(apt-get install mosquitto): these tests need a real MQTT broker")


@pytest.fixture
async def broker(tmp_path: Path):
    b = Mosquitto(free_port(), workdir=tmp_path)
    b.start()
    await b.wait_ready()
    yield b
    b.stop()


async def start_bridge(h: Harness, params: dict[str, Any]) -> Probe:
    """The bridge as a real process, wired to the probe on every port its params declare."""
    outputs = sorted({s if isinstance(s, str) else s["output"] for s in params.get("subscribe", {}).values()})
    inputs = list(params.get("publish", {}))
    h.add("bridge", "nodes.game.mqtt.bridge:MqttBridge", params=params,
          inputs={name: f"probe/{name}" for name in inputs})
    probe = h.probe(inputs={name: f"bridge/{name}" for name in outputs}, outputs=inputs)
    await h.start()
    await wait_stats(probe, lambda s: s["connected"])
    return probe


async def wait_stats(probe: Probe, pred, timeout: float = 10.0) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        stats = await probe.request("bridge", "stats", {})
        if pred(stats):
            return stats
        assert asyncio.get_running_loop().time() < deadline, f"bridge stats never matched: {stats}"
        await asyncio.sleep(0.05)


async def next_message(client: aiomqtt.Client, timeout: float = 5.0) -> aiomqtt.Message:
    return await asyncio.wait_for(anext(client.messages), timeout)


# --- codecs and params (no broker) ------------------------------------------------------------

def test_codecs_round_trip_bodies_and_arrays():
    frame = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    packed = Codec("msgpack").encode({"frame": frame, "t": 3})
    wire = msgpack.unpackb(packed, raw=False)["frame"]  # the documented map a device reads
    assert wire["__ndarray__"] == 1 and wire["dtype"] == "<f4" and wire["shape"] == [2, 3, 4]
    back = Codec("msgpack").decode(packed)
    assert back["t"] == 3 and back["frame"].dtype == np.float32 and np.array_equal(back["frame"], frame)
    assert Codec("json").decode(Codec("json").encode({"a": [1, 2], "v": np.int64(5)})) == {"a": [1, 2], "v": 5}
    assert Codec("json").encode(np.array([1.5, 2.0])) == b"[1.5,2.0]"
    img = np.arange(18, dtype=np.uint8)
    raw = Codec("raw", np.dtype("uint8"), (2, 3, 3))
    assert raw.encode(img) == img.tobytes() and raw.decode(img.tobytes()).shape == (2, 3, 3)
    assert Codec("text").decode(Codec("text").encode(21.5)) == "21.5"
    for codec, body in [("json", b"\x00"), ("json", float("nan")), ("text", {"a": 1}), ("raw", 3)]:
        with pytest.raises(CodecError):
            Codec(codec).encode(body)
    with pytest.raises(CodecError, match="do not fit shape"):
        raw.decode(b"\x00" * 17)
    with pytest.raises(CodecError, match="not JSON"):
        Codec("json").decode(b"{oops")


@pytest.mark.parametrize("params, message", [
    ({"publish": {"cmd": "r/cmd"}, "codec": "jsn"},
     "bridge.params.codec: unknown value 'jsn'; allowed: json, msgpack, raw, text (did you mean 'json'?)"),
    ({"publish": {"cmd": {"topic": "r/cmd", "qos": 3}}}, "bridge.params.publish.cmd.qos: unknown value 3; allowed: 0, 1, 2"),
    ({"publish": {"cmd": "r/+/cmd"}}, "bridge.params.publish.cmd.topic: 'r/+/cmd' has a wildcard"),
    ({"subscribe": {"r/#/x": "state"}}, "bridge.params.subscribe: filter 'r/#/x': '#' must be a whole level and the last"),
    ({"subscribe": {"r/img": {"output": "img", "dtype": "uint8"}}}, "set codec: raw there"),
    ({"hots": "x", "publish": {"cmd": "r/cmd"}}, "bridge.params.hots: unknown key 'hots'; allowed: host, port, client_id"),
    ({"hots": "x", "publish": {"cmd": "r/cmd"}}, "(did you mean 'host'?)"),
    ({"port": 70000, "publish": {"cmd": "r/cmd"}},
     "bridge.params.port: must be less than or equal to 65535, got 70000; allowed: >= 1 and <= 65535"),
    ({}, "bridge.params: publish and subscribe are both empty"),
])
def test_bad_params_name_the_key_and_the_allowed_values(tmp_path, params, message):
    path = tmp_path / "bridge.yaml"
    path.write_text(json.dumps({"nodes": [{"id": "bridge", "uses": "mqtt.bridge", "params": params}]}))
    with pytest.raises(LaunchError) as err:
        load(path, node_class=load_node_class)
    assert message in str(err.value)
    assert str(err.value).startswith(f"{path}:1:")  # where the value was written


def test_a_bad_param_stops_the_launcher_before_any_process_starts():
    r = launch("validate", "robot_mqtt.yaml", "--set", "bridge.subscribe={rover1/state: {output: state, codec: xml}}")
    assert r.returncode == 2
    out = " ".join((r.stdout + r.stderr).split())
    assert ("robot_mqtt.yaml: nodes.bridge.params.subscribe.rover1/state.codec: unknown value 'xml' "
            "(from --set bridge.subscribe); allowed: json, msgpack, raw, text") in out


# --- the bridge against a real broker --------------------------------------------------------

@needs_broker
async def test_bus_to_mqtt_and_mqtt_to_bus(broker: Mosquitto):
    params = {
        "port": broker.port, "codec": "json",
        "publish": {"cmd": "t/cmd", "frame": {"topic": "t/frame", "codec": "msgpack"},
                    "blob": {"topic": "t/blob", "codec": "raw"}},
        "subscribe": {"t/state": "state", "t/frame/back": {"output": "frame_back", "codec": "msgpack"},
                      "t/img": {"output": "img", "codec": "raw", "dtype": "uint8", "shape": [2, 3, 3]},
                      "t/sensors/+": {"output": "sensors", "codec": "text", "envelope": True}},
    }
    async with Harness(quiet=True) as h, aiomqtt.Client("127.0.0.1", broker.port) as client:
        await client.subscribe("t/cmd", qos=1)
        await client.subscribe("t/frame", qos=1)
        await client.subscribe("t/blob", qos=1)
        probe = await start_bridge(h, params)

        # bus -> MQTT
        await probe.publish("cmd", {"episode": "e1", "action": "forward"})
        msg = await next_message(client)
        assert msg.topic.value == "t/cmd" and json.loads(msg.payload) == {"episode": "e1", "action": "forward"}
        frame = np.random.default_rng(0).random((4, 5, 3), dtype=np.float32)
        await probe.publish("frame", frame)
        msg = await next_message(client)
        assert msg.topic.value == "t/frame"
        assert np.array_equal(Codec("msgpack").decode(msg.payload), frame)
        await probe.publish("blob", np.arange(6, dtype=np.uint16))
        msg = await next_message(client)
        assert msg.topic.value == "t/blob" and msg.payload == np.arange(6, dtype=np.uint16).tobytes()

        # MQTT -> bus, including the array back through the bus
        await client.publish("t/state", b"not json", qos=1)  # dropped and counted, nothing else breaks
        await client.publish("t/state", json.dumps({"x": 1, "done": False}), qos=1)
        assert (await asyncio.wait_for(probe.recv("state"), 5)).body == {"x": 1, "done": False}
        await client.publish("t/frame/back", msg_frame := Codec("msgpack").encode(frame), qos=1)
        back = (await asyncio.wait_for(probe.recv("frame_back"), 5)).body
        assert back.dtype == np.float32 and np.array_equal(back, frame) and len(msg_frame) > frame.nbytes
        await client.publish("t/img", bytes(range(18)), qos=1)
        img = (await asyncio.wait_for(probe.recv("img"), 5)).body
        assert img.shape == (2, 3, 3) and img.dtype == np.uint8 and img[1, 2, 2] == 17
        await client.publish("t/sensors/temp", b"21.5", qos=1)
        assert (await asyncio.wait_for(probe.recv("sensors"), 5)).body == {
            "topic": "t/sensors/temp", "payload": "21.5", "retain": False}

        stats = await probe.request("bridge", "stats", {})
        assert stats["published"] == {"cmd": 1, "frame": 1, "blob": 1}
        assert stats["errors"] == {"decode t/state": 1} and stats["reconnects"] == 0


@needs_broker
async def test_the_bridge_reconnects_after_the_broker_restarts(broker: Mosquitto):
    params = {"port": broker.port, "backoff_min": 0.05, "backoff_max": 0.3,
              "publish": {"status": {"topic": "t/status", "retain": True}}, "subscribe": {"t/state": "state"}}
    async with Harness(quiet=True) as h:
        probe = await start_bridge(h, params)
        broker.kill()  # like a crashed broker: the connection drops without a goodbye
        await wait_stats(probe, lambda s: not s["connected"])
        await probe.publish("status", {"battery": 0.5})  # waits in the outbox while the broker is away
        await wait_stats(probe, lambda s: s["outbox"] == 1)
        await asyncio.sleep(0.5)  # a few failed attempts, with backoff
        broker.start()
        await broker.wait_ready()
        stats = await wait_stats(probe, lambda s: s["connected"] and s["outbox"] == 0)
        assert stats["reconnects"] == 1 and stats["failed_attempts"] >= 1 and stats["published"] == {"status": 1}

        async with aiomqtt.Client("127.0.0.1", broker.port) as client:
            await client.subscribe("t/status", qos=1)  # retained by the broker: delivered on subscribe
            msg = await next_message(client)
            assert json.loads(msg.payload) == {"battery": 0.5}
            await client.publish("t/state", b'{"ok": true}', qos=1)  # the bridge subscribed again
            assert (await asyncio.wait_for(probe.recv("state"), 5)).body == {"ok": True}

        log = (h.run_dir / "logs" / "bridge.log").read_text()
        assert f"lost the MQTT broker at 127.0.0.1:{broker.port}" in log
        assert f"cannot reach the MQTT broker at 127.0.0.1:{broker.port}" in log
        assert "(reconnect #1)" in log


# --- the rover device and the robot graph ------------------------------------------------------

def test_rover_worlds_are_solvable_and_commands_are_idempotent():
    for seed in range(30):
        rover = Rover.generate("e", seed)
        plan = shortest_plan(rover.state())
        assert plan is not None and 0 < len(plan) <= rover.battery
        assert Rover.generate("e", seed).state() == rover.state()  # same seed, same world
        for action in plan:
            rover.apply(action)
        assert rover.reached and rover.done
    device = Device()
    first = device.handle("reset", b'{"episode": "e", "seed": 1}')
    assert device.handle("reset", b'{"episode": "e", "seed": 1}') == first  # a resent reset changes nothing
    one = device.handle("cmd", b'{"episode": "e", "t": 0, "action": "left"}')
    assert one["t"] == 1 and one["battery"] == first["battery"] - 1
    assert device.handle("cmd", b'{"episode": "e", "t": 0, "action": "left"}') == one  # a repeat is not applied
    assert device.handle("cmd", b'{"episode": "other", "t": 1, "action": "left"}') is None
    assert device.handle("cmd", b"garbage") is None


@needs_broker
def test_launch_robot_mqtt_plays_two_episodes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    port = free_port()
    monkeypatch.setenv("MQTT_PORT", str(port))
    out = tmp_path / "run"
    r = launch("run", "robot_mqtt.yaml", "--episodes", "2", "--out", str(out), timeout=90)
    assert r.returncode == 0, r.stdout + r.stderr
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert [rec["status"] for rec in records] == ["completed", "completed"]
    assert all(rec["metrics"]["success"] == 1.0 for rec in records)  # the scripted agent reaches every goal
    summary = json.loads((out / "summary.json").read_text())
    steps = sum(rec["metrics"]["steps"] for rec in records)
    assert summary["mqtt"]["published"] >= steps + 2 and summary["mqtt"]["received"] >= steps + 2
    assert summary["mqtt"]["errors"] == 0
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):  # the broker went away with the graph
        s.connect(("127.0.0.1", port))
