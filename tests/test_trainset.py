"""Training sets from step records (kernel.tools.trainset), on run folders made here the way a run
makes them: the results database through kernel.bus.resultsdb, the pictures through the agent's
own ImageKeeper."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from kernel.bus.resultsdb import connect
from kernel.tools.trainset import ExportError, Filters, export_training, parse_min_metric, parse_mix
from kernel.tools.trainset.runs import decision_of
from nodes.agent.records import ImageKeeper
from tests.helpers import launch

RULES = "You fix web pages."
EXAMPLES = "Example: Action: select_rule('.a')"


def picture(value: int, h: int = 8, w: int = 6) -> np.ndarray:
    return np.full((h, w, 3), value, np.uint8)


def user(text: str, *frames: np.ndarray) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}, *({"type": "image", "image": f} for f in frames)]}


def make_run(root: Path, name: str, env_uses: str, episodes: list[dict[str, Any]],
             env_records: list[dict[str, Any]] = ()) -> Path:
    """A run folder with a launch.yaml (env -> agent), ended episodes and the agent's step records."""
    run = root / name
    run.mkdir()
    (run / "launch.yaml").write_text(json.dumps({"name": name, "nodes": [
        {"id": "env", "uses": env_uses, "inputs": {"action": {"from": "agent/action"}}},
        {"id": "agent", "uses": "agent.llm", "inputs": {"obs": {"from": "env/obs", "policy": "latest"}}}]}))
    keeper = ImageKeeper(run)
    db = connect(run / "results.sqlite")
    for i, ep in enumerate(episodes):
        db.execute("INSERT INTO episodes (episode_id, idx, status, node, retries, ended_at, metrics, attempt) "
                   "VALUES (?, ?, ?, 'judge', 0, 0, ?, ?)", (ep["id"], i, ep.get("status", "completed"),
                                                             json.dumps(ep["metrics"]), ep.get("attempt")))
        for rec in ep["records"]:
            record = {**rec, "prompt": keeper.keep(rec["prompt"])} if "prompt" in rec else rec
            db.execute("INSERT INTO steps (ts, node, episode_id, t, record, attempt) VALUES (0, 'agent', ?, ?, ?, ?)",
                       (ep["id"], rec.get("t"), json.dumps(record), rec.get("_attempt", ep.get("attempt"))))
    for rec in env_records:
        db.execute("INSERT INTO steps (ts, node, episode_id, t, record, attempt) VALUES (0, 'env', ?, NULL, ?, NULL)",
                   (rec["episode"], json.dumps(rec)))
    db.close()
    return run


def css_like(root: Path) -> Path:
    """Two decisions with the history's pictures kept in view (VAB's CSS setting), ICL in the rules."""
    a, b = picture(10), picture(200, h=5, w=4)
    system = {"role": "system", "content": f"{RULES}\n\n{EXAMPLES}"}
    r0 = {"t": 0, "attempts": 1, "valid": True, "response": "Thought: look\nAction: select_rule('.x')", "icl": EXAMPLES,
          "prompt": [system, user("the page", a)]}
    r1 = {"t": 1, "attempts": 1, "valid": True, "response": "I have fixed the css style", "icl": EXAMPLES,
          "prompt": [system, user("the page", a), {"role": "assistant", "content": r0["response"]},
                     user("rule found", b)]}
    return make_run(root, "css_run", "css.env", [{"id": "ep00000", "metrics": {"success": 1.0, "reward": 1.0},
                                                 "records": [r0, r1]}])


def sokoban_like(root: Path) -> Path:
    """Three episodes; one failed, one replayed after an abandoned attempt; older pictures noted away."""
    system = {"role": "system", "content": "Push boxes."}
    eps = []
    for i in range(3):
        first = picture(i * 20 + 1)
        later = picture(i * 20 + 2)
        records = [
            {"t": 0, "attempts": 1, "valid": True, "response": "# action\nUp", "prompt": [system, user("start", first)]},
            {"t": 1, "attempts": 2, "valid": True, "response": "# action\nLeft",
             "prompt": [system, {"role": "user", "content": [{"type": "text", "text": "start (no longer shown)"}]},
                        {"role": "assistant", "content": "# action\nUp"}, user("now", later),
                        {"role": "assistant", "content": "left?"}, {"role": "user", "content": "Reply again."}]},
            {"t": 2, "early_stop": "stuck"},  # no model call: not a decision
        ]
        ep = {"id": f"ep{i:05d}", "metrics": {"success": float(i != 1), "reward": i * 0.5}, "records": records}
        if i == 2:  # dealt again: the first attempt's records stay out
            ep["attempt"] = 1
            ep["records"] = [{**records[0], "response": "# action\nDown", "_attempt": None}, *records]
        eps.append(ep)
    return make_run(root, "sokoban_run", "sokoban.env", eps)


