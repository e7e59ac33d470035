"""The V-MAGE ELO judge: the update pinned to hand-computed numbers, the order averaging, the pairing
on shared layouts, run folders read and refused, the unit-test and anchoring metrics by hand, and
two real runs ranked through `launch elo` (a pack command: kernel.tools.commands)."""

from __future__ import annotations

import json
from itertools import permutations
from pathlib import Path

import numpy as np
import pytest

from nodes.judge.vmage_elo import (Pool, build_pool, elo_passes, expected, human_ratio, main, outcome, rank,
                                   stabilized, update)
from nodes.judge.vmage_metrics import anchoring, unit_tests
from nodes.judge.vmage_runs import EloError, Entrant, Result, load_entrants, parse_names, run_model
from tests.helpers import ROOT, launch

# A beats B, B draws C, C beats A: a cycle, so the order of the matches decides the ratings.
CYCLE = Pool(np.array([0, 1, 2]), np.array([1, 2, 0]), np.array([1.0, 0.5, 1.0]), np.array(["g"] * 3),
             np.zeros(3, int), np.zeros(3, int))
# by hand (eqs. 4-5, K 32, from 1500): A-B even, A 1516 B 1484; B-C: E_B = 1/(1+10^(16/400)) = 0.4769915,
# B +0.7363068; C-A: E_C = 1/(1+10^((1516-1499.2636932)/400)), C +16.7701398
IN_ORDER = [1499.2298601853572, 1484.736306793522, 1516.0338330211207]
REVERSED = [1500.7701398146428, 1483.9661669788793, 1515.263693206478]
ALL_ORDERS_MEAN = [1500.0, 1484.3726823946283, 1515.6273176053717]


def test_expected_and_update_follow_eqs_4_5() -> None:
    assert expected(1500, 1500) == pytest.approx(0.5, abs=1e-12)
    assert expected(1600, 1400) == pytest.approx(1 / (1 + 10 ** (-200 / 400)), abs=1e-12)
    assert update(1500, 1500, 1.0) == pytest.approx((1516.0, 1484.0), abs=1e-9)
    ra, rb = update(1600, 1400, 0.5)  # E_A = 0.7597469, so the favourite loses 8.3119 on a draw
    assert ra == pytest.approx(1591.6880983472654, abs=1e-6)
    assert rb == pytest.approx(1408.3119016527346, abs=1e-6)
    assert update(1600, 1400, 0.0, k=16) == pytest.approx((1600 - 16 * 0.7597469266, 1400 + 16 * 0.7597469266),
                                                         abs=1e-6)


def test_outcome_is_lexicographic_on_score_then_valid_rate() -> None:
    assert outcome(Result(2, 0.5), Result(1, 1.0)) == 1.0  # the score decides first
    assert outcome(Result(1, 0.8), Result(1, 0.9)) == 0.0  # equal scores: the valid rate breaks the tie
    assert outcome(Result(1, 0.9), Result(1, 0.9)) == 0.5


def test_a_sequential_pass_depends_on_the_order() -> None:
    fwd = elo_passes(CYCLE, 3, np.array([[0, 1, 2]]))[0]
    back = elo_passes(CYCLE, 3, np.array([[2, 1, 0]]))[0]
    assert fwd == pytest.approx(IN_ORDER, abs=1e-6)
    assert back == pytest.approx(REVERSED, abs=1e-6)
    assert abs(fwd[0] - back[0]) > 1.0


def test_the_mean_over_orders_is_the_stabilised_rating() -> None:
    every = elo_passes(CYCLE, 3, np.array(list(permutations(range(3)))))
    assert every.mean(axis=0) == pytest.approx(ALL_ORDERS_MEAN, abs=1e-6)
    mean, sd = stabilized(CYCLE, 3, permutations=10_000, seed=0)
    assert mean[0] == pytest.approx(ALL_ORDERS_MEAN, abs=0.05)  # 10^4 random shuffles approach the exact mean
    assert mean[0].sum() == pytest.approx(4500.0, abs=1e-6)  # zero-sum: the pool averages 1500
    assert sd[0, 0] > 0.5  # A's rating does move with the order
    again, _ = stabilized(CYCLE, 3, permutations=10_000, seed=0)
    assert np.array_equal(mean, again)  # a fixed seed: the same shuffles


