"""Record and replay: `launch run --record` writes MCAP that the mcap package reads, with the launch
file in its metadata, one channel per topic and frames as foxglove.CompressedImage; `launch replay`
re-renders episodes and drives a new agent against the recorded observations."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader
from PIL import Image

from kernel.bus.protocol import Message
from kernel.tools.record import RecordingWriter, from_json, read_recording, to_json, with_recorder
from tests.helpers import LAUNCH, LONG_HELLO, ROOT, launch, launch_env, wait_until
from tests.nodes_frames import draw

FRAMES_YAML = """\
name: hello_frames
nodes:
  - id: env
    uses: tests.nodes_frames:FramedHelloEnv
    params: {length: 8, max_steps: 20, frames: true}
    inputs: {action: agent/action}
    clock: {mode: lockstep, deadline: 5.0, default_action: stay}
  - id: agent
    uses: hello.agent
    inputs: {obs: {from: env/obs, policy: latest}}
  - id: judge
    uses: hello.judge
    inputs: {step: {from: env/step, policy: block, size: 64}}
run: {episodes: 2, seed: 0}
"""


def record_run(tmp: Path, *args: str) -> Path:
    run = tmp / "run"
    result = launch("run", *args, "--record", "--out", str(run), cwd=tmp)
    assert result.returncode == 0, result.stderr
    return run


@pytest.fixture(scope="module")
def hello_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_run(tmp_path_factory.mktemp("hello"), "hello.yaml", "--episodes", "2")


@pytest.fixture(scope="module")
def frames_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("frames")
    (tmp / "frames.yaml").write_text(FRAMES_YAML)
    return record_run(tmp, "frames.yaml")


def mcap_messages(path: Path) -> tuple[dict, list[tuple[str, dict, int]]]:
    """(summary facts, [(topic, decoded JSON, sequence)]) through the mcap package's own reader."""
    with path.open("rb") as fh:
        reader = make_reader(fh)
        summary = reader.get_summary()
        assert summary is not None
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
        messages = [(ch.topic, json.loads(msg.data), msg.sequence) for _, ch, msg in reader.iter_messages()]
        channels = {c.topic: (c.message_encoding, summary.schemas[c.schema_id]) for c in summary.channels.values()}
    return {"metadata": metadata, "channels": channels}, messages


def test_recording_opens_with_the_mcap_reader(hello_run: Path) -> None:
    facts, messages = mcap_messages(hello_run / "recording.mcap")
    assert set(facts["channels"]) == {"env/obs", "env/step", "agent/action"}
    for encoding, schema in facts["channels"].values():
        assert encoding == "json" and schema.name == "framebus.Message" and schema.encoding == "jsonschema"
    launch_yaml = facts["metadata"]["framebus.launch"]["yaml"]
    assert "uses: hello.env" in launch_yaml and launch_yaml == (hello_run / "launch.yaml").read_text()

    episodes = [json.loads(line) for line in (hello_run / "episodes.jsonl").read_text().splitlines()]
    assert [e["episode_id"] for e in episodes] == ["ep00000", "ep00001"]
    by_topic: dict[str, list[dict]] = {}
    for topic, doc, _ in messages:
        by_topic.setdefault(topic, []).append(doc)
    steps = by_topic["env/step"]
    for ep in episodes:  # every step of both episodes, and their number is what the judge counted
        mine = [s["body"] for s in steps if s["body"]["episode"] == ep["episode_id"]]
        assert len(mine) == ep["metrics"]["steps"]
        assert [s["t"] for s in mine] == list(range(len(mine))) and mine[-1]["done"] and mine[-1]["info"]["reached"]
    assert len(by_topic["env/obs"]) == len(by_topic["agent/action"]) == len(steps)
    # each applied action is the one the agent sent for that step, and the obs it answered
    obs = {(o["body"]["episode"], o["step"]): o["body"] for o in by_topic["env/obs"]}
    for s in steps:
        seen = obs[(s["body"]["episode"], s["body"]["t"])]
        expected = "right" if seen["target"] > seen["position"] else "left" if seen["target"] < seen["position"] else "stay"
        assert s["body"]["action"] == expected
    assert {a["src"] for a in by_topic["agent/action"]} == {"agent"}


