"""A graph across two hosts: two Linux network namespaces joined by a veth link (198.18.0.1 and
198.18.0.2, RFC 2544's test range, addresses that exist only inside them), a Ray head in one and a
Ray worker in the other, set up and torn down by ``scripts/two_hosts.sh`` as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, launch_env
from tests.tiers import uses

SCRIPT = ROOT / "scripts" / "two_hosts.sh"


def _why_not() -> str | None:
    try:
        import ray  # noqa: F401
    except ImportError:
        return "the 'ray' package is not installed (pip install ray)"
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    if shutil.which("ip") is None:
        return "iproute2's ip command is missing (apt-get install iproute2)"
    return None


# Each test starts a Ray head and worker (tens of seconds on a loaded 2-core machine) before its own
# work, and pytest-timeout counts the fixture: the suite's 120 s default leaves too little.
pytestmark = [pytest.mark.skipif(_why_not() is not None, reason=str(_why_not())), pytest.mark.timeout(300)]


def _ray_left(ray_tmp: Path) -> list[int]:
    """Processes still running from this fixture's Ray (their command line names its temp dir)."""
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(ray_tmp).encode() in (entry / "cmdline").read_bytes():
                    left.append(int(entry.name))
            except OSError:
                continue
    return left


@pytest.fixture
@uses("cluster")
def hosts():
    """Hosts A and B with a Ray head and worker; afterwards no namespace, Ray process or link is left,
    whether the test passed or not."""
    tag = f"{os.getpid() % 100000}"
    ray_tmp = Path(f"/tmp/fbray{tag}")  # Ray's socket paths under it must stay within AF_UNIX's 107 bytes
    env = {**launch_env(), "FB_HOST_A": f"fbA{tag}", "FB_HOST_B": f"fbB{tag}", "FB_HOST_C": f"fbC{tag}",
           "FB_SWITCH": f"fbS{tag}", "FB_RAY_TMP": str(ray_tmp),
           "FB_RAY": str(Path(sys.executable).parent / "ray"), "FB_LAUNCH": f"{sys.executable} -m kernel.tools.cli",
           "RAY_AUTH_MODE": "disabled"}
    up = subprocess.run(["bash", str(SCRIPT), "up"], env=env, capture_output=True, text=True, timeout=180)
    try:
        assert up.returncode == 0, up.stdout + up.stderr + (ray_tmp / "a.log").read_text(errors="replace")
        yield env
    finally:
        down = subprocess.run(["bash", str(SCRIPT), "down"], env=env, capture_output=True, text=True, timeout=120)
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert down.returncode == 0, down.stderr
        assert not any(env[k] in names for k in ("FB_HOST_A", "FB_HOST_B", "FB_HOST_C", "FB_SWITCH")), names
        assert not _ray_left(ray_tmp), f"Ray processes left behind: {_ray_left(ray_tmp)}"