def test_ratings_average_1500_in_a_larger_pool() -> None:
    rng = np.random.default_rng(3)
    n = 400
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    pool = Pool(a, b, rng.choice([0.0, 0.5, 1.0], n), np.array(["g"] * n), np.zeros(n, int), np.zeros(n, int))
    mean, _ = stabilized(pool, 5, permutations=300)
    assert mean[0].mean() == pytest.approx(1500.0, abs=1e-9)


def _entrant(name: str, scores: dict[tuple[str, int, int], float], valid: float = 1.0) -> Entrant:
    return Entrant(name, [Path(f"/runs/{name}")], {k: Result(v, valid) for k, v in scores.items()}, {"lockstep"})


def test_matches_pair_episodes_on_shared_rounds_only() -> None:
    a = _entrant("a", {("pong", 1, r): float(r) for r in range(4)})
    b = _entrant("b", {("pong", 1, r): 1.5 for r in (1, 3, 5)})  # shares rounds 1 and 3 with a
    pool, notes = build_pool([a, b], rounds=10, seed=0)
    assert len(pool) == 10 and not notes
    assert pool.round.tolist() == [1, 3] * 5  # match t plays shared round t mod 2
    assert pool.s.tolist() == [0.0, 1.0] * 5  # a scored 1 then 3 against b's 1.5
    c = _entrant("c", {("pong", 2, 0): 1.0})  # alone on its level: nothing to play there
    _, notes = build_pool([a, b, c], rounds=10, seed=0)
    assert any("pong level 2" in n for n in notes)


def test_rank_puts_the_stronger_entrant_first_with_avg_and_pooled() -> None:
    cells = [("pong", lv, r) for lv in (1, 2, 3) for r in range(3)] + [("flappybird", 7, r) for r in range(3)]
    strong = _entrant("strong", {k: 5.0 for k in cells})
    weak = _entrant("weak", {k: 1.0 for k in cells})
    even = _entrant("even", {k: (5.0 if k[2] % 2 else 1.0) for k in cells})
    res = rank([even, strong, weak], rounds=20, permutations=200)
    assert list(res["avg_elo"]) == ["strong", "even", "weak"]
    for g, table in res["per_game"].items():
        assert sum(table.values()) / 3 == pytest.approx(1500.0, abs=1e-9), g
    assert res["avg_elo"]["strong"] == pytest.approx(np.mean([res["per_game"][g]["strong"] for g in res["per_game"]]))
    assert sum(res["pooled"].values()) / 3 == pytest.approx(1500.0, abs=1e-9)
    assert res["avg_ratio_pct"]["strong"] == pytest.approx(50.0)  # 5 of the human 10 on pong and flappybird
    assert res["matches"] == {"flappybird/7": 20, "pong/1": 20, "pong/2": 20, "pong/3": 20}


def test_human_ratio_is_the_mean_of_per_level_ratios_per_game() -> None:
    ent = _entrant("m", {("pong", 1, 0): 2.0, ("pong", 1, 1): 4.0, ("pong", 3, 0): 1.0, ("race", 1, 0): 50.0,
                         ("supermario", 1, 0): 3.0})
    # Race's human scores 100 on every level, SuperMario's level 1 800
    assert human_ratio(ent) == {"pong": pytest.approx((0.3 + 0.1) / 2), "race": pytest.approx(0.5),
                                "supermario": pytest.approx(3.0 / 800)}


