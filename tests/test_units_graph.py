"""Unit tests of the launch process's bookkeeping: the episode book (dealing, ending, returning
episodes to the deck, the aggregates behind summary.json), its bitmap, the summary-section merge
rule and the kernel's service table. No process starts; each test takes milliseconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernel.graph import services
from kernel.graph.episodes import Bitmap, EpisodeBook
from kernel.graph.summary import BY_NODE, merge_sections


@pytest.fixture
def book(tmp_path: Path):
    book = EpisodeBook(4, 100, tmp_path)
    yield book
    book.close()


def test_bitmap_holds_what_was_added_and_grows_past_its_size():
    bits = Bitmap(3)
    for index in (0, 2, 9, 1000):
        bits.add(index)
    assert [i for i in range(1001) if i in bits] == [0, 2, 9, 1000]
    assert -1 not in bits and 5000 not in bits


def test_episodes_are_dealt_in_order_with_their_seeds_until_none_is_left(book):
    dealt = [book.deal("env") for _ in range(4)]
    assert [(e["id"], e["index"], e["seed"]) for e in dealt] == [
        ("ep00000", 0, 100), ("ep00001", 1, 101), ("ep00002", 2, 102), ("ep00003", 3, 103)]
    assert book.deal("env") is None and book.in_flight == 4 and book.owns_episodes("env")


def test_each_ended_record_is_told_to_its_listeners_once(book):
    """GraphEnv waits for an episode's result through on_record instead of polling the book."""
    heard: list[str] = []
    book.on_record.append(lambda rec: heard.append(f"{rec['episode_id']}:{rec['status']}:{rec['metrics']['x']}"))
    first, second = book.deal("env")["id"], book.deal("env")["id"]
    book.end(second, "completed", {"x": 2})
    book.end(first, "failed", {"x": 1})
    book.end(first, "completed", {"x": 9})  # ended twice: not told again
    assert heard == ["ep00001:completed:2", "ep00000:failed:1"]


def test_ending_counts_once_and_late_reports_change_nothing(book, tmp_path):
    eid = book.deal("env")["id"]
    book.report(eid, {"judge_note": 1})
    book.end(eid, "completed", {"score": 1.0})
    book.end(eid, "failed", {"score": 0.0})  # ended twice: the first result stands
    book.report(eid, {"score": 5.0})
    assert book.ended_count == 1 and book.is_ended(eid) and book.in_flight == 0
    assert book.records[eid]["metrics"] == {"judge_note": 1, "score": 1.0}
    assert book.records[eid]["node"] == "env"
    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["status"] for line in lines] == ["completed"]


def test_unknown_and_out_of_range_ids_are_refused(book):
    for eid in ("ep00004", "episode-1", "ep"):
        with pytest.raises(ValueError, match="unknown episode"):
            book.end(eid, "completed", {})


def test_means_are_over_completed_episodes_and_numeric_finite_metrics(book):
    for score, status in ((1.0, "completed"), (0.0, "completed"), (9.0, "failed")):
        book.end(book.deal("env")["id"], status, {"score": score, "tier": "v0", "ok": True, "bad": float("nan")})
    assert book.summary_metrics() == {"score": 0.5}
    assert book.counts() == {"total": 4, "completed": 2, "failed": 1}
    assert not book.done
    book.end(book.deal("env")["id"], "completed", {"score": 0.5})
    assert book.done and book.counts()["completed"] == 3


def test_a_dead_node_returns_its_episodes_to_the_deck_first(book):
    first, second = book.deal("env-0"), book.deal("env-1")
    lost = book.node_lost("env-0")
    assert lost == {first["id"]: "env-0"} and book.returned and book.in_flight == 1
    again = book.deal("env-1")
    assert again["id"] == first["id"]  # dealt again before any new episode
    book.end(again["id"], "completed", {"score": 1.0})
    assert book.records[first["id"]]["retries"] == 1
    assert book.deal("env-1")["id"] == "ep00002" and second["id"] == "ep00001"


def test_a_dead_judge_returns_every_episode_in_flight(book):
    dealt = {book.deal("env")["id"] for _ in range(2)}
    assert set(book.node_lost("judge", all_in_flight=True)) == dealt and book.in_flight == 0