def test_a_decision_is_the_turn_asked_before_any_ask_again_pairs() -> None:
    prompt = [{"role": "system", "content": "s"}, {"role": "user", "content": "obs"},
              {"role": "assistant", "content": "bad"}, {"role": "user", "content": "again"}]
    d = decision_of({"t": 3, "attempts": 2, "response": "good", "valid": True, "prompt": prompt})
    assert d is not None and d.turn["content"] == "obs" and d.head == prompt[:1] and d.response == "good"
    assert decision_of({"t": 0, "attempts": 0, "response": "", "prompt": prompt}) is None  # the model call failed
    assert decision_of({"t": 0, "early_stop": "x"}) is None
    assert decision_of({"t": 0, "attempts": 3, "response": "r", "prompt": prompt}) is None  # pairs that are not there


def test_vab_bc_keeps_only_the_latest_picture_and_drops_the_examples(tmp_path: Path) -> None:
    run = sokoban_like(tmp_path)
    export_training([run], "vab-bc", tmp_path / "out")
    samples = [json.loads(line) for line in (tmp_path / "out" / "vab_bc.jsonl").read_text().splitlines()]
    assert [s["id"] for s in samples] == [f"sokoban_run/ep{i:05d}/{t}" for i in range(3) for t in (0, 1)]
    second = samples[1]
    assert second["input"] == "<|user|>\nstart (no longer shown)\n<|assistant|>\n# action\nUp\n<|user|>\nnow"
    assert second["output"] == "# action\nLeft" and second["system"] == "Push boxes." and second["stacked"] == 0
    data = (tmp_path / "out" / second["image"]).read_bytes()
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(data))), picture(2))  # episode 0's latest
    assert samples[4]["output"] == "# action\nUp"  # the replayed episode's own first decision, not the abandoned one


def test_vab_bc_stacks_the_history_pictures_where_they_stayed_in_view(tmp_path: Path) -> None:
    run = css_like(tmp_path)
    export_training([run], "vab-bc", tmp_path / "out")
    s0, s1 = [json.loads(line) for line in (tmp_path / "out" / "vab_bc.jsonl").read_text().splitlines()]
    assert s0["system"] == RULES and EXAMPLES not in s1["system"]
    assert s1["input"] == ("<|user|>\nthe page\n<|assistant|>\nThought: look\nAction: select_rule('.x')\n"
                           "<|user|>\nrule found")
    assert s0["stacked"] == 0 and s1["stacked"] == 2
    stacked = np.asarray(Image.open(tmp_path / "out" / s1["image"]))
    assert stacked.shape == (8 + 5, 6, 3)
    assert (stacked[:8] == 10).all() and (stacked[8:, :4] == 200).all() and (stacked[8:, 4:] == 255).all()


def test_chat_pictures_are_the_runs_own_bytes_as_files_or_inline(tmp_path: Path) -> None:
    run = css_like(tmp_path)
    export_training([run], "chat", tmp_path / "files")
    (line,) = (tmp_path / "files" / "chat.jsonl").read_text().splitlines()
    messages = json.loads(line)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert messages[0]["content"] == f"{RULES}\n\n{EXAMPLES}"  # chat keeps the prompt as the model saw it
    url = messages[3]["content"][1]["image_url"]["url"]
    kept = (run / "steps" / url).read_bytes()
    assert (tmp_path / "files" / url).read_bytes() == kept
    assert url == f"images/{hashlib.sha256(kept).hexdigest()}.png"
    export_training([run], "chat", tmp_path / "inline", images="inline")
    inline = json.loads((tmp_path / "inline" / "chat.jsonl").read_text())["messages"][3]["content"][1]
    assert inline["image_url"]["url"].startswith("data:image/png;base64,")
    assert not (tmp_path / "inline" / "images").exists()


