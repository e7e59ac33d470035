"""judge.vmage_elo in real runs: a random Pong run stored, then a scripted Pong run judged by the
node against it; the table it leaves in summary.json is the one ``launch elo`` prints afterwards."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from tests.helpers import ROOT, launch

PERMUTATIONS = 500


def _uses() -> str:
    """The entry-point name once the package is installed again; the class path until then."""
    names = {ep.name for ep in importlib.metadata.entry_points(group="framebus.nodes")}
    return "judge.vmage_elo" if "judge.vmage_elo" in names else "nodes.judge.vmage_elo_node:VmageEloJudge"


def _launch_file(tmp: Path) -> Path:
    """launch/vmage_scripted_elo.yaml as shipped, its judge named so this checkout resolves it."""
    path = tmp / "scripted_elo.yaml"
    path.write_text(f"name: scripted_elo\ninclude: [{ROOT / 'launch/vmage_scripted.yaml'}]\n"
                    f"nodes:\n  - id: judge\n    uses: {_uses()}\n    params:\n      every: 1\n")
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("elo_node")
    rand, scripted = tmp / "random", tmp / "scripted"
    proc = launch("run", "launch/vmage_pong_random.yaml", "--set", "run.episodes=3", "--out", str(rand),
                  cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    proc = launch("run", str(_launch_file(tmp)), "--set", "env.game=pong", "--set", "env.frame_cap=150",
                  "--set", "run.episodes=3", "--set", f"judge.against=[{rand}]",
                  "--set", f"judge.permutations={PERMUTATIONS}", "--set", "judge.seed=7",
                  "--out", str(scripted), cwd=ROOT, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Avg ELO after 3 episode(s)" in proc.stdout + proc.stderr
    return rand, scripted


def _close(a: object, b: object, path: str = "") -> None:
    """Equal JSON values, floats to 1e-6."""
    if isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, abs=1e-6), path
    elif isinstance(a, dict) and isinstance(b, dict):
        assert sorted(a) == sorted(b), path
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    else:
        assert a == b, path


@pytest.mark.timeout(400)
def test_the_table_in_summary_json_is_launch_elo_of_the_finished_run(runs: tuple[Path, Path]) -> None:
    rand, scripted = runs
    live = json.loads((scripted / "summary.json").read_text())["vmage_elo"]
    proc = launch("elo", str(scripted), str(rand), "--json", "--permutations", str(PERMUTATIONS), "--seed", "7",
                  cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    after = json.loads(proc.stdout)
    assert live["episodes_rated"] == 3
    assert set(after["avg_elo"]) == {rand.name, scripted.name}
    assert after["avg_elo"][scripted.name] > after["avg_elo"][rand.name]  # the tracker outscores random play
    for key in after:
        if key == "entrants":  # the same but for how the run folders were spelt
            for name, ent in after[key].items():
                _close({k: v for k, v in live[key][name].items() if k != "runs"},
                       {k: v for k, v in ent.items() if k != "runs"}, f"entrants.{name}")
            continue
        _close(live[key], after[key], key)


def test_a_bad_against_folder_is_refused_by_name(tmp_path: Path) -> None:
    missing = tmp_path / "no_such_run"
    not_vmage = tmp_path / "empty"
    not_vmage.mkdir()
    launch_file = _launch_file(tmp_path)
    for bad, why in ((missing, "no such run folder"), (not_vmage, "not a run folder")):
        for extra in ((), ("--out", str(tmp_path / "out"))):
            cmd = "run" if extra else "validate"
            proc = launch(cmd, str(launch_file), "--set", f"judge.against=[{bad}]", *extra, cwd=ROOT, timeout=60)
            text = proc.stdout + proc.stderr
            assert proc.returncode != 0, text[-2000:]
            assert f"against: {bad}" in text and why in text, text[-2000:]
