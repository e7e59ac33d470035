"""CurveZMQ on the bus: a protected run works, and peers without the run's keys get nothing in or out."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
import zmq
import zmq.auth
from zmq.utils.monitor import recv_monitor_message

from kernel.bus import protocol
from kernel.bus.curve import ENV_PUBLIC, ENV_SECRET, ENV_SERVER, KeyPair, client
from kernel.bus.protocol import REQ
from kernel.graph.keys import RunKeys, curve_wanted, open_loopback
from kernel.launchfile import BusSpec, CurveSpec, LaunchError
from kernel.tools.announce import folder as announce_folder
from tests.helpers import LONG_HELLO, announced, launch, launch_bg, wait_until

CURVE = ["--set", "bus.transport=tcp", "--set", "bus.curve=true"]
FAILED_HANDSHAKES = {zmq.EVENT_HANDSHAKE_FAILED_AUTH, zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL,
                     zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL}


def test_a_curve_protected_tcp_run_completes(tmp_path: Path) -> None:
    res = launch("run", "hello.yaml", *CURVE, "--episodes", "3", "--out", str(tmp_path / "run"), "--json",
                 cwd=tmp_path, timeout=90)
    assert res.returncode == 0, res.stderr[-3000:]
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 3
    assert all(n["exit_code"] == 0 for n in summary["nodes"].values())
    assert "curve: true" in (tmp_path / "run" / "launch.yaml").read_text()
    bus = summary["bus"]  # how the messages travelled, for a reader of a multi-host run
    assert bus["transport"] == "tcp" and bus["curve"] is True and bus["endpoint"].startswith("tcp://127.0.0.1:")
    assert bus["curve_refused"] == 0


def _ask(endpoint: str, dst: str, keys: tuple[KeyPair, str] | None, wait_s: float = 1.5) -> tuple[object, set[int]]:
    """Send one request as a raw pyzmq DEALER; return the answer (None if none came) and the handshake events."""
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.IDENTITY, b"curve-probe")
    sock.setsockopt(zmq.LINGER, 0)
    if keys is not None:
        client(sock, keys[0], keys[1])
    monitor = sock.get_monitor_socket(zmq.EVENT_ALL)
    try:
        sock.connect(endpoint)
        sock.send_multipart(protocol.encode(REQ, "curve-probe", "status" if dst == "kernel" else "no.such.service",
                                            {}, dst=dst, cid=1))
        answer = protocol.decode(sock.recv_multipart()).kind if sock.poll(int(wait_s * 1000)) else None
        events: set[int] = set()
        while monitor.poll(100):
            events.add(recv_monitor_message(monitor)["event"])
        return answer, events
    finally:
        sock.disable_monitor()
        monitor.close(linger=0)
        sock.close(linger=0)


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode(errors="replace").split("=", 1) for item in raw if b"=" in item)


def test_peers_without_the_runs_keys_are_refused_and_the_run_goes_on(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = launch_bg("run", *LONG_HELLO, *CURVE, "--set", "agent.think_s=0.02", "--out", str(run_dir), cwd=tmp_path)
    try:
        status: dict = {}

        def running() -> bool:
            nonlocal status
            res = launch("ctl", "status", "--run", str(run_dir))  # launch ctl uses the announced keys
            if res.returncode != 0:
                return False
            status = json.loads(res.stdout)
            return status["started"] and all(n["pid"] for n in status["nodes"].values())

        assert wait_until(running, 60, 0.5), proc.output()
        assert status["curve"] is True
        info = announced(run_dir)
        assert info is not None and set(info["curve"]) == {"server", "public", "secret"}
        announcement = announce_folder() / f"{info['pid']}.json"
        assert stat.S_IMODE(announcement.stat().st_mode) == 0o600, "the announcement holds a secret key"

        kernel_ep, env_inbox = status["endpoint"], status["nodes"]["env"]["inbox"]
        env_keys, agent_keys = _environ(status["nodes"]["env"]["pid"]), _environ(status["nodes"]["agent"]["pid"])
        agent = KeyPair(agent_keys[ENV_PUBLIC], agent_keys[ENV_SECRET])
        stranger = KeyPair.generate()

        # The kernel: its own ctl key is answered; no keys, unknown keys, or a wrong server key are not.
        ctl = info["curve"]
        assert _ask(kernel_ep, "kernel", (KeyPair(ctl["public"], ctl["secret"]), ctl["server"]))[0] == "rep"
        answer, events = _ask(kernel_ep, "kernel", None)
        assert answer is None and events & FAILED_HANDSHAKES and zmq.EVENT_HANDSHAKE_SUCCEEDED not in events
        answer, events = _ask(kernel_ep, "kernel", (stranger, ctl["server"]))
        assert answer is None and zmq.EVENT_HANDSHAKE_FAILED_AUTH in events, events
        answer, events = _ask(kernel_ep, "kernel", (agent, KeyPair.generate().public))
        assert answer is None and zmq.EVENT_HANDSHAKE_SUCCEEDED not in events

        # A node's inbox: a fellow node's key is answered; the others are not.
        assert _ask(env_inbox, "env", (agent, env_keys[ENV_PUBLIC]))[0] == "err"  # UnknownService: it got through
        answer, events = _ask(env_inbox, "env", None)
        assert answer is None and events & FAILED_HANDSHAKES and zmq.EVENT_HANDSHAKE_SUCCEEDED not in events
        answer, events = _ask(env_inbox, "env", (stranger, env_keys[ENV_PUBLIC]))
        assert answer is None and zmq.EVENT_HANDSHAKE_FAILED_AUTH in events, events
        assert env_keys[ENV_SERVER] == ctl["server"]

        before = status["episodes"]["completed"]
        assert wait_until(lambda: running() and status["episodes"]["completed"] > before + 1, 30, 0.5)
        assert launch("ctl", "stop", "--run", str(run_dir)).returncode == 0
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["episodes"]["failed"] == 0
    assert all(n["restarts"] == 0 and n["exit_code"] == 0 for n in summary["nodes"].values())
    assert not summary["stats"]["decode_errors"]  # nothing the strangers sent ever reached a node
    # the stranger's key was refused by the kernel and by the env (the handshakes without a key or
    # with a wrong server key fail before a key is offered, so only these two are counted)
    assert summary["bus"]["curve"] is True and summary["bus"]["curve_refused_by"] == {"kernel": 1, "env": 1}
    secrets = {env_keys[ENV_SECRET], agent_keys[ENV_SECRET], ctl["secret"]}
    for path in run_dir.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert not any(s.encode() in text for s in secrets), f"a secret key was written to {path}"


def test_the_curve_rule() -> None:
    assert not curve_wanted(BusSpec())
    assert curve_wanted(BusSpec(transport="tcp"))  # loopback too: every local user can reach it
    assert curve_wanted(BusSpec(transport="tcp", host="localhost", insecure=True))  # insecure alone opts out of nothing
    opted_out = BusSpec(transport="tcp", curve=False)  # the one way to an open loopback bus, which launch run warns of
    assert not curve_wanted(opted_out) and open_loopback(opted_out) and RunKeys.create(opted_out, ["a"]) is None
    assert not open_loopback(BusSpec(transport="tcp", host="10.1.2.3", curve=False, insecure=True))
    assert curve_wanted(BusSpec(transport="tcp", host="10.1.2.3"))
    assert curve_wanted(BusSpec(transport="tcp", host="0.0.0.0"))
    assert curve_wanted(BusSpec(transport="tcp", curve=True))
    assert not curve_wanted(BusSpec(transport="tcp", host="10.1.2.3", curve=False, insecure=True))
    keys = RunKeys.create(BusSpec(transport="tcp", host="10.1.2.3"), ["a", "b"])
    assert keys is not None and set(keys.nodes) == {"a", "b"}
    env = keys.node_env("a")
    assert env[ENV_SECRET] == keys.nodes["a"].secret and keys.nodes["b"].public in env["FRAMEBUS_CURVE_CLIENTS"]
    assert keys.control.public not in env["FRAMEBUS_CURVE_CLIENTS"]  # launch ctl talks to the kernel only


def test_open_tcp_without_curve_needs_an_explicit_opt_out(tmp_path: Path) -> None:
    args = ["validate", "hello.yaml", "--set", "bus.transport=tcp", "--set", "bus.host=10.1.2.3",
            "--set", "bus.curve=false"]
    res = launch(*args, cwd=tmp_path)
    assert res.returncode == 2 and "insecure: true" in res.stderr and "bus" in res.stderr
    assert launch(*args, "--set", "bus.insecure=true", cwd=tmp_path).returncode == 0


def test_fixed_keys_come_from_a_certificate_folder(tmp_path: Path) -> None:
    zmq.auth.create_certificates(tmp_path, "server")
    zmq.auth.create_certificates(tmp_path, "operator")
    keys = RunKeys.create(BusSpec(transport="tcp", curve=CurveSpec(keys=str(tmp_path))), ["a"])
    assert keys is not None
    assert keys.kernel.public.encode() == zmq.auth.load_certificate(tmp_path / "server.key")[0]
    assert keys.extra_clients == [zmq.auth.load_certificate(tmp_path / "operator.key")[0].decode()]
    assert keys.extra_clients[0] in keys.node_env("a")["FRAMEBUS_CURVE_CLIENTS"]
    with pytest.raises(LaunchError, match="create_certificates"):
        RunKeys.create(BusSpec(transport="tcp", curve=CurveSpec(keys=str(tmp_path / "none"))), ["a"])