def test_filters_mix_and_manifest(tmp_path: Path) -> None:
    runs = [sokoban_like(tmp_path), css_like(tmp_path)]
    m = export_training(runs, "chat", tmp_path / "out", filters=Filters(success=True, min_metrics={"reward": 0.5}))
    index = [json.loads(line) for line in (tmp_path / "out" / "index.jsonl").read_text().splitlines()]
    assert [(i["launch"], i["episode_id"]) for i in index] == [("sokoban_run", "ep00002"), ("css_run", "ep00000")]
    assert m["counts"] == {"episodes": 2, "records": 2, "images": 4}
    assert [(r["episodes"], r["exported"]) for r in m["runs"]] == [(3, 1), (1, 1)]
    assert m["filters"]["min_metric"] == {"reward": 0.5}
    m = export_training(runs, "vab-bc", tmp_path / "out", mix={"css": 3}, filters=Filters(envs=["css"]))
    assert m["counts"]["records"] == 2 * 3  # an export again replaces the last one
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["mix"] == {"css": 3}
    with pytest.raises(ExportError, match="--mix names football"):
        export_training(runs, "chat", tmp_path / "out2", mix={"football": 2})
    assert not (tmp_path / "out2").exists()  # nothing half written


def test_bad_options_name_themselves() -> None:
    assert parse_min_metric("reward=0.5") == ("reward", 0.5)
    for bad in ("reward", "=1", "reward=high"):
        with pytest.raises(ExportError, match="--min-metric"):
            parse_min_metric(bad)
    assert parse_mix(["css=3"]) == {"css": 3}
    for bad in ("css", "css=0", "css=x"):
        with pytest.raises(ExportError, match="--mix"):
            parse_mix([bad])


def test_the_cli_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    run = css_like(tmp_path)
    out = launch("export", str(run), "--format", "chat")
    assert out.returncode == 2 and "--out DIR" in out.stderr
    assert launch("export", str(run), str(run), "--format", "csv").returncode == 2
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    out = launch("export", str(run), "--format", "chat", "--out", str(tmp_path / "taken"))
    assert out.returncode == 2 and "not an earlier export" in out.stderr
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    (tmp_path / "afile").write_text("")
    out = launch("export", str(run), "--format", "chat", "--out", str(tmp_path / "afile" / "set"))
    assert out.returncode == 2 and "cannot make the set's folder" in out.stderr and "Traceback" not in out.stderr
    out = launch("export", str(tmp_path / "nothing"), "--format", "hf", "--out", str(tmp_path / "o"))
    assert out.returncode == 2 and "is not a folder" in out.stderr
    out = launch("export", str(run), "--format", "chat", "--out", str(tmp_path / "o"), "--success")
    assert out.returncode == 0 and "1 chat records from 1 episodes" in out.stderr, out.stdout + out.stderr
    assert (tmp_path / "o" / "manifest.json").exists()


def test_a_record_naming_a_picture_outside_the_run_is_refused(tmp_path: Path) -> None:
    run = css_like(tmp_path)
    db = connect(run / "results.sqlite")
    (cell,) = db.execute("SELECT record FROM steps WHERE t = 0").fetchone()
    record = json.loads(cell)
    record["prompt"][1]["content"][1]["file"] = "../../etc/passwd"
    db.execute("UPDATE steps SET record = ? WHERE t = 0", (json.dumps(record),))
    db.close()
    with pytest.raises(ExportError, match="outside steps/images"):
        export_training([run], "chat", tmp_path / "out")