def test_bodies_decode_back_exactly(tmp_path: Path) -> None:
    image = np.arange(16 * 20 * 3, dtype=np.uint8).reshape(16, 20, 3)
    body = {"frame": image, "frames": [image[:, :, :1].copy(), image], "x": float("nan"), "inf": float("inf"),
            7: b"\x00\x01", "$image": "not a tag", "audio": np.linspace(0, 1, 5, dtype="<f4"),
            "mask": np.array([[True, False]]), "nested": {"t": (1, 2), "n": None}}
    writer = RecordingWriter(tmp_path / "r.mcap")
    writer.write(Message("data", "env", "obs", body, seq=3, ts=1700000000.25, step=4))
    writer.close()
    rec = read_recording(tmp_path / "r.mcap")
    assert rec.complete and set(rec.topics) == {"env/obs", "env/obs/frame", "env/obs/frames"}
    (msg,) = rec.messages
    assert (msg.topic, msg.seq, msg.step, msg.log_time) == ("env/obs", 3, 4, 1700000000250000000)
    back = msg.body()
    assert np.array_equal(back["frame"], image) and back["frame"].dtype == np.uint8
    assert back["frames"][0].shape == (16, 20, 1) and np.array_equal(back["frames"][1], image)
    assert np.isnan(back["x"]) and back["inf"] == float("inf") and back[7] == b"\x00\x01"
    assert back["$image"] == "not a tag" and back["nested"] == {"t": [1, 2], "n": None}
    assert back["audio"].dtype == np.dtype("<f4") and np.array_equal(back["audio"], body["audio"])
    assert back["mask"].dtype == bool and back["mask"].tolist() == [[True, False]]
    assert from_json(to_json(back, None)).keys() == back.keys()


def test_a_cut_recording_reads_up_to_its_last_chunk(tmp_path: Path) -> None:
    path = tmp_path / "r.mcap"
    writer = RecordingWriter(path)
    for i in range(3):
        writer.write(Message("data", "agent", "action", f"a{i}", seq=i + 1, ts=1700000000.0 + i, step=i))
    writer.flush()
    flushed = path.stat().st_size
    writer.write(Message("data", "agent", "action", "lost", seq=9, ts=1700000009.0, step=9))
    writer.close()
    cut = tmp_path / "cut.mcap"
    cut.write_bytes(path.read_bytes()[:flushed + 7])  # a torn record after the last flushed chunk
    rec = read_recording(cut)
    assert not rec.complete and [m.body() for m in rec.messages] == ["a0", "a1", "a2"]


def test_a_killed_run_leaves_a_readable_recording(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with (tmp_path / "console.txt").open("w") as console:  # a file, not a pipe nobody reads
        proc = subprocess.Popen([*LAUNCH, "run", *LONG_HELLO, "--record", "--out", str(run)], cwd=tmp_path,
                                env=launch_env(), stdout=console, stderr=subprocess.STDOUT)
    try:
        path = run / "recording.mcap"
        # the recorder closes a chunk every 2 s: wait for two of them, then kill the launcher
        assert wait_until(lambda: path.exists() and path.stat().st_size > 4000, timeout=60), \
            (tmp_path / "console.txt").read_text()[-2000:]
        first = path.stat().st_size
        assert wait_until(lambda: path.stat().st_size > first, timeout=30)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    rec = read_recording(path)
    assert not rec.complete
    assert len(rec.on("env/obs")) > 10 and rec.metadata["framebus.launch"]["recorder"] == "recorder"


def test_frames_are_foxglove_compressed_images(frames_run: Path) -> None:
    facts, messages = mcap_messages(frames_run / "recording.mcap")
    encoding, schema = facts["channels"]["env/obs/frame"]
    assert (encoding, schema.name, schema.encoding) == ("json", "foxglove.CompressedImage", "jsonschema")
    assert json.loads(schema.data)["properties"]["data"]["contentEncoding"] == "base64"
    images = {seq: doc for topic, doc, seq in messages if topic == "env/obs/frame"}
    observations = [(doc, seq) for topic, doc, seq in messages if topic == "env/obs"]
    assert len(images) == len(observations) > 2
    for obs, seq in observations:
        img = images[seq]
        assert img["format"] == "png" and img["frame_id"] == "frame" and set(img["timestamp"]) == {"sec", "nsec"}
        pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(img["data"]))))
        body = obs["body"]
        assert np.array_equal(pixels, draw(body["position"], body["target"], 8))
        assert body["frame"]["$image"] == {"key": "frame", "index": 0, "shape": [12, 96, 3]}
    rec = read_recording(frames_run / "recording.mcap")
    first = rec.on("env/obs")[0].body()
    assert np.array_equal(first["frame"], draw(first["position"], first["target"], 8))


