"""Training sets exported from real runs of three packs (launch run, then launch export): Sokoban and
VAB-CSS with their solvers as the model (model.oracle), VisualWebArena with its gold actions; and
RL rollouts with the token ids and logprobs of the embedded vLLM model."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import launch

FORMATS = ("chat", "vab-bc", "hf", "rollouts")


def run_and_export(tmp_path: Path, launch_file: str, *args: str, timeout: float = 240) -> tuple[Path, dict[str, Path]]:
    run = tmp_path / "run"
    result = launch("run", launch_file, "--out", str(run), *args, timeout=timeout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    outs = {}
    for fmt in FORMATS:
        out = tmp_path / fmt
        done = launch("export", str(run), "--format", fmt, "--out", str(out), timeout=120)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        assert json.loads((out / "manifest.json").read_text())["format"] == fmt
        outs[fmt] = out
    return run, outs


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "steps" / "agent.jsonl").read_text().splitlines()]


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def check_pictures_are_what_the_model_was_sent(run: Path, outs: dict[str, Path]) -> None:
    """Every picture in the chat set hashes to what the model node said it sent, and the hf set's
    pictures are the run's own bytes."""
    import datasets

    sent = {sha for r in records(run) for sha in r.get("seen_images") or ()}
    assert sent, "the model node reported no pictures"
    exported = {p.name.removesuffix(".png"): hashlib.sha256(p.read_bytes()).hexdigest()
                for p in (outs["chat"] / "images").iterdir()}
    assert exported and all(name == digest for name, digest in exported.items())
    assert set(exported) == sent
    ds = datasets.load_from_disk(str(outs["hf"] / "dataset")).cast_column(
        "images", datasets.List(datasets.Image(decode=False)))
    kept = {p.read_bytes() for p in (run / "steps" / "images").iterdir()}
    assert {i["bytes"] for row in ds for i in row["images"]} == kept


@pytest.mark.timeout(300)
def test_a_sokoban_teacher_run_exports_in_every_format(tmp_path: Path) -> None:
    run, outs = run_and_export(tmp_path, "sokoban_teacher.yaml", "--episodes", "2")
    check_pictures_are_what_the_model_was_sent(run, outs)
    chat = lines(outs["chat"] / "chat.jsonl")
    assert len(chat) == 2
    roles = [m["role"] for m in chat[0]["messages"]]
    assert roles[0] == "system" and set(roles[1::2]) == {"user"} and set(roles[2::2]) == {"assistant"}
    assert chat[0]["messages"][2]["content"].startswith("# analyze")
    samples = lines(outs["vab-bc"] / "vab_bc.jsonl")
    assert len(samples) == len(records(run))
    assert all(s["stacked"] == 0 and s["image"] for s in samples)  # Sokoban shows only the latest picture
    assert samples[1]["input"].startswith("<|user|>\n") and "\n<|assistant|>\n" in samples[1]["input"]
    steps = lines(outs["rollouts"] / "rollouts.jsonl")
    assert [s["done"] for s in steps].count(True) == 2
    assert all(isinstance(s["reward"], float) for s in steps)
    assert steps[0]["return"] == pytest.approx(sum(s["reward"] for s in steps if s["group"] == 0))
    assert all(s["metrics"]["success"] == 1.0 for s in steps)


@pytest.mark.browser
@pytest.mark.timeout(400)
def test_a_css_teacher_run_exports_vabs_stacked_pictures(tmp_path: Path) -> None:
    run, outs = run_and_export(tmp_path, "css_teacher.yaml", "--episodes", "1", timeout=330)
    check_pictures_are_what_the_model_was_sent(run, outs)
    samples = lines(outs["vab-bc"] / "vab_bc.jsonl")
    assert samples[-1]["output"].endswith("I have fixed the css style")
    # VAB's CSS agent keeps every picture in view; the training sample stacks them into one
    assert [s["stacked"] for s in samples] == sorted(s["stacked"] for s in samples) and samples[-1]["stacked"] > 2
    from PIL import Image

    last = Image.open(outs["vab-bc"] / samples[-1]["image"])
    first = Image.open(outs["vab-bc"] / samples[0]["image"])
    assert last.width == first.width and last.height > first.height


@pytest.mark.browser
@pytest.mark.timeout(400)
def test_a_vwa_gold_run_exports_in_every_format(tmp_path: Path) -> None:
    run, outs = run_and_export(tmp_path, "vwa_teacher.yaml", "--episodes", "2", timeout=330)
    check_pictures_are_what_the_model_was_sent(run, outs)
    chat = lines(outs["chat"] / "chat.jsonl")
    assert len(chat) == 2
    replies = [m["content"] for c in chat for m in c["messages"] if m["role"] == "assistant"]
    assert replies and all("In summary, the next action I will perform is ```" in r for r in replies)
    ended = lines(run / "episodes.jsonl")
    assert all(e["metrics"]["success"] == 1.0 for e in ended)
    assert len(lines(outs["rollouts"] / "rollouts.jsonl")) == len(replies)


@pytest.mark.timeout(600)
def test_rollouts_carry_the_embedded_models_token_ids_and_logprobs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = launch("run", "sokoban_local.yaml", "--episodes", "1", "--set", "env.max_steps=2", "--set",
                    "model.logprobs=true", "--set", "model.sampling={temperature: 0, max_tokens: 24}", "--out", str(run),
                    timeout=540)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    out = tmp_path / "rollouts"
    assert launch("export", str(run), "--format", "rollouts", "--out", str(out)).returncode == 0
    steps = lines(out / "rollouts.jsonl")
    assert len(steps) == 2
    for s in steps:
        assert len(s["completion_ids"]) == len(s["logprobs"]) > 0
        assert all(lp <= 0 for lp in s["logprobs"])
        assert len(s["prompt_ids"]) > 50  # the chat template's tokens and the prompt's
        assert isinstance(s["reward"], float)
    assert steps[1]["prompt_ids"][: len(steps[0]["prompt_ids"]) // 2] == steps[0]["prompt_ids"][: len(steps[0]["prompt_ids"]) // 2]
