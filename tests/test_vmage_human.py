"""A person plays V-MAGE: every action of the 33 configurations has a key under the bindings
agent.human works out with launch/vmage_human.yaml's ``keys``, the keys line names them, and a real
player in a (dummy-driver) pygame window drives the real env through the bus in lockstep."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

from kernel.testing import Harness
from nodes.agent.human import HumanParams, HumanPlayer, key_bindings, keys_line
from nodes.game.vmage.catalog import GAMES, cells
from tests.helpers import ROOT, launch

LAUNCH = ROOT / "launch" / "vmage_human.yaml"
ENV = "nodes.game.vmage.node:VmageEnv"


def player_params() -> dict[str, Any]:
    """The player's params as the bundled launch file gives them."""
    nodes = yaml.safe_load(LAUNCH.read_text())["nodes"]
    return next(n["params"] for n in nodes if n["id"] == "player")


def launch_keys() -> dict[str, str]:
    return HumanParams(**player_params()).keys


ALL = cells("all", "all")


def test_the_benchmark_has_33_configurations():
    assert len(ALL) == 33


@pytest.mark.parametrize("game, level", ALL, ids=[f"{g}-{n}" for g, n in ALL])
def test_every_action_of_every_configuration_has_a_key(game, level):
    lv = GAMES[game].levels[level]
    actions = list(lv.actions)
    keys = key_bindings(actions, lv.idle, launch_keys())
    bound = set(keys.values())
    # every action and the idle (what "do nothing" sends) by a named key, not only by its number
    assert set(actions) | {lv.idle} <= bound, f"{game} {level}: no key for {set(actions) | {lv.idle} - bound}"
    assert set(bound) <= set(actions) | {lv.idle}  # no key sends what the level does not offer
    assert len(keys) == len(bound)  # one key per action: the keys line stays short
    line = keys_line(keys, actions)
    assert all(f"{k}:{a}" in line for k, a in keys.items()) and f"1-{len(actions)}" in line


@pytest.mark.parametrize("game, level, expected", [
    ("pong", 1, {"w": "LEFTUP", "s": "LEFTDOWN", "up": "RIGHTUP", "down": "RIGHTDOWN", "space": "NONE"}),
    ("flappybird", 1, {"up": "UP", "down": "DOWN", "space": "KEEP"}),
    ("flappybird", 4, {"up": "UP", "k": "KEEP", "space": "NONE"}),
    ("flappybird", 7, {"up": "UP", "space": "NONE"}),
    ("race", 1, {"left": "LEFT", "right": "RIGHT", "up": "UP", "down": "DOWN", "space": "NONE"}),
    ("race", 6, {"left": "LEFT", "right": "RIGHT", "up": "FORWARD", "down": "BACKWARD", "space": "NONE"}),
    ("tempestrun", 2, {"left": "LEFT", "right": "RIGHT", "up": "RISE", "down": "SLIDE", "space": "JUMP", "n": "NONE"}),
    ("supermario", 3, {"left": "LEFT", "right": "RIGHT", "up": "UP", "q": "UP+LEFT", "e": "UP+RIGHT",
                       "space": "NONE"}),
])
def test_the_keys_are_the_natural_ones(game, level, expected):
    lv = GAMES[game].levels[level]
    assert key_bindings(list(lv.actions), lv.idle, launch_keys()) == expected


def test_a_binding_for_an_action_not_offered_is_skipped():
    # Pong's "up: RIGHTUP" from the launch file must not take the arrow from Race's UP
    keys = key_bindings(["LEFT", "RIGHT", "UP", "DOWN"], "NONE", {"up": "RIGHTUP", "w": "UP"})
    assert keys["w"] == "UP" and "up" not in keys  # UP has its key already, so the arrow stays free


def test_letters_are_options_only_where_the_env_letters_them():
    assert key_bindings(["red ball", "blue box"], None, lettered=True) == {"a": "red ball", "b": "blue box"}
    assert key_bindings(["red ball", "blue box"], None) == {"r": "red ball", "b": "blue box"}


def test_a_key_name_pygame_does_not_know_is_refused_naming_it():
    with pytest.raises(ValueError, match="'lft' is not a key name"):
        HumanParams(keys={"lft": "LEFT"})
    assert HumanParams(keys={"Left": "LEFT", "SPACE": "JUMP"}).keys == {"left": "LEFT", "space": "JUMP"}


@pytest.mark.parametrize("game", ["pong", "flappybird", "race", "tempestrun", "supermario"])
def test_the_launch_file_validates_for_every_game(game):
    result = launch("validate", str(LAUNCH), "--set", f"env.game={game}", timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("game, level, presses, expected", [
    # W/S the left paddle, the arrows the right one, space idles, "1" the first action, "x" is no key here
    ("pong", 1, ["w", "s", "x", "up", "down", "space", "1"], ["LEFTUP", "LEFTDOWN", "RIGHTUP", "RIGHTDOWN", "NONE",
                                                            "LEFTUP"]),
    ("flappybird", 1, ["up", "down", "space", "k", "3"], ["UP", "DOWN", "KEEP", "KEEP"]),  # k: KEEP is on space
    ("flappybird", 4, ["up", "k", "space"], ["UP", "KEEP", "NONE"]),
    ("tempestrun", 1, ["space", "down", "up", "n", "left"], ["JUMP", "SLIDE", "RISE", "NONE", "LEFT"]),
])
async def test_a_person_plays_through_the_env_in_lockstep(tmp_path, game, level, presses, expected):
    import pygame

    player = HumanPlayer()
    params = {**player_params(), "mode": "window"}
    async with Harness(quiet=True, episodes=1, run_dir=tmp_path) as h:
        h.add("env", ENV, params={"game": game, "level": level, "frames": True, "height": 540},
              inputs={"action": "player/action"}, clock={"mode": "lockstep"})
        h.add("judge", "judge.vmage", inputs={"step": {"from": "env/step", "policy": "block", "size": 64}})
        h.local("player", player, params=params, inputs={"obs": {"from": "env/obs", "policy": "latest"}})
        probe = h.probe(inputs={"step": {"from": "env/step", "policy": "fifo"}})
        await h.start()
        for name in [*presses, "escape"]:  # all pressed at once: each waits its turn for the next frame
            pygame.event.post(pygame.event.Event(pygame.KEYDOWN, key=pygame.key.key_code(name), mod=0, unicode="",
                                                 scancode=0))
        await h.wait_finished(60)
        steps = [(await asyncio.wait_for(probe.recv("step"), 10)).body for _ in range(len(expected) + 1)]
    assert [s["action"] for s in steps] == [*expected, None]
    assert all(s["valid"] and not s["done"] for s in steps[:-1])  # every key a valid action; the game went on
    assert all(s["info"]["played"] > 0 for s in steps[:-1])  # each one advanced the game
    assert steps[-1]["done"] and steps[-1]["info"]["stopped"]  # Escape gave the episode up