def test_replay_renders_frames_and_transcripts(frames_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "render"
    result = launch("replay", str(frames_run / "recording.mcap"), "--render", str(out), "--episode", "ep00001",
                    "--json")
    assert result.returncode == 0, result.stderr
    decisions = json.loads(result.stdout)["episodes"]["ep00001"]
    pngs = sorted((out / "ep00001").glob("t*.png"))
    assert len(pngs) == decisions > 0 and not (out / "ep00000").exists()
    with Image.open(out / "ep00001.gif") as gif:
        assert gif.n_frames == decisions
    transcript = (out / "ep00001.txt").read_text()
    assert "episode ep00001" in transcript and "agent: \"right\"" in transcript and "done True" in transcript
    assert np.asarray(Image.open(pngs[0])).shape == (12, 96, 3)


@pytest.mark.parametrize("run_name", ["hello_run", "frames_run"])
def test_replay_with_the_same_agent_gives_the_same_actions(run_name: str, request: pytest.FixtureRequest,
                                                           tmp_path: Path) -> None:
    run = request.getfixturevalue(run_name)
    result = launch("replay", str(run / "recording.mcap"), "--agent", "hello.agent", "--out", str(tmp_path / "r"),
                    "--json", timeout=90)
    assert result.returncode == 0, result.stderr
    replay = json.loads(result.stdout)["replay"]
    assert replay["status"] == "completed" and replay["decisions"] > 2
    assert replay["agreement"] == 1.0 and replay["differences"] == []
    assert set(replay["episodes"]) == {"ep00000", "ep00001"}
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["metrics"]["agreement"] == 1.0
    assert {n for n in summary["nodes"]} == {"env", "agent"}  # the judge and the recorder are not replayed


def test_replay_with_another_agent_disagrees(hello_run: Path, tmp_path: Path) -> None:
    result = launch("replay", str(hello_run / "recording.mcap"), "--agent", "agent.random",
                    "--out", str(tmp_path / "r"), "--json", timeout=90)
    assert result.returncode == 0, result.stderr
    replay = json.loads(result.stdout)["replay"]
    assert replay["decisions"] > 2 and replay["agreement"] < 1.0 and replay["differences"]
    rows = [json.loads(line) for line in (tmp_path / "r" / "replay.jsonl").read_text().splitlines()]
    assert len(rows) == replay["decisions"] and all(r["replayed"] in ("left", "right", "stay") for r in rows)


def test_a_file_that_is_no_recording_is_refused_by_replay_and_report_with_its_name(hello_run: Path,
                                                                                  tmp_path: Path) -> None:
    """Not MCAP, empty, MCAP from another program, a folder: `launch replay` says which file and why,
    without a traceback; and a run folder holding such a file stops `launch report` the same way."""
    from mcap.writer import Writer

    (tmp_path / "text.mcap").write_text("garbage\n")
    (tmp_path / "empty.mcap").write_bytes(b"")
    (tmp_path / "folder.mcap").mkdir()
    with (tmp_path / "foreign.mcap").open("wb") as fh:
        writer = Writer(fh)
        writer.start()
        channel = writer.register_channel("/odom", "json", writer.register_schema("odom", "jsonschema", b"{}"))
        writer.add_message(channel, log_time=1, data=b"not json", publish_time=1)
        writer.finish()
    for name, why in [("text.mcap", "InvalidMagic"), ("empty.mcap", "EndOfFile"), ("foreign.mcap", "JSONDecodeError"),
                      ("folder.mcap", "cannot be read")]:
        result = launch("replay", str(tmp_path / name))
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert f"error: {tmp_path / name}" in " ".join(result.stderr.split()) and why in result.stderr, result.stderr

    run = tmp_path / "run"
    shutil.copytree(hello_run, run)
    (run / "recording-1.mcap").write_text("garbage\n")
    result = launch("report", str(run))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"error: {run / 'recording-1.mcap'} is not a framebus recording" in " ".join(result.stderr.split()), result.stderr


def test_with_recorder_wires_every_declared_output(tmp_path: Path) -> None:
    from kernel import launchfile

    lf = with_recorder(launchfile.load(ROOT / "launch" / "hello.yaml"))
    recorder = lf.node("recorder")
    assert recorder.uses == "kernel.tools.record:Recorder"
    assert recorder.inputs["bus"].sources == ["env/obs", "env/step", "agent/action"]
    assert recorder.inputs["bus"].policy == "block"
    assert with_recorder(lf) is lf  # already recorded: unchanged
    (tmp_path / "again.yaml").write_text(lf.to_yaml())  # the run folder's launch.yaml runs again as it is
    again = launchfile.load(tmp_path / "again.yaml")
    assert again.node("recorder").inputs == recorder.inputs


def test_replay_graph_swaps_the_environment_and_drops_what_reads_the_rest(tmp_path: Path) -> None:
    from kernel import launchfile
    from kernel.tools.record import Recording
    from kernel.tools.replay import replay_graph
    from kernel.tools.rewrite import REPLAY_ENV_USES

    recorded = with_recorder(launchfile.load(ROOT / "launch" / "hello.yaml"))
    rec = Recording(tmp_path / "recording.mcap", {"framebus.launch": {"yaml": recorded.to_yaml()}}, [], {}, {}, True)
    graph = replay_graph(rec, "env/obs", agent_uses="nodes.agent.baseline:RandomAgent", node=None, episode_ids=["ep00001"])
    assert [n.id for n in graph.nodes] == ["env", "agent"]  # the judge read env/step, the recorder everything
    env = graph.node("env")
    assert env.uses == REPLAY_ENV_USES and env.params["episodes"] == ["ep00001"] and list(env.inputs) == ["action"]
    assert env.clock is not None and env.clock.wait_for == ["agent"] and env.clock.deadline == 5.0
    assert graph.node("agent").uses == "nodes.agent.baseline:RandomAgent" and graph.node("agent").inputs["obs"].policy == "latest"
    assert graph.run.episodes == 1 and graph.name == "hello-replay"
    (tmp_path / "replay.yaml").write_text(graph.to_yaml())
    assert launchfile.load(tmp_path / "replay.yaml").nodes == graph.nodes  # what drive() writes loads back the same
