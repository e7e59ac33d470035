"""V-MAGE's games in one process: the spec's level tables, the end and score rules, determinism,
frames, and the scripted policies beating random (no bus here; tests/test_vmage_env.py has it)."""

from __future__ import annotations

import random
import statistics

import numpy as np
import pytest

from nodes.game.vmage import flappy
from nodes.game.vmage.base import FRAME_CAP, Game, decide, play, render, scaled_size
from nodes.game.vmage.catalog import GAMES, cells, episode_cell, template_for
from nodes.game.vmage.flappy import FlappyBird, Pipe
from nodes.game.vmage.pong import Pong


def random_play(game: Game, seed: int = 0, limit: int | None = None) -> Game:
    rng = random.Random(seed)
    return play(game, lambda g: rng.choice(g.level.actions), limit=limit)


# --- the level tables (spec §2.3, §2.4) ---------------------------------------------------------------
def test_pong_levels_are_the_specs():
    assert sorted(Pong.levels) == [1, 2, 3]
    table = {n: (lv.settings["paddle"], lv.settings["ball"], lv.settings["paddle_speed"], lv.settings["ball_speed"])
             for n, lv in Pong.levels.items()}
    assert table == {1: ((10, 200), 40, 5, 4), 2: ((10, 150), 30, 8, 8), 3: ((10, 100), 20, 10, 12)}
    for lv in Pong.levels.values():
        assert lv.actions == ("LEFTUP", "LEFTDOWN", "RIGHTUP", "RIGHTDOWN", "NONE") and lv.idle == "NONE"
        assert lv.sample_frames == 3 and lv.max_rounds is None
    assert Pong.size == (800, 600)


def test_flappybird_levels_and_their_action_sets_are_the_specs():
    assert sorted(FlappyBird.levels) == list(range(1, 8))
    rows = {n: (lv.actions, lv.settings["gravity"], lv.settings["speed"], lv.settings["gap"], lv.settings["every"],
                lv.sample_frames) for n, lv in FlappyBird.levels.items()}
    no_gravity, keep = ("UP", "DOWN", "KEEP"), ("UP", "KEEP", "NONE")
    assert rows == {1: (no_gravity, 0.0, 5, 400, 70, 5), 2: (no_gravity, 0.0, 5, 270, 70, 5),
                    3: (no_gravity, 0.0, 10, 270, 50, 5), 4: (keep, 0.25, 5, 350, 70, 3),
                    5: (keep, 0.25, 5, 350, 70, 3), 6: (keep, 0.25, 5, 350, 70, 3),
                    7: (("UP", "NONE"), 0.25, 5, 400, 70, 3)}
    assert all(lv.max_rounds is None for lv in FlappyBird.levels.values())
    assert [FlappyBird.levels[n].idle for n in range(1, 8)] == ["KEEP"] * 3 + ["NONE"] * 4
    assert flappy.JUMP == 7 and FlappyBird.size == (576, 1024)
    assert [template_for("flappybird", n) for n in (1, 4, 7)] == [
        "vmage_flappybird_no_gravity", "vmage_flappybird_keep", "vmage_flappybird"]


def test_cells_deal_levels_round_robin_and_name_the_allowed_levels():
    all_cells = cells("flappybird", "all")
    assert len(all_cells) == 7 and episode_cell(all_cells, 9) == ("flappybird", 3, 1)
    assert episode_cell(cells("pong", 2), 5) == ("pong", 2, 5)  # one level: the seed is the episode index
    with pytest.raises(ValueError, match=r"level: 4 is not a level of pong; allowed: 1-3"):
        cells("pong", [1, 4])
    with pytest.raises(ValueError, match="unknown game 'tetris'; allowed: pong, flappybird"):
        cells("tetris", 1)


# --- the decision loop ---------------------------------------------------------------------------------
def test_a_decision_holds_its_action_for_the_sample_frames():
    game = Pong(1, 0)
    y = game.left_y
    assert decide(game, "LEFTUP", 3, None) == 3 and game.frame == 3
    assert game.left_y == y - 3 * 5  # held for all three frames at paddle speed 5
    assert decide(game, "LEFTDOWN", 3, None, repeat=False) == 3
    assert game.left_y == y - 3 * 5 + 5  # once, then the idle action (TempestRun's rule)


def test_the_frame_limit_ends_an_episode_as_max_rounds():
    game = play(Pong(1, 0), lambda g: g.policy(), limit=100)
    assert game.over and game.reason == "max_rounds" and game.frame == 100
    assert FRAME_CAP == 3000