def test_unit_tests_count_episodes_above_the_random_mean() -> None:
    rand = _entrant("random", {("pong", 1, 0): 0.0, ("pong", 1, 1): 2.0, ("flappybird", 1, 0): 1.0,
                               ("race", 2, 0): 0.0})
    model = Entrant("m", [Path("/runs/m")], {("pong", 1, 0): Result(1.0, 1.0), ("pong", 1, 1): Result(3.0, 1.0),
                                             ("pong", 1, 2): Result(1.5, 1.0), ("flappybird", 1, 0): Result(1.0, 1.0),
                                             ("race", 2, 0): Result(100.0, 1.0), ("pong", 2, 0): Result(9.0, 1.0)},
                    {"lockstep"}, models={"gpt-4o"})
    res = unit_tests([model, rand])
    assert res["baseline"] == ["random"] and res["random_mean"]["pong/1"] == 1.0
    # pong 1: 3.0 and 1.5 beat the random mean 1.0, 1.0 does not (strictly above); flappybird: 1.0 is not above 1.0
    assert res["per_level"]["pong/1"] == {"m": pytest.approx(2 / 3), "random": 0.5}
    assert res["per_ability"]["m"] == {"Tracking": pytest.approx(2 / 3), "Timing": 0.0}
    assert res["overall"]["m"] == pytest.approx(3 / 5)  # race 2 counts overall; pong 2 has no baseline
    assert "pong/2" not in res["per_level"]
    assert unit_tests([model])["baseline"] is None  # no random entrant: no invented baseline
    labelled = Entrant("random", [Path("/runs/x")], dict(rand.results), {"lockstep"}, models={"scripted"})
    assert labelled.is_random and not model.is_random


def test_anchoring_pools_runs_of_unchanged_replies_per_game() -> None:
    ent = Entrant("m", [Path("/runs/m")], {
        ("pong", 1, 0): Result(0, 1, decisions=12, frames=36, reply_runs=3),
        ("pong", 2, 0): Result(0, 1, decisions=6, frames=18, reply_runs=6),
        ("race", 1, 0): Result(0, 1, decisions=10, frames=40, reply_runs=2),
        ("supermario", 1, 0): Result(0, 1, decisions=50, frames=250, reply_runs=1),  # left out, as the paper does
        ("flappybird", 1, 0): Result(0, 1, decisions=5, frames=10)}, {"lockstep"})  # judged before reply runs
    res = anchoring([ent])
    assert res["rounds"]["m"] == {"pong": 2.0, "race": 5.0}  # pong (12 + 6) / (3 + 6)
    assert res["frames"]["m"] == {"pong": 6.0, "race": 20.0}
    assert res["avg_rounds"]["m"] == 3.5 and res["avg_frames"]["m"] == 13.0
    assert res["episodes_without_reply_runs"] == {"m": 1} and res["excluded_games"] == ["supermario"]


def _fake_run(path: Path, agent: str, scores: dict[tuple[str, int, int], float], model: dict | None = None) -> Path:
    path.mkdir(parents=True)
    nodes = [{"id": "env", "uses": "vmage.env"}, {"id": "agent", "uses": agent, "params": model or {}}]
    if agent == "agent.llm":
        nodes.append({"id": "model", "uses": "model.chat", "params": {"model": "gpt-4o"}})
    (path / "launch.yaml").write_text(json.dumps({"nodes": nodes}))
    with (path / "episodes.jsonl").open("w") as fh:
        for i, ((g, lv, r), s) in enumerate(sorted(scores.items())):
            m = {"score": s, "valid_rate": 1.0, "game": g, "level": lv, "round": r, "clock": "lockstep"}
            fh.write(json.dumps({"episode_id": f"ep{i:05d}", "status": "completed", "metrics": m}) + "\n")
    return path