def test_hf_loads_with_datasets_and_its_pictures_are_the_runs(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    run = css_like(tmp_path)
    export_training([run], "hf", tmp_path / "hf")
    ds = datasets.load_from_disk(str(tmp_path / "hf" / "dataset")).cast_column(
        "images", datasets.List(datasets.Image(decode=False)))
    (row,) = ds
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant", "user", "assistant"]
    assert [p["type"] for p in row["messages"][3]["content"]] == ["text", "image"]
    kept = sorted((run / "steps" / "images").iterdir())
    assert sorted(i["bytes"] for i in row["images"]) == sorted(p.read_bytes() for p in kept)
    assert row["success"] == 1.0
    shards = list((tmp_path / "hf" / "parquet").glob("train-*.parquet"))
    assert len(shards) == 1 and len(datasets.Dataset.from_parquet(str(shards[0]))) == 1


def test_rollouts_carry_tokens_logprobs_and_the_envs_rewards(tmp_path: Path) -> None:
    system = {"role": "system", "content": "Push boxes."}
    tokens = {"prompt_ids": [1, 2, 3], "completion_ids": [7, 8], "logprobs": [-0.5, -0.25], "tokens": ["Up", "!"]}
    records = [{"t": t, "attempts": 1, "valid": True, "response": f"# action\n{a}", "tokens": tokens,
                "prompt": [system, user(f"step {t}", picture(t + 1))]} for t, a in enumerate(["Up", "Left"])]
    run = make_run(tmp_path, "rl", "sokoban.env", [{"id": "ep00000", "metrics": {"success": 1.0}, "records": records},
                                                   {"id": "ep00001", "metrics": {"success": 0.0}, "records": records}],
                   env_records=[{"episode": "ep00000", "t": None, "decision": False, "rewards": [-0.1, 10.0]}])
    export_training([run], "rollouts", tmp_path / "out")
    lines = [json.loads(line) for line in (tmp_path / "out" / "rollouts.jsonl").read_text().splitlines()]
    assert [(r["group"], r["t"], r["done"]) for r in lines] == [(0, 0, False), (0, 1, True), (1, 0, False), (1, 1, True)]
    first = lines[0]
    assert first["prompt_ids"] == [1, 2, 3] and first["completion_ids"] == [7, 8] and first["logprobs"] == [-0.5, -0.25]
    assert [r["reward"] for r in lines] == [-0.1, 10.0, None, None]  # the second episode's env kept no record
    assert first["return"] == 9.9 and first["metrics"] == {"success": 1.0}
    assert first["completion"] == "# action\nUp" and first["prompt"][0] == {"role": "system", "content": "Push boxes."}
    assert first["prompt"][1]["content"][1]["image_url"]["url"].startswith("images/")


def css_attempts(root: Path) -> list[Path]:
    """A failure in VAB-CSS's standard setting and a hinted success on the same instance, in two runs."""
    from nodes.browser.css.env import hint_text

    class Corruption:
        property, selector, file = "display", ".story", "style.css"

    hint = hint_text(Corruption)
    system = {"role": "system", "content": RULES}

    def attempt(texts: list[str], replies: list[str]) -> list[dict[str, Any]]:
        out, history = [], []
        for t, (text, reply) in enumerate(zip(texts, replies, strict=True)):
            turn = user(text, picture(t + 50))
            out.append({"t": t, "attempts": 1, "valid": True, "response": reply, "prompt": [system, *history, turn]})
            history += [turn, {"role": "assistant", "content": reply}]
        return out

    failed = attempt(["the page\n\n(2 rounds left.)", "edited\n\n(1 round left.)"],
                     ["Action: edit_rule('.x', 'color', 'red')", "I have fixed the css style"])
    fixed = attempt([f"the page\n\n{hint}\n\n(2 rounds left.)", f"rule found\n\n\n{hint}\n\n(1 round left.)"],
                    ["Action: select_rule('.story')", "I have fixed the css style"])
    metrics = {"instance": "bakery-001"}
    return [make_run(root, "standard", "css.env", [{"id": "ep00000", "metrics": {**metrics, "success": 0.0},
                                                   "records": failed}]),
            make_run(root, "lenient", "css.env", [{"id": "ep00000", "metrics": {**metrics, "success": 1.0, "hint": 0},
                                                  "records": fixed}])]


def test_splice_recovery_joins_a_css_failure_and_a_hinted_success_without_the_hint(tmp_path: Path) -> None:
    runs = css_attempts(tmp_path)
    m = export_training(runs, "vab-bc", tmp_path / "out", splice=True, filters=Filters(success=True))
    (joined,) = m["spliced"]
    assert joined["task"] == "bakery-001" and joined["failed"].endswith("standard:ep00000")
    assert joined["succeeded"].endswith("lenient:ep00000") and joined["decisions"] == 3
    samples = [json.loads(line) for line in (tmp_path / "out" / "vab_bc.jsonl").read_text().splitlines()]
    assert [s["id"] for s in samples] == ["lenient/ep00000+ep00000/0", "lenient/ep00000+ep00000/1",
                                          "lenient/ep00000+ep00000/2"]
    assert [s["output"] for s in samples] == ["Action: edit_rule('.x', 'color', 'red')", "Action: select_rule('.story')",
                                              "I have fixed the css style"]  # the false claim is gone
    text = "".join(s["input"] for s in samples)
    assert "Hint" not in text and "(2 rounds left.)" in text
    assert samples[2]["input"] == ("<|user|>\nthe page\n\n(2 rounds left.)\n<|assistant|>\nAction: edit_rule('.x', "
                                   "'color', 'red')\n<|user|>\nthe page\n\n(2 rounds left.)\n<|assistant|>\n"
                                   "Action: select_rule('.story')\n<|user|>\nrule found\n\n(1 round left.)")
    assert samples[2]["stacked"] == 3  # the failure's picture and the success's two, from two runs
    # without --splice-recovery the hinted success goes out as it was, and the failure is filtered
    m = export_training(runs, "vab-bc", tmp_path / "plain", filters=Filters(success=True))
    assert "spliced" not in m and m["counts"]["records"] == 2