# --- Pong's rules --------------------------------------------------------------------------------------
def test_pong_ends_at_the_first_miss_and_sums_both_paddles():
    game = Pong(2, 1)
    game.ball_x, game.ball_y, game.vx, game.vy = 300.0, 300.0, -8.0, 0.0
    game.left_y = 0.0  # far from the ball
    while not game.over:
        decide(game, "NONE", 3, None)
    assert game.reason == "the left paddle missed the ball" and game.score == 0.0
    assert "Game Over, You got 0 score." == game.info()

    game = Pong(1, 1)
    returns = []
    while not game.over and game.frame < 3000:
        before = list(game.hits)
        decide(game, game.policy(), 3, None)
        returns += [i for i in (0, 1) if game.hits[i] > before[i]]
    assert game.hits[0] > 0 and game.hits[1] > 0 and game.score == game.hits[0] + game.hits[1]
    assert set(returns) == {0, 1}


def test_pong_draws_a_new_vertical_speed_on_each_return():
    game = Pong(3, 4)
    speeds = []
    while len(speeds) < 6 and not game.over:
        hits = sum(game.hits)
        decide(game, game.policy(), 3, None)
        if sum(game.hits) > hits:
            speeds.append(game.vy)
    assert len(set(speeds)) == 6 and all(abs(v) <= 12 for v in speeds)


# --- FlappyBird's rules --------------------------------------------------------------------------------
def test_flappybird_without_gravity_moves_only_on_up_and_down():
    game = FlappyBird(1, 0)
    y = game.y
    decide(game, "KEEP", 5, None)
    assert game.y == y
    decide(game, "UP", 5, None)
    assert game.y == y - 5 * 7
    decide(game, "DOWN", 5, None)
    assert game.y == y


def test_flappybird_with_gravity_falls_on_none_holds_on_keep_and_flaps_on_up():
    game = FlappyBird(4, 0)
    y = game.y
    decide(game, "KEEP", 3, None)
    assert game.y == y
    decide(game, "NONE", 3, None)
    assert game.y == pytest.approx(y + 0.25 + 0.5 + 0.75)
    decide(game, "UP", 3, None)
    assert game.y < y


def test_flappybird_ends_on_a_pipe_the_ground_or_the_top_and_scores_a_pipe_pair_passed():
    game = FlappyBird(7, 0)
    while not game.over:
        decide(game, "NONE", 3, None)
    assert game.reason == "the bird hit the ground" and game.score == 0

    game = FlappyBird(7, 0)
    while not game.over:
        decide(game, "UP", 3, None)
    assert game.reason == "the bird flew out of the top of the screen"

    game = FlappyBird(1, 0)
    game.pipes = [Pipe(flappy.BIRD_X + 10, 0.0)]  # the gap ends far above the bird
    game.frame = 1  # no new pipe this frame
    game.tick("KEEP")
    assert game.over and game.reason == "the bird hit a pipe"

    game = FlappyBird(1, 0)
    game.frame = 1
    game.pipes = [Pipe(flappy.BIRD_X - flappy.PIPE_W + 2, game.y - 100)]  # the bird is inside the gap
    game.tick("KEEP")
    assert not game.over and game.score == 1.0 and game.pipes[0].passed
    game.tick("KEEP")
    assert game.score == 1.0  # a pair counts once


# --- determinism and frames ----------------------------------------------------------------------------
@pytest.mark.parametrize("name,level", [("pong", 2), ("flappybird", 3), ("flappybird", 7)])
def test_the_same_seed_plays_the_same_frames_and_another_seed_does_not(name, level):
    def film(seed: int) -> tuple[list[bytes], float]:
        game, rng, shots = GAMES[name](level, seed), random.Random(99), []
        for _ in range(12):
            decide(game, rng.choice(game.level.actions), game.level.sample_frames, None)
            shots.append(render(game).tobytes())
        return shots, game.score

    assert film(5) == film(5)
    assert film(5)[0] != film(6)[0]


def test_frames_are_the_whole_window_scaled_to_360_high_with_the_hud():
    pong, bird = Pong(1, 0), FlappyBird(1, 0)
    assert render(pong).shape == (360, 480, 3) and render(bird).shape == (360, 202, 3)
    assert render(pong, 240).shape == (240, 320, 3) and scaled_size((576, 1024), 480) == (270, 480)
    assert render(pong).dtype == np.uint8
    top = render(pong, 600)[:50]  # the score line "Player A: 0   Player B: 0" is drawn at the top
    assert (top.max(axis=2) > 200).sum() > 200
    before = render(bird, 1024)[40:180].copy()
    bird.score = 7.0  # the digits at the top change with the score
    assert not np.array_equal(before, render(bird, 1024)[40:180])


# --- baselines -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pong", "flappybird"])
def test_the_scripted_policy_beats_random_on_every_level(name):
    for level in GAMES[name].levels:
        seeds = range(8)
        scripted = statistics.mean(play(GAMES[name](level, s), lambda g: g.policy(), limit=900).score for s in seeds)
        rand = statistics.mean(random_play(GAMES[name](level, s), s).score for s in seeds)
        assert scripted > rand + 1, (name, level, scripted, rand)


def test_random_pong_sits_near_the_papers_random_on_level_1():
    scores = [random_play(Pong(1, s), s).score for s in range(40)]
    assert 0.3 < statistics.mean(scores) < 1.2  # the paper's random: 0.63
