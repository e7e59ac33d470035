"""BALROG's NetHack pack: the action vocabulary, the language view, the progression metric on a
hand-made episode whose value is known, the terminal picture, and random episodes through the bus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernel.sdk.judge import Unscored
from nodes.game.nethack import language
from nodes.game.nethack.actions import DEFAULT_ACTION, NAMED, vocabulary
from nodes.game.nethack.progress import Progress, progression, table
from nodes.judge.nethack import score_records
from tests.helpers import launch

nle = pytest.importorskip("nle", reason="nle is not installed (setup.sh installs nle==1.3.0 with --no-deps)")


def test_vocabulary_names_every_useful_action_and_the_single_keys():
    from nle import nethack

    vocab = vocabulary([int(a) for a in nethack.USEFUL_ACTIONS])
    assert len(vocab) == 86 + 52 + 10
    assert vocab["north"] == ord("k") and vocab["far east"] == ord("L") and vocab["more"] == 13
    assert vocab["esc"] == 27 and DEFAULT_ACTION in vocab
    assert vocab["a"] == ord("a") and vocab["Z"] == ord("Z") and vocab["7"] == ord("7")
    assert "00" not in vocab  # BALROG lists two-digit strings, but no key plays them
    with pytest.raises(ValueError, match="without a BALROG name"):
        vocabulary([999])
    assert len(set(NAMED.values())) == len(NAMED)


@pytest.mark.parametrize("dx,dy,word", [(1, 0, "east"), (0, -2, "south"), (-1, 1, "northwest"),
                                        (3, 1, "eastnortheast"), (-1, -4, "southsouthwest"), (2, 2, "northeast")])
def test_direction_words_follow_the_language_wrapper(dx, dy, word):
    assert language.direction_word(dx, dy) == word


@pytest.mark.parametrize("steps,word", [(1, "adjacent"), (2, "very near"), (5, "near"), (6, "far"), (19, "far"),
                                        (20, "very far")])
def test_distance_words(steps, word):
    assert language.distance_word(steps) == word


def _tty(*rows: str) -> np.ndarray:
    out = np.full((24, 80), ord(" "), np.uint8)
    for i, row in enumerate(rows):
        out[i, :len(row)] = np.frombuffer(row.encode(), np.uint8)
    return out


def test_message_reads_a_multi_line_page_down_to_its_mark():
    assert language.message(_tty("", "   ...")) == ""
    assert language.message(_tty("You see here a dagger.", "  |...|")) == "You see here a dagger."
    page = _tty("  Things that are here:", "  a dagger", "  a gem --More--", "  |....")
    assert language.message(page) == "Things that are here:\na dagger\na gem --More--"


def _screen(things: dict[tuple[int, int], str]) -> np.ndarray:
    out = np.zeros((21, 79, 80), np.uint8)
    for (x, y), name in things.items():
        out[y, x, :len(name)] = np.frombuffer(name.encode(), np.uint8)
    return out


def test_things_in_view_name_kind_distance_and_directions_nearest_first():
    blstats = np.zeros(27, np.int64)
    blstats[language.X], blstats[language.Y] = 5, 5
    screen = _screen({(5, 5): "human knight called Agent", (6, 6): "tame kitten", (10, 5): "doorway",
                      (5, 1): "doorway", (9, 9): "wall", (4, 5): "wall", (7, 5): "floor of a room"})
    text = language.things_in_view(screen, blstats)
    assert text.splitlines() == ["tame kitten adjacent southeast", "wall adjacent west",
                                 "doorway near north and east"]


def test_a_real_state_renders_in_both_modes_and_as_a_picture():
    import gymnasium

    from nodes.game.nethack import tty_image
    from nodes.game.nethack.node import OBS_KEYS

    env = gymnasium.make("NetHackChallenge-v0", observation_keys=OBS_KEYS, disable_env_checker=True)
    try:
        obs, _ = env.reset(seed=3)
        hybrid, words = language.render(obs, "hybrid"), language.render(obs, "language")
        for part in ("message:\n", "language observation:\n", "cursor:\n", "inventory:\n"):
            assert part in hybrid and part in words
        assert "map:\n" in hybrid and "statistics:\n" not in hybrid
        assert "statistics:\n" in words and "Depth: 1" in words and "map:\n" not in words
        # NetHackChallenge refuses seeds, so the first message is whatever the game opened with
        # ("welcome to NetHack", or "$ - 7 gold pieces." when it starts on gold)
        assert "Dlvl:1" in hybrid and language.message(obs["tty_chars"]) in hybrid
        frame = tty_image.frame(obs["tty_chars"], obs["tty_colors"])
        assert frame.shape == (24 * 14, 80 * 8, 3) and frame.dtype == np.uint8 and frame.max() > 0
    finally:
        env.close()


def _records(levels: list[tuple[int, int]]) -> list[dict]:
    return [{"episode": "e", "t": t, "action": "north", "valid": True, "reward": 0.0, "done": t == len(levels) - 1,
             "truncated": False, "info": {"depth": d, "experience_level": xl, "score": 10 * t}}
            for t, (d, xl) in enumerate(levels)]


def test_progression_of_a_hand_made_episode_is_the_highest_table_value_reached():
    levels = [(1, 1), (1, 2), (2, 2), (3, 2), (3, 3), (2, 3)]
    # BALROG's table: Dlvl:3 = 0.017539..., Xp:3 = 0.020811...: the experience level wins
    assert table()["Xp:3"] == pytest.approx(0.02081163581974355)
    assert progression(levels) == pytest.approx(0.02081163581974355)
    metrics = score_records(_records(levels))
    assert metrics["progression"] == pytest.approx(0.02081163581974355)
    assert metrics["progression_percent"] == pytest.approx(2.081163581974355)
    assert metrics["highest_achievement"] == "Xp:3" and metrics["max_depth"] == 3 and metrics["score"] == 50
    assert score_records(_records([(1, 1)] * 4))["progression"] == 0.0
    deep = Progress()
    deep.update(10, 1)
    assert deep.progression == pytest.approx(0.12558597019922987) and deep.highest_achievement == "Dlvl:10"
    with pytest.raises(Unscored, match="nethack.env"):
        score_records([{**_records([(1, 1)])[0], "info": {}}])


def test_nethack_random_runs_episodes_through_the_bus(tmp_path):
    out = tmp_path / "run"
    result = launch("run", "nethack_random.yaml", "--episodes", "2", "--set", "env.max_steps=100",
                    "--out", str(out), timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"]["completed"] == 2
    section = summary["nethack"]
    assert section["episodes"] == 2 and 0.0 <= section["progression_percent"] < 5.0
    assert section["max_depth"] >= 1 and "balrog_published" in section
    assert 1 <= section["steps_mean"] <= 100