def test_run_folders_named_merged_and_refused(tmp_path: Path) -> None:
    pong = {("pong", 1, r): 1.0 for r in range(3)}
    flappy = {("flappybird", 1, r): 1.0 for r in range(3)}
    rand_pong = _fake_run(tmp_path / "rp", "agent.random", pong)
    rand_flappy = _fake_run(tmp_path / "rf", "agent.random", flappy)
    llm = _fake_run(tmp_path / "llm", "agent.llm", {**pong, **flappy}, {"model": "model"})
    assert run_model(llm) == "gpt-4o" and run_model(rand_pong) == "random"
    ents = load_entrants([llm, rand_flappy, rand_pong])  # named by their run folders
    assert [(e.name, e.model, e.is_random) for e in ents] == [("llm", "gpt-4o", False), ("rf", "random", True),
                                                             ("rp", "random", True)]
    ents = load_entrants([llm, rand_flappy, rand_pong], parse_names([f"{rand_flappy}=rand", f"{rand_pong}=rand"]))
    assert [e.name for e in ents] == ["llm", "rand"]
    assert len(ents[1].results) == 6  # one model's runs over two games, labelled alike, are one entrant
    with pytest.raises(EloError, match="named 'random'"):
        load_entrants([rand_pong, _fake_run(tmp_path / "rp2", "agent.random", pong), llm],
                      parse_names([f"{rand_pong}=random", f"{tmp_path / 'rp2'}=random"]))
    ents = load_entrants([rand_pong, tmp_path / "rp2"], parse_names([f"{tmp_path / 'rp2'}=random-2"]))
    twin = _fake_run(tmp_path / "elsewhere" / "rp", "agent.random", flappy)
    with pytest.raises(EloError, match="has the folder name of"):
        load_entrants([rand_pong, twin])  # same folder name, different runs: not merged unasked
    assert [e.name for e in load_entrants([rand_pong, twin, llm], parse_names([f"{twin}=rp"]))] == ["llm", "rp"]
    assert [e.name for e in ents] == ["random-2", "rp"]
    with pytest.raises(EloError, match="no such run folder"):
        load_entrants([rand_pong, tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(EloError, match="empty: not a run folder"):
        load_entrants([rand_pong, tmp_path / "empty"])
    other = tmp_path / "other"
    other.mkdir()
    (other / "episodes.jsonl").write_text(json.dumps({"episode_id": "ep00000", "metrics": {"success": 1}}) + "\n")
    with pytest.raises(EloError, match="other: no V-MAGE episodes"):
        load_entrants([rand_pong, other])
    with pytest.raises(EloError, match="rf: shares no \\(game, level, round\\)"):
        load_entrants([tmp_path / "rp2", rand_flappy])
    with pytest.raises(EloError, match="at least two"):
        load_entrants([rand_pong])
    cut = _fake_run(tmp_path / "cut", "agent.scripted", pong)
    lines = (cut / "episodes.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["metrics"]["reason"] = "stopped: run timeout"  # the run ended it, not the game
    (cut / "episodes.jsonl").write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n")
    ents = {e.name: e for e in load_entrants([rand_pong, cut])}
    assert len(ents["cut"].results) == 2 and ents["cut"].cut == 1


def test_anchoring_on_the_reply_text_of_an_llm_agents_step_records(tmp_path: Path) -> None:
    pong = {("pong", 1, 0): 1.0, ("pong", 1, 1): 1.0}
    llm = _fake_run(tmp_path / "llm", "agent.llm", pong, {"model": "model"})
    (llm / "steps").mkdir()
    replies = [("ep00000", 0, "a"), ("ep00000", 1, "a"), ("ep00000", 2, "b"),
               ("ep00001", 0, "x"), ("ep00001", 1, "y"), ("ep00001", 0, "z"), ("ep00001", 1, "z")]  # ep1 replayed
    (llm / "steps" / "agent.jsonl").write_text("".join(
        json.dumps({"episode": e, "t": t, "response": r, "action": "NONE"}) + "\n" for e, t, r in replies))
    rand = _fake_run(tmp_path / "rand", "agent.random", pong)
    ents = {e.name: e for e in load_entrants([llm, rand])}
    got = {k: (r.text_runs, r.texts) for k, r in ents["llm"].results.items()}
    assert got == {("pong", 1, 0): (2, 3), ("pong", 1, 1): (1, 2)}  # a a b; the replayed episode's z z
    assert all(r.text_runs is None for r in ents["rand"].results.values())
    res = anchoring(list(ents.values()))
    assert res["text_rounds"] == {"llm": {"pong": pytest.approx(5 / 3)}} and res["avg_text_rounds"]["llm"] == 5 / 3


def test_cli_refuses_with_the_run_folder_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _fake_run(tmp_path / "a", "agent.random", {("pong", 1, 0): 1.0})
    assert main([str(run), str(tmp_path / "nope")]) == 2
    assert f"{tmp_path / 'nope'}: no such run folder" in capsys.readouterr().err


def test_the_order_runs_are_given_in_changes_nothing(tmp_path: Path) -> None:
    cells = [("pong", lv, r) for lv in (1, 2, 3) for r in range(4)]
    rng = np.random.default_rng(5)
    runs = [_fake_run(tmp_path / n, "agent.random", {k: float(rng.integers(0, 3)) for k in cells}) for n in "abc"]
    names = [f"{r}={r.name}" for r in runs]
    outs = []
    for order in (runs, runs[::-1]):
        out = tmp_path / f"out{len(outs)}.json"
        assert main([*map(str, order), "--json", "--permutations", "300", "--out", str(out), *sum(
            (["--name", n] for n in names), [])]) == 0
        data = json.loads(out.read_text())
        data.pop("entrants")
        outs.append(data)
    assert outs[0] == outs[1]


def test_scripted_outranks_random_on_real_pong_runs(tmp_path: Path) -> None:
    """Two short real runs through the launcher, then `launch elo` in its own process, as a user would
    (it needs the framebus.commands entry point installed: `pip install -e .`)."""
    rand, scripted = tmp_path / "random", tmp_path / "scripted"
    for launch_file, out, extra in (("vmage_pong_random.yaml", rand, []),
                                    ("vmage_scripted.yaml", scripted, ["--set", "env.game=pong", "--set", "env.frame_cap=300"])):
        proc = launch("run", f"launch/{launch_file}", "--out", str(out), "--set", "run.episodes=6", *extra,
                      cwd=ROOT, timeout=240)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    args = ["elo", str(rand), str(scripted), "--permutations", "2000"]
    proc = launch(*args, "--json", cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads(proc.stdout)
    assert list(res["avg_elo"]) == ["scripted", "random"]
    assert res["per_game"]["pong"]["scripted"] > 1500 > res["per_game"]["pong"]["random"]
    assert res["matches"] == {"pong/1": 100, "pong/2": 100, "pong/3": 100}
    assert {e["episodes"] for e in res["entrants"].values()} == {6}
    assert res["entrants"]["random"]["random"] and res["entrants"]["scripted"]["model"] == "scripted"
    assert res["unit_test"]["baseline"] == ["random"] and res["unit_test"]["overall"]["scripted"] > 0.5
    # the tracker holds its paddles still between moves; random changes its reply about 4 times in 5
    anchor = res["anchoring"]["rounds"]
    assert anchor["scripted"]["pong"] > anchor["random"]["pong"] >= 1.0
    table = launch(*args, cwd=ROOT, timeout=120)
    assert table.returncode == 0, table.stderr
    for title in ("V-MAGE ELO (ours)", "Avg. ELO", "Unit tests", "Anchoring", "Table 2"):
        assert title in table.stdout
    lines = table.stdout.splitlines()
    assert next(i for i, l in enumerate(lines) if "scripted" in l) < next(i for i, l in enumerate(lines)
                                                                          if "│ random" in l)
