"""Local trust of run announcements, and what a SIGKILLed launcher leaves behind (real processes).

Every test points XDG_RUNTIME_DIR at its own folder, so it sees only the runs it started.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kernel.bus.shm import shm_dir
from tests.helpers import LAUNCH, LONG_HELLO, alive, announced, children_of, launch_env, wait_until

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another uid needs root")


def _env(**extra: str) -> dict[str, str]:
    return {**launch_env(), **extra}


def _launch(*args: str, cwd: Path, timeout: float = 60,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*LAUNCH, *args], cwd=cwd, env=env or _env(), capture_output=True, text=True,
                          timeout=timeout)


def _start(run_dir: Path, log: Path, *, hold: bool = False) -> subprocess.Popen:
    """A long hello run with its output in ``log`` (a pipe nobody reads could stall it).

    With ``hold`` the process first waits for a line on stdin and only then execs the launcher,
    keeping its pid: the test knows the launcher's pid before the launcher writes anything.
    """
    argv = [*LAUNCH, "run", *LONG_HELLO, "--out", str(run_dir)]
    if hold:
        argv = [sys.executable, "-c", "import os, sys; sys.stdin.readline(); os.execv(sys.argv[1], sys.argv[1:])",
                *argv]
    with log.open("w") as out:
        return subprocess.Popen(argv, cwd=run_dir.parent, env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.PIPE if hold else subprocess.DEVNULL)


def _status(run_dir: Path) -> dict | None:
    res = _launch("ctl", "status", "--run", str(run_dir), cwd=run_dir.parent)
    if res.returncode != 0:
        return None
    status = json.loads(res.stdout)
    return status if status["started"] and all(n["pid"] for n in status["nodes"].values()) else None


def _stop(proc: subprocess.Popen, run_dir: Path) -> None:
    """Stop the run by `launch ctl stop`, or kill it when that fails: no launcher outlives its test."""
    if proc.poll() is None:
        if _launch("ctl", "stop", "--run", str(run_dir), cwd=run_dir.parent).returncode != 0:
            proc.kill()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_planted_symlink_is_replaced_not_written_through(tmp_path: Path, xdg: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    run_dir = tmp_path / "run"
    proc = _start(run_dir, tmp_path / "launch.log", hold=True)
    try:
        folder = xdg / "framebus"
        folder.mkdir(mode=0o700)
        planted = folder / f"{proc.pid}.json"
        planted.symlink_to(victim)
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        proc.stdin.close()
        assert wait_until(lambda: victim.read_text() != "precious\n" or _status(run_dir) is not None, 60, 0.5), \
            (tmp_path / "launch.log").read_text()[-3000:]
        assert victim.read_text() == "precious\n", "the announcement was written through the planted symlink"
        assert not planted.is_symlink() and planted.is_file()
        assert stat.S_IMODE(planted.lstat().st_mode) == 0o600
        assert json.loads(planted.read_text())["run_dir"] == str(run_dir)
        assert [p.name for p in folder.iterdir()] == [planted.name]  # no temporary file left over
    finally:
        _stop(proc, run_dir)
    assert proc.returncode == 0, (tmp_path / "launch.log").read_text()[-3000:]
    assert not planted.exists() and victim.read_text() == "precious\n"


def _fake_announcement(path: Path, pid: int, endpoint: str, mode: int = 0o600) -> None:
    path.write_text(json.dumps({"run_id": "fake", "run_dir": "/nonexistent", "endpoint": endpoint, "pid": pid}))
    path.chmod(mode)


@needs_root
def test_launch_ctl_skips_planted_announcements_and_says_why(tmp_path: Path, xdg: Path) -> None:
    run_dir = tmp_path / "run"
    proc = _start(run_dir, tmp_path / "launch.log")
    sleepers = [subprocess.Popen(["sleep", "600"]) for _ in range(4)]  # live pids for the planted files
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert wait_until(lambda: _status(run_dir) is not None, 60, 0.5), (tmp_path / "launch.log").read_text()[-3000:]
        folder = xdg / "framebus"
        # A foreign endpoint: a listening socket owned by another user, as its kernel's would be.
        foreign = tmp_path / "foreign.sock"
        listener.bind(str(foreign))
        listener.listen()
        os.chown(foreign, NOBODY, NOBODY)
        elsewhere = tmp_path / "elsewhere.json"
        _fake_announcement(elsewhere, sleepers[0].pid, f"ipc://{foreign}")
        planted = {
            f"{sleepers[0].pid}.json": "it is a symlink",
            f"{sleepers[1].pid}.json": "it has mode 0644",
            f"{sleepers[2].pid}.json": f"it is owned by uid {NOBODY}",
            f"{sleepers[3].pid}.json": f"its endpoint {foreign} is owned by uid {NOBODY}",
        }
        (folder / f"{sleepers[0].pid}.json").symlink_to(elsewhere)
        _fake_announcement(folder / f"{sleepers[1].pid}.json", sleepers[1].pid, f"ipc://{foreign}", 0o644)
        _fake_announcement(folder / f"{sleepers[2].pid}.json", sleepers[2].pid, f"ipc://{foreign}")
        os.chown(folder / f"{sleepers[2].pid}.json", NOBODY, NOBODY)
        _fake_announcement(folder / f"{sleepers[3].pid}.json", sleepers[3].pid, f"ipc://{foreign}")
        future = time.time() + 60  # newer than the real one: `launch ctl` would pick them if it trusted them
        for name in planted:
            os.utime(folder / name, (future, future), follow_symlinks=False)

        res = _launch("ctl", "status", cwd=tmp_path)  # no --run: the newest trusted announcement
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["pid"] == proc.pid
        warnings = " ".join(res.stderr.split())  # rich may wrap long lines
        for name, why in planted.items():
            assert f"not trusting {folder / name}: {why}" in warnings, (name, res.stderr)
        assert all((folder / name).is_symlink() or (folder / name).exists() for name in planted)  # left alone

        res = _launch("stats", "--json", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        assert json.loads(res.stdout)["edges"]
    finally:
        listener.close()
        for s in sleepers:
            s.kill()
            s.wait()
        _stop(proc, run_dir)
    assert proc.returncode == 0


@pytest.mark.parametrize("problem", ["mode", "owner"])
def test_an_announcement_folder_that_is_not_private_is_refused(tmp_path: Path, xdg: Path, problem: str) -> None:
    if problem == "owner" and os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    folder = xdg / "framebus"
    folder.mkdir(mode=0o700)
    if problem == "mode":
        folder.chmod(0o777)
        expected = "has mode 0777"
    else:
        os.chown(folder, NOBODY, NOBODY)
        expected = f"is owned by uid {NOBODY}, not by you (uid {os.getuid()})"
    res = _launch("run", "hello.yaml", "--episodes", "1", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert res.returncode == 2, res.stderr[-3000:]
    message = " ".join(res.stderr.split())
    assert f"{folder}: the announcement folder {expected}" in message, res.stderr
    assert not (tmp_path / "run").exists()  # refused before anything started
    res = _launch("ctl", "status", cwd=tmp_path)
    assert res.returncode == 2 and expected in " ".join(res.stderr.split()), res.stderr


@needs_root
def test_a_temp_folder_made_first_by_another_user_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    squatted = tmp / f"framebus-{os.getuid()}"
    squatted.mkdir(mode=0o700)
    os.chown(squatted, NOBODY, NOBODY)
    env = {k: v for k, v in _env(TMPDIR=str(tmp)).items() if k != "XDG_RUNTIME_DIR"}
    res = _launch("ctl", "status", cwd=tmp_path, env=env)
    assert res.returncode == 2
    assert f"{squatted}: the announcement folder is owned by uid {NOBODY}" in " ".join(res.stderr.split()), res.stderr


def test_a_sigkilled_launcher_takes_its_nodes_and_the_next_run_cleans_up(tmp_path: Path, xdg: Path) -> None:
    run_dir = tmp_path / "run"
    log = tmp_path / "launch.log"
    proc = _start(run_dir, log)
    try:
        assert wait_until(lambda: _status(run_dir) is not None, 60, 0.5), log.read_text()[-3000:]
        info = announced(run_dir)
        assert info is not None and info["pid"] == proc.pid
        announcement = xdg / "framebus" / f"{proc.pid}.json"
        ipc_dir = Path(info["endpoint"].removeprefix("ipc://")).parent
        assert announcement.is_file() and (ipc_dir / "launcher.pid").is_file()
        kids = children_of(proc.pid)
        assert len(kids) >= 3, kids
        killed_at = time.monotonic()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_until(lambda: not any(alive(k) for k in kids), 10, 0.01), [k for k in kids if alive(k)]
        took = time.monotonic() - killed_at
        assert took < 1.0, f"nodes outlived their launcher by {took:.2f} s"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # what a SIGKILLed launcher cannot remove itself
    assert announcement.exists() and ipc_dir.is_dir()
    segment = shm_dir() / f"{ipc_dir.name}-left-behind" if shm_dir() is not None else None
    if segment is not None:
        segment.write_bytes(b"\0" * 16)
    res = _launch("run", "hello.yaml", "--episodes", "1", "--out", str(tmp_path / "next"), cwd=tmp_path, timeout=90)
    assert res.returncode == 0, res.stderr[-3000:]
    assert not announcement.exists() and not ipc_dir.exists()
    assert segment is None or not segment.exists()
    # The announcement lives in this test's own XDG folder, so this run is the one that removes it
    # and says so. The ipc folder lives in the shared /tmp, where any launcher of this user (another
    # xdist worker's, say) may have swept it first: that it is gone is what counts.
    assert f"removed {announcement}, left by a launcher that is gone" in " ".join(res.stderr.split()), res.stderr



# Another user of the machine, as the attack of issue 35 was made: zmq and msgpack only, the kernel's
# endpoint as it can be read from /proc/net/tcp; it pauses the run, ends two episodes nobody played
# with a score of 1e9 and resumes. Prints what each request got back (None: nothing within 1 s).
FORGER = r"""
import json, os, sys, time
import msgpack, zmq
endpoint, episodes = sys.argv[1], sys.argv[2].split(",")
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.setsockopt(zmq.IDENTITY, b"intruder")
sock.setsockopt(zmq.LINGER, 0)
sock.connect(endpoint)
def call(cid, topic, body):
    header = {"v": 1, "k": "req", "src": "intruder", "topic": topic, "seq": 0, "ts": time.time(), "dst": "kernel",
              "cid": cid}
    try:
        sock.send_multipart([msgpack.packb(header), msgpack.packb(body)], flags=zmq.NOBLOCK)
    except zmq.Again:
        return None
    if not sock.poll(1000):
        return None
    frames = sock.recv_multipart()
    return [msgpack.unpackb(frames[0])["k"], msgpack.unpackb(frames[1])]