def test_an_episode_that_keeps_losing_its_node_fails_after_the_retries(tmp_path):
    book = EpisodeBook(1, 0, tmp_path, max_retries=1)
    try:
        eid = book.deal("env")["id"]
        book.node_lost("env")
        assert book.deal("env")["id"] == eid
        book.node_lost("env")
        assert book.done and book.records[eid]["status"] == "failed" and book.deal("env") is None
    finally:
        book.close()


def test_a_returned_episode_whose_first_attempt_ended_is_not_dealt_again(book):
    eid = book.deal("env")["id"]
    book.node_lost("judge", all_in_flight=True)
    book.end(eid, "completed", {"score": 1.0})  # the first attempt ended after all
    assert not book.returned and book.deal("env")["id"] == "ep00001"


def test_a_reopened_book_skips_the_ended_episodes(tmp_path):
    book = EpisodeBook(3, 0, tmp_path)
    book.end(book.deal("env")["id"], "completed", {"score": 1.0})
    book.close()
    again = EpisodeBook(3, 0, tmp_path)
    try:
        assert again.resumed == 1 and again.deal("env")["id"] == "ep00001"
    finally:
        again.close()


def test_a_section_one_node_sends_is_written_as_sent():
    data = {"episodes": 2, "mean_reward": 0.25, "per_tier": {"a": {"rate": 0.5}}}
    assert merge_sections({"judge": {"football": data}, "env": {"football_env": {"frames": 7}}}) == {
        "football": data, "football_env": {"frames": 7}}


def test_several_nodes_add_counts_never_floats_and_keep_each_copy():
    a = {"episodes": 2, "mean": 0.5, "variant": "full", "ok": True, "tiers": {"v0": {"episodes": 2, "rate": 0.5}}}
    b = {"episodes": 1, "mean": 0.5, "variant": "full", "ok": False, "tiers": {"v0": {"episodes": 1, "rate": 1.0},
                                                                               "v1": {"episodes": 4}}}
    section = merge_sections({"judge_a": {"score": a}, "judge_b": {"score": b}})["score"]
    assert section == {"episodes": 3, "variant": "full", "tiers": {"v0": {"episodes": 3}, "v1": {"episodes": 4}},
                       BY_NODE: {"judge_a": a, "judge_b": b}}


def test_float_totals_and_disagreeing_values_stay_per_node():
    a, b = {"cost_usd": 0.25, "name": "x", "requests": 3}, {"cost_usd": 0.25, "name": "y", "requests": 4}
    section = merge_sections({"m1": {"model": a}, "m2": {"model": b}})["model"]
    assert section == {"requests": 7, BY_NODE: {"m1": a, "m2": b}}


def test_a_service_the_kernel_lacks_is_refused_with_the_ones_it_has():
    with pytest.raises(ValueError, match=r"no service 'nope'; it offers episode\.next, .*ctl\.stop, stats, status"):
        services.call(object(), "node", "nope", {})  # type: ignore[arg-type]


async def test_the_welcome_names_the_readers_a_flag_added_to_watch_and_no_judge(tmp_path):
    """--record and --ui add readers of every output; the kernel tells the environment which readers
    those are, so that it does not take them for a judge that will end its episodes."""
    from kernel.graph.core import Kernel
    from kernel.launchfile import load
    from kernel.tools.console import with_console
    from kernel.tools.record import with_recorder

    path = tmp_path / "g.yaml"
    path.write_text("nodes:\n"
                    "  - {id: env, uses: hello.env, inputs: {action: agent/action}}\n"
                    "  - {id: agent, uses: hello.agent, inputs: {obs: env/obs}}\n"
                    "  - {id: judge, uses: hello.judge, inputs: {step: env/step}}\n")

    def welcome(lf):
        kernel = Kernel(lf, tmp_path, "ipc:///nowhere")
        try:
            return kernel._welcome(lf.node("env"))
        finally:
            kernel.book.close()

    watched = welcome(with_console(with_recorder(load(path)), 1, "t" * 16))
    assert sorted(e["dst"] for e in watched["outputs"]["step"]) == ["console", "judge", "recorder"]
    assert watched["observers"] == ["console", "recorder"]
    assert welcome(load(path))["observers"] == []