def test_env_on_host_a_agent_and_judge_on_host_b_complete_with_curve(hosts: dict[str, str], tmp_path: Path) -> None:
    lf = tmp_path / "two.yaml"
    lf.write_text("include: [hello.yaml]\nnodes:\n"
                  "  - id: env\n    resources: {custom: {hostA: 0.1}}\n"
                  "  - id: agent\n    resources: {custom: {hostB: 0.1}}\n"
                  "  - id: judge\n    resources: {custom: {hostB: 0.1}}\n")
    out = tmp_path / "run"
    res = subprocess.run(["bash", str(SCRIPT), "run", "run", str(lf), "--backend", "ray", "--address", "198.18.0.1:6379",
                          "--episodes", "20", "--out", str(out), "--json"],
                         env=hosts, capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 20
    where = {n: v["ray"]["node_ip"] for n, v in summary["nodes"].items()}
    assert where == {"env": "198.18.0.1", "agent": "198.18.0.2", "judge": "198.18.0.2"}
    bus = summary["bus"]  # off the machine's loopback, the bus is TCP on host A's address, under CURVE
    assert bus["transport"] == "tcp" and bus["endpoint"].startswith("tcp://198.18.0.1:") and bus["curve"] is True
    assert bus["curve_refused"] == 0


def _completed(run_dir: Path) -> int:
    db = run_dir / "results.sqlite"
    if not db.exists():
        return 0
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return con.execute("SELECT count(*) FROM episodes WHERE status = 'completed'").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        con.close()


def _run_through_fault(hosts: dict[str, str], tmp_path: Path, lf: Path, episodes: int, fault) -> Path:
    """``launch run`` of ``lf`` on the hosts; once 20 episodes are done, ``fault()``; the run must then
    complete. Returns the run folder."""
    from tests.helpers import wait_until

    out = tmp_path / "run"
    log = (tmp_path / "launch.out").open("w")
    proc = subprocess.Popen(["bash", str(SCRIPT), "run", "run", str(lf), "--backend", "ray", "--address",
                             "198.18.0.1:6379", "--episodes", str(episodes), "--out", str(out)],
                            env=hosts, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    said = tmp_path / "launch.out"
    try:
        # Ray's placing and start of the three actors is most of a loaded machine's wait (a second
        # each when quiet; CI saw over two minutes beside the model tests): its own allowance, the
        # backend's placement timeout and more, before the episodes' own
        assert wait_until(lambda: "nodes ready" in said.read_text() or proc.poll() is not None, 240, 0.5), \
            _what_happened(said, out)
        assert wait_until(lambda: _completed(out) >= 20 or proc.poll() is not None, 120, 0.5), _what_happened(said, out)
        assert proc.poll() is None, _what_happened(said, out)
        before = _completed(out)
        fault()
        assert proc.wait(timeout=400) == 0, _what_happened(said, out)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    assert before < episodes, "the run ended before the fault: make it longer"
    return out


def _what_happened(said: Path, out: Path) -> str:
    """What launch printed, the episodes done, and each node's log's tail: a failure's evidence."""
    logs = sorted((out / "logs").glob("*.log")) if (out / "logs").is_dir() else []
    tails = "".join(f"\n--- {p.name}:\n{p.read_text(errors='replace')[-800:]}" for p in logs)
    return f"{said.read_text()[-3000:]}\n[{_completed(out)} episodes completed]{tails}"


def _blip(hosts: dict[str, str], seconds: int):
    """The fault: host A's link down for ``seconds``."""
    import time

    def fault() -> None:
        t = time.monotonic()
        blip = subprocess.run(["bash", str(SCRIPT), "blip", str(seconds)], env=hosts, capture_output=True,
                              text=True, timeout=seconds + 30)
        assert blip.returncode == 0, blip.stderr
        assert time.monotonic() - t >= seconds
    return fault


@pytest.mark.timeout(600)  # the hosts' start, Ray's placing on a loaded machine, the fault, the rest
def test_a_five_second_partition_costs_time_not_nodes_or_scores(hosts: dict[str, str], tmp_path: Path) -> None:
    """The link between the hosts goes down for 5 s mid-run. Nodes bear the silence (bus.grace, 30 s),
    the env's lockstep deadline (2 s here, default action `stay`) is not applied to the agent that is
    merely cut off, so every episode scores as without the blip (hello's rule agent: 100), with no
    restart, and the env's clock counts the stall."""
    lf = tmp_path / "two.yaml"
    lf.write_text("include: [hello.yaml]\nnodes:\n"  # a 2 s deadline: the 5 s blip surely outlasts it
                  "  - id: env\n    resources: {custom: {hostA: 0.1}}\n"
                  "    clock: {mode: lockstep, deadline: 2.0, default_action: stay}\n"
                  "  - id: agent\n    resources: {custom: {hostB: 0.1}}\n"
                  "  - id: judge\n    resources: {custom: {hostB: 0.1}}\n")
    out = _run_through_fault(hosts, tmp_path, lf, 400, _blip(hosts, 5))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 400, summary["reason"]
    assert all(n["restarts"] == 0 and n["exit_code"] == 0 for n in summary["nodes"].values()), summary["nodes"]
    clock = summary["nodes"]["env"]["clock"]
    assert clock["timeouts"] == 0 and clock["stalls"] >= 1 and clock["stalled_s"] > 1.0, clock
    import sqlite3

    con = sqlite3.connect(out / "results.sqlite")
    scores = [v for (v,) in con.execute("SELECT value FROM metrics WHERE key = 'score'")]
    retries = [r for (r,) in con.execute("SELECT retries FROM episodes")]
    con.close()
    assert len(scores) == 400 and set(scores) == {100.0} and set(retries) == {0}


OUTSIDER = """
import faulthandler, json, sys, time, zmq
faulthandler.dump_traceback_later(60, exit=True)  # a hang shows where, in the test's stderr
from kernel.bus import protocol
from kernel.bus.curve import KeyPair, client
kernel, inbox, server = sys.argv[1:4]
stranger = KeyPair.generate()
answers = {}
t0 = time.monotonic()
for name, endpoint, dst, kind, topic in [
        ("register", kernel, "kernel", protocol.CTL, "hello"),      # join the graph as its agent
        ("stop", kernel, "kernel", protocol.REQ, "ctl.stop"),       # stop the run
        ("status", kernel, "kernel", protocol.REQ, "status"),       # read what runs
        ("data", inbox, "env", protocol.DATA, "action"),            # feed the env an action
]:
    for keys in (None, stranger):
        what = f"{name}/{'stranger' if keys else 'plain'}"
        print(f"{time.monotonic() - t0:7.2f}s {what}", file=sys.stderr, flush=True)
        sock = zmq.Context.instance().socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDTIMEO, 5000)
        sock.setsockopt(zmq.IDENTITY, b"agent")
        if keys is not None:
            client(sock, keys, server)
        sock.connect(endpoint)
        sock.send_multipart(protocol.encode(kind, "agent", topic, {}, dst=dst, cid=1))
        answers[what] = bool(sock.poll(1500))
        sock.close()
print(f"{time.monotonic() - t0:7.2f}s done", file=sys.stderr, flush=True)
print(json.dumps(answers), flush=True)
"""


@pytest.mark.timeout(400)  # Ray's start, the run and the outsider's eight tries, on a loaded machine
def test_an_outsider_on_the_link_can_neither_join_steer_nor_feed_the_graph(hosts: dict[str, str],
                                                                         tmp_path: Path) -> None:
    """Host C is on the same link but in no cluster. Without the run's keys, plain or with a key of its
    own (and the server's public key, which is no secret), it gets no answer from the kernel or an
    inbox: not as a node saying hello, not a stop, not a status, not a data message. The run is still
    going after all of that (its stop comes from the run's own `launch ctl stop`), and its summary
    counts the refused handshakes.

    The run has more episodes than it can play in the test's time: a run of fixed length could end
    before a slow outsider reached it, and its stop would then prove nothing."""
    from tests.helpers import announced, wait_until

    lf = tmp_path / "two.yaml"
    lf.write_text("include: [hello.yaml]\nnodes:\n"
                  "  - id: env\n    resources: {custom: {hostA: 0.1}}\n"
                  "  - id: agent\n    resources: {custom: {hostB: 0.1}}\n    params: {think_s: 0.02}\n"
                  "  - id: judge\n    resources: {custom: {hostB: 0.1}}\n")
    out = tmp_path / "run"
    log = (tmp_path / "launch.out").open("w")
    proc = subprocess.Popen(["bash", str(SCRIPT), "run", "run", str(lf), "--backend", "ray", "--address",
                             "198.18.0.1:6379", "--episodes", "100000", "--out", str(out)],
                            env=hosts, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    try:
        assert wait_until(lambda: _completed(out) >= 5, 120, 0.5), (tmp_path / "launch.out").read_text()[-3000:]
        info = announced(out)
        assert info is not None
        status = subprocess.run(["bash", str(SCRIPT), "run", "ctl", "status", "--run", str(out)], env=hosts,
                                capture_output=True, text=True, timeout=60)
        assert status.returncode == 0, status.stderr
        inbox = json.loads(status.stdout)["nodes"]["env"]["inbox"]
        assert inbox.startswith("tcp://198.18.0.1:")
        res = subprocess.run(["bash", str(SCRIPT), "on", "C", sys.executable, "-c", OUTSIDER, info["endpoint"], inbox,
                              info["curve"]["server"]], env=hosts, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr[-3000:]
        answers = json.loads(res.stdout)
        assert answers and not any(answers.values()), answers
        # the outsider's ctl.stop did nothing: the run still plays
        before = _completed(out)
        assert wait_until(lambda: proc.poll() is None and _completed(out) > before + 1, 60, 0.5), \
            (tmp_path / "launch.out").read_text()[-3000:]
        stop = subprocess.run(["bash", str(SCRIPT), "run", "ctl", "stop", "--run", str(out)], env=hosts,
                              capture_output=True, text=True, timeout=60)
        assert stop.returncode == 0, stop.stderr
        assert proc.wait(timeout=120) == 0, (tmp_path / "launch.out").read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "stopped" and summary["episodes"]["failed"] == 0, summary["episodes"]
    assert summary["bus"]["curve"] is True
    # the stranger's key reached the kernel's key check three times (register, stop, status); at the
    # env's inbox it did not get that far (each inbox has its own server key, which C does not know)
    assert summary["bus"]["curve_refused_by"] == {"kernel": 3}, summary["bus"]
    assert not summary["stats"]["decode_errors"]


PLACED = """\
nodes:
  - group: w
    replicas: 2
    nodes:
      - id: env
        uses: hello.env
        params: {length: 8, max_steps: 20}
        inputs: {action: agent/action}
        clock: {mode: lockstep, deadline: 5.0, default_action: stay}
        placement: {spread: true}
      - id: agent
        uses: hello.agent
        inputs: {obs: {from: env/obs, policy: latest}}
        placement: {host: hostA}
  - id: judge
    uses: hello.judge
    inputs: {step: {from: env/step, policy: block, size: 64}}
    placement: {host: HOST, soft: true}
"""


def test_placement_puts_each_node_where_validate_said_it_would(hosts: dict[str, str], tmp_path: Path) -> None:
    """Nodes placed by name (host A's and B's custom resources), and copies spread over both hosts:
    `launch validate --address` says where each lands without starting anything, the run puts them
    exactly there, and a host the cluster lacks is refused at its line, before anything starts."""
    import re

    def launch_on_a(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(SCRIPT), "run", *args, "--backend", "ray", "--address", "198.18.0.1:6379"],
                              env=hosts, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)

    lf = tmp_path / "placed.yaml"
    lf.write_text(PLACED.replace("HOST", "hostB"))
    res = launch_on_a("validate", str(lf))
    assert res.returncode == 0, res.stderr[-3000:]
    said = dict(re.findall(r"^  (\S+)\s+(198\.18\.0\.\d) \[host[AB]\]  \(", res.stderr, re.MULTILINE))
    assert said == {"env-0": "198.18.0.1", "agent-0": "198.18.0.1", "env-1": "198.18.0.2", "agent-1": "198.18.0.1",
                    "judge": "198.18.0.2"}, res.stderr
    assert "(2 machine(s): 198.18.0.1 [hostA], 198.18.0.2 [hostB])" in res.stderr
    assert "judge    198.18.0.2 [hostB]  (host: hostB, soft)" in res.stderr

    bad = tmp_path / "bad.yaml"
    bad.write_text(PLACED.replace("HOST", "hostC"))
    for command in ("validate", "run"):
        res = launch_on_a(command, str(bad), *(["--out", str(tmp_path / "bad-run")] if command == "run" else []))
        text = res.stderr.replace("\n", " ")
        assert res.returncode == 2, res.stderr[-3000:]
        assert "bad.yaml:18:23: nodes[1].placement.host: node 'judge': no machine of the cluster is known as " \
               "'hostC'" in text and "the cluster has 198.18.0.1 [hostA], 198.18.0.2 [hostB]" in text, text
    assert not (tmp_path / "bad-run").exists()

    out = tmp_path / "run"
    res = launch_on_a("run", str(lf), "--episodes", "10", "--out", str(out), "--json", timeout=180)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 10
    assert {n: v["ray"]["node_ip"] for n, v in summary["nodes"].items()} == said
    judge = summary["nodes"]["judge"]["ray"]
    assert judge["placement"] == {"asked": "host: hostB, soft", "planned": ["198.18.0.2"], "soft": True}
    assert len({v["ray"]["node_id"] for v in summary["nodes"].values()}) == 2


def _retry_notes(run_dir: Path) -> dict[str, str]:
    """Episode id -> the store's note of why it was played again."""
    import sqlite3

    con = sqlite3.connect(run_dir / "results.sqlite")
    try:
        return dict(con.execute("SELECT episode_id, message FROM errors WHERE kind = 'retry'").fetchall())
    finally:
        con.close()


def _episode_rows(run_dir: Path) -> list[tuple[str, int, float]]:
    import sqlite3

    con = sqlite3.connect(run_dir / "results.sqlite")
    try:
        return con.execute("SELECT e.episode_id, e.retries, m.value FROM episodes e JOIN metrics m "
                           "ON m.episode_id = e.episode_id AND m.key = 'score' ORDER BY e.idx").fetchall()
    finally:
        con.close()


@pytest.mark.timeout(600)  # the hosts' start, Ray's placing on a loaded machine, the fault, the rest
def test_a_partition_past_the_grace_restarts_the_cut_off_nodes_and_replays_their_episode(
        hosts: dict[str, str], tmp_path: Path) -> None:
    """The link goes down for longer than bus.grace (4 s here): the agent and judge on host B are
    given up for dead and restarted when the link is back; the episode they were in is replayed from
    its start, so every episode is recorded once, scoring as without the fault (hello's rule agent:
    100), and the replay is on its record."""
    lf = tmp_path / "two.yaml"
    lf.write_text("include: [hello.yaml]\nbus: {grace: 4}\nnodes:\n"
                  "  - id: env\n    resources: {custom: {hostA: 0.1}}\n    restart: on-failure\n"
                  "    clock: {mode: lockstep, deadline: 2.0, default_action: stay}\n"
                  "  - id: agent\n    resources: {custom: {hostB: 0.1}}\n    restart: on-failure\n"
                  "  - id: judge\n    resources: {custom: {hostB: 0.1}}\n    restart: on-failure\n")
    out = _run_through_fault(hosts, tmp_path, lf, 300, _blip(hosts, 10))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 300, summary["reason"]
    nodes = summary["nodes"]
    assert nodes["agent"]["restarts"] >= 1 and nodes["judge"]["restarts"] >= 1, nodes
    assert nodes["env"]["restarts"] == 0, nodes["env"]
    _assert_each_once_as_without_the_fault_and_replayed(out, 300)


def _assert_each_once_as_without_the_fault_and_replayed(out: Path, episodes: int) -> None:
    rows = _episode_rows(out)
    assert len(rows) == episodes and len({r[0] for r in rows}) == episodes
    assert {score for _, _, score in rows} == {100.0}, [r for r in rows if r[2] != 100.0]
    replayed = {eid for eid, retries, _ in rows if retries >= 1}
    assert replayed, "the episode in flight was not replayed"
    notes = _retry_notes(out)  # the fault is on the replayed episode's record
    assert replayed <= set(notes) and all("died mid-episode" in notes[e] for e in replayed), notes


def _processes_of(netns: str) -> list[int]:
    """Every process in a network namespace: a host's Ray and the node processes it runs."""
    out = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


@pytest.mark.timeout(600)  # the hosts' start, Ray's placing on a loaded machine, the fault, the rest
def test_a_lost_host_s_nodes_come_back_on_the_other_and_replay_their_episode(
        hosts: dict[str, str], tmp_path: Path) -> None:
    """Host B dies mid-run: every process on it (its raylet, Ray's workers, the nodes) is killed at
    once. The agent and judge there asked for host B softly, so they are restarted on host A; the
    episode in flight is replayed from its start, and every episode is recorded once, scoring as
    without the fault."""
    import signal

    lf = tmp_path / "two.yaml"
    lf.write_text("include: [hello.yaml]\nbus: {grace: 4}\nnodes:\n"
                  "  - id: env\n    placement: {host: hostA}\n    restart: on-failure\n"
                  "  - id: agent\n    placement: {host: hostB, soft: true}\n    restart: on-failure\n"
                  "  - id: judge\n    placement: {host: hostB, soft: true}\n    restart: on-failure\n")

    def lose_host_b() -> None:
        on_b = _processes_of(hosts["FB_HOST_B"])
        assert on_b, "nothing runs on host B"
        for pid in on_b:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    out = _run_through_fault(hosts, tmp_path, lf, 300, lose_host_b)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 300, summary["reason"]
    nodes = summary["nodes"]
    assert {n: v["ray"]["node_ip"] for n, v in nodes.items()} == {n: "198.18.0.1" for n in nodes}, nodes
    assert nodes["agent"]["restarts"] >= 1 and nodes["judge"]["restarts"] >= 1 and nodes["env"]["restarts"] == 0
    _assert_each_once_as_without_the_fault_and_replayed(out, 300)


RESULTS = """\
name: walk
nodes:
  - id: env
    uses: tests.nodes_frames:FramedHelloEnv
    params: {length: 8, max_steps: 20, frames: true, target: 4}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 10.0, default_action: stay}
    placement: {host: hostA}
  - id: agent
    uses: agent.llm
    params: {model: model, template: hello, images: false}
    inputs: {obs: {from: env/obs, policy: latest}}
    placement: {host: hostB}
  - id: model
    uses: tests.nodes_frames:LineModel
    placement: {host: hostB}
  - id: judge
    uses: tests.nodes_frames:PictureJudge
    inputs: {step: {from: env/step, policy: block, size: 64}}
    placement: {host: hostB}
run: {episodes: 3, seed: 0}
"""


def test_results_of_nodes_on_host_b_reach_the_run_folder_on_host_a_over_the_bus(hosts: dict[str, str],
                                                                                tmp_path: Path) -> None:
    """agent.llm (step records), its model and a judge that keeps pictures run on host B, the
    environment on A, under --record and --trace file. Afterwards the run folder on A has B's step
    records (table and lines), pictures, trace spans and log lines, shipped over the bus and written
    by the kernel (the namespaces share one filesystem: the nodes on B counted what they shipped, the
    kernel what it took, and the folder B's nodes saw as their run folder holds none of it), and the
    recording, made by a recorder that --backend ray put on A by itself."""
    import sqlite3

    from kernel.sdk.media import read_sets
    from kernel.tools.record import read_recording

    lf = tmp_path / "walk.yaml"
    lf.write_text(RESULTS)
    out = tmp_path / "run"
    res = subprocess.run(["bash", str(SCRIPT), "run", "run", str(lf), "--backend", "ray", "--address", "198.18.0.1:6379",
                          "--record", "--trace", "file", "--out", str(out), "--json"],
                         env=hosts, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 3, summary["reason"]
    nodes = summary["nodes"]
    assert {n: v["ray"]["node_ip"] for n, v in nodes.items()} == {
        "env": "198.18.0.1", "agent": "198.18.0.2", "model": "198.18.0.2", "judge": "198.18.0.2",
        "recorder": "198.18.0.1"}
    assert nodes["recorder"]["ray"]["placement"]["asked"] == "the launching machine"
    assert {n: v["results"]["via"] for n, v in nodes.items()} == {
        "env": "local", "recorder": "local", "agent": "bus", "model": "bus", "judge": "bus"}

    # step records: every one agent.llm made, in the table and in steps/agent.jsonl
    agent = nodes["agent"]["results"]
    con = sqlite3.connect(out / "results.sqlite")
    rows = con.execute("SELECT episode_id, t FROM steps WHERE node = 'agent' ORDER BY rowid").fetchall()
    con.close()
    lines = (out / "steps" / "agent.jsonl").read_text().splitlines()
    assert len(rows) == len(lines) == agent["sent"]["sent"]["step"] == agent["received"]["step"] >= 12
    assert {e for e, _ in rows} == {"ep00000", "ep00001", "ep00002"}
    assert all(json.loads(line)["sent"] in ("right", "left", "stay") for line in lines)
    # pictures: the judge's, one set per episode, with their files
    judge = nodes["judge"]["results"]
    sets = [s for s in read_sets(out) if s["node"] == "judge"]
    assert len(sets) == 3 == judge["received"]["media"] == judge["sent"]["sent"]["media"]
    assert all((out / p["path"]).is_file() for s in sets for p in s["pictures"])
    # trace spans and log lines of the nodes on B, beside those of the nodes on A
    assert agent["received"]["trace"] >= 12 and (out / "traces" / "agent.jsonl").stat().st_size > 0
    assert (out / "traces" / "env.jsonl").stat().st_size > 0
    scored = [json.loads(x) for x in (out / "logs" / "judge.jsonl").read_text().splitlines()]
    assert [x["episode"] for x in scored if x["event"] == "scored"] == ["ep00000", "ep00001", "ep00002"]
    assert (out / "logs" / "judge.log").stat().st_size > 0  # the console lines, relayed by the actor
    for node in ("agent", "model", "judge"):
        sent = nodes[node]["results"]["sent"]
        assert not sent["dropped"] and not sent["refused"] and not sent["lost"], (node, sent)
        own = Path(sent["own_dir"])  # what the node saw as its run folder: none of the results are there
        assert not own.exists() or not [p for p in own.rglob("*") if p.is_file()], (node, list(own.rglob("*")))
    assert not summary["stats"]["decode_errors"]
    # the recording, written on A by the recorder placed there
    rec = read_recording(out / "recording.mcap")
    assert rec.complete and {"env/obs", "agent/action", "env/step", "env/obs/frame"} <= set(rec.topics)
    assert len(rec.on("env/step")) == len(rows) and rec.attachments.get("episodes.jsonl")


@pytest.mark.timeout(600)  # the server's start on 2 cores, beside the hosts
def test_the_embedded_model_server_on_host_b_serves_the_agent_there(hosts: dict[str, str], tmp_path: Path) -> None:
    """hello_local.yaml as shipped, with its environment on host A and the agent, the embedded model
    server (SmolLM2-135M on vLLM's CPU build, started by the model node) and the judge on host B."""
    if not (ROOT / ".venv-model" / "bin" / "python").exists():
        pytest.skip("the embedded model's .venv-model is missing (bash setup.sh builds it)")
    lf = tmp_path / "local.yaml"
    lf.write_text("include: [hello_local.yaml]\nnodes:\n"
                  "  - id: env\n    placement: {host: hostA}\n"
                  "  - id: model\n    placement: {host: hostB}\n"
                  "  - id: agent\n    placement: {host: hostB}\n"
                  "  - id: judge\n    placement: {host: hostB}\n")
    out = tmp_path / "run"
    res = subprocess.run(["bash", str(SCRIPT), "run", "run", str(lf), "--backend", "ray", "--address", "198.18.0.1:6379",
                          "--episodes", "2", "--out", str(out), "--json"],
                         env=hosts, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["episodes"]["completed"] == 2, summary["reason"]
    assert {n: v["ray"]["node_ip"] for n, v in summary["nodes"].items()} == {
        "env": "198.18.0.1", "model": "198.18.0.2", "agent": "198.18.0.2", "judge": "198.18.0.2"}
    records = [json.loads(s) for s in (out / "steps" / "agent.jsonl").read_text().splitlines()]
    # every decision is the model's answer (tokens decoded by the server on B), shipped home
    assert records and all(r["usage"]["completion_tokens"] > 0 and r["latency_s"] > 0 for r in records), records[:1]