answers = [call(1, "ctl.pause", {})]
answers += [call(i, "episode.end", {"episode": e, "status": "completed", "metrics": {"score": 1e9}})
            for i, e in enumerate(episodes, 2)]
answers.append(call(9, "ctl.resume", {}))
sock.close(linger=0)
ctx.term()
print(json.dumps({"uid": os.getuid(), "answers": answers}))
"""


@pytest.fixture
def forger_site() -> Iterator[str]:
    """zmq and msgpack where another user can import them: the checkout's own environment may sit in a
    folder only its owner can enter (a clone in a 0700 home, or in ``mktemp -d``), and an attacker
    brings their own copies anyway. Same interpreter, so pyzmq's compiled parts load as they are."""
    import shutil
    import tempfile

    import msgpack
    import zmq

    site = Path(tempfile.mkdtemp(prefix="fb-forger-", dir="/tmp"))
    try:
        for package in (Path(zmq.__file__).parent, Path(msgpack.__file__).parent):
            shutil.copytree(package, site / package.name)
        libs = Path(zmq.__file__).parent.parent / "pyzmq.libs"  # libzmq itself, found next to the package
        if libs.is_dir():
            shutil.copytree(libs, site / libs.name)
        for path in [site, *site.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield str(site)
    finally:
        shutil.rmtree(site, ignore_errors=True)


@needs_root
@pytest.mark.parametrize("opt_out", [False, True], ids=["curve-by-default", "curve-false-opt-out"])
def test_another_user_cannot_forge_results_over_a_loopback_tcp_bus(tmp_path: Path, xdg: Path, opt_out: bool,
                                                                   forger_site: str) -> None:
    run_dir, log = tmp_path / "run", tmp_path / "launch.log"
    args = ["run", "hello.yaml", "--set", "bus.transport=tcp", "--set", "agent.think_s=0.2", "--episodes", "6",
            "--out", str(run_dir), *(["--set", "bus.curve=false"] if opt_out else [])]
    with log.open("w") as out:
        proc = subprocess.Popen([*LAUNCH, *args], cwd=tmp_path, env=_env(), stdout=out, stderr=subprocess.STDOUT)
    try:
        # (announced before any node starts: the forger comes before the episodes it forges are played)
        assert wait_until(lambda: announced(run_dir) is not None, 60, 0.05), log.read_text()[-3000:]
        endpoint = announced(run_dir)["endpoint"]  # type: ignore[index]
        assert endpoint.startswith("tcp://127.0.0.1:")
        forger = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                                 sys.executable, "-c", FORGER, endpoint, "ep00004,ep00005"],
                                cwd="/", env={"PATH": os.environ["PATH"], "PYTHONPATH": forger_site},
                                capture_output=True, text=True, timeout=30)
        assert forger.returncode == 0, forger.stderr[-2000:]
        assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    report = json.loads(forger.stdout)
    assert report["uid"] == NOBODY
    summary = json.loads((run_dir / "summary.json").read_text())
    if opt_out:
        # an open bus, on purpose: the launcher said so; ctl is anyone's, but results are still the graph's
        assert "any local user can join it" in " ".join(log.read_text().split())
        kinds = [a[0] for a in report["answers"]]
        assert kinds == ["rep", "err", "err", "rep"], report
        assert "only nodes of this graph may call episode" in report["answers"][1][1]["error"]
        assert summary["stats"]["refused"] == {"intruder": 2} and summary["bus"]["curve"] is False
    else:
        assert report["answers"] == [None] * 4, report  # the CURVE handshake never completes
        assert summary["bus"]["curve"] is True and "refused" not in summary["stats"]
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 6
    records = [json.loads(line) for line in (run_dir / "episodes.jsonl").read_text().splitlines()]
    assert sorted(r["episode_id"] for r in records) == [f"ep{i:05d}" for i in range(6)]
    assert all(r["node"] == "env" and r["metrics"]["score"] < 1e6 for r in records), records  # all played, none forged
