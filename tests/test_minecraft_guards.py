"""VAB-Minecraft's end rules and tip (nodes.game.minecraft.guards), one round at a time."""

from __future__ import annotations

import pytest

from nodes.game.minecraft.guards import TIP, Guard, gives_up


def play(guard: Guard, rounds: list[tuple[str, bool, float]]) -> list:
    """The ending after each round (None while the episode goes on)."""
    return [guard.record(action, failed, reward) for action, failed, reward in rounds]


def varied(n: int, *, failed: bool = False, reward=lambda i: float(i)) -> list[tuple[str, bool, float]]:
    return [(f'craft("item{i}")', failed, reward(i)) for i in range(n)]


def test_a_held_target_ends_the_episode_as_completed_before_any_other_rule():
    guard = Guard()
    endings = play(guard, varied(3))
    assert endings == [None, None, None]
    ending = guard.record('craft("cake")', False, 0.5, target_held=True)
    assert ending is not None and (ending.status, ending.reason) == ("completed", "target obtained")


def test_one_hundred_actions_end_the_episode():
    guard = Guard()
    endings = play(guard, varied(100))  # rewards grow: no other rule fires
    assert endings[:99] == [None] * 99
    assert endings[99] is not None and (endings[99].status, endings[99].reason) == ("task limit reached",
                                                                                      "round limit")


def test_a_target_reached_on_the_last_round_still_counts():
    guard = Guard(rounds=3)
    play(guard, varied(2))
    assert guard.record("x", False, 1.0, target_held=True).status == "completed"


def test_fifteen_failures_in_a_row_end_the_episode_once_nineteen_actions_are_taken():
    guard = Guard()
    endings = play(guard, varied(4) + varied(14, failed=True, reward=lambda i: 4.0 + i))
    assert endings == [None] * 18  # 14 failures so far
    ending = guard.record("a new idea", True, 100.0)
    assert ending is not None and (ending.status, ending.reason) == ("agent invalid action", "failed in a row")
    assert len(guard.actions) == 19


def test_fifteen_failures_from_the_start_wait_for_the_nineteenth_action():
    guard = Guard()
    endings = play(guard, varied(19, failed=True))
    assert endings[:18] == [None] * 18 and endings[18].reason == "failed in a row"


def test_one_success_breaks_the_failure_run():
    guard = Guard()
    rounds = varied(19, failed=True)
    rounds[10] = (rounds[10][0], False, rounds[10][2])
    assert play(guard, rounds) == [None] * 19


def test_the_same_action_fifteen_times_is_the_task_limit():
    guard = Guard()
    endings = play(guard, varied(4) + [("execute(\"mine stone\")", False, 10.0 + i) for i in range(15)])
    assert endings[:18] == [None] * 18
    assert (endings[18].status, endings[18].reason) == ("task limit reached", "same action")


def test_the_same_action_is_compared_as_written():
    guard = Guard()
    rounds = varied(4) + [('execute("mine stone")', False, 10.0 + i) for i in range(15)]
    rounds[-1] = ("execute('mine stone')", False, 30.0)  # VAB compares the texts, so this is another action
    assert play(guard, rounds) == [None] * 19


def test_no_reward_growth_over_thirty_actions_after_thirty_nine_ends_the_episode():
    guard = Guard()
    rewards = [0.1 * min(i, 9) for i in range(39)]  # grows until action 9, then flat
    endings = play(guard, [(f"a{i}", False, r) for i, r in enumerate(rewards)])
    assert endings[:38] == [None] * 38
    assert (endings[38].status, endings[38].reason) == ("task limit reached", "no progress")


def test_growth_inside_the_window_keeps_the_episode_going():
    guard = Guard()
    rewards = [0.0] * 38 + [0.5]  # the last action scored
    assert play(guard, [(f"a{i}", False, r) for i, r in enumerate(rewards)]) == [None] * 39
    ending = None
    i = 39
    while ending is None:  # flat again: the window must slide past the rise before it fires
        ending = guard.record(f"a{i}", False, 0.5)
        i += 1
    assert ending.reason == "no progress" and len(guard.actions) == 39 + 29


def test_a_growth_below_vabs_slack_does_not_count():
    guard = Guard()
    rewards = [0.0] * 38 + [0.0009]
    endings = play(guard, [(f"a{i}", False, r) for i, r in enumerate(rewards)])
    assert endings[-1] is not None and endings[-1].reason == "no progress"


def test_giving_up_through_execute_is_caught_before_the_action():
    assert gives_up('execute("terminate")') and gives_up("execute('task_complete', 'x', 1)")
    assert not gives_up('craft("terminate")') and not gives_up('execute("mine stone")')
    guard = Guard()
    assert guard.before('execute("mine stone")') is None
    ending = guard.before('execute("terminate the task")')
    assert ending is not None and (ending.status, ending.reason) == ("task failed", "gave up")
    assert guard.actions == []  # the action is not carried out, so not recorded


def test_an_ended_episode_takes_no_more_rounds():
    guard = Guard(rounds=1)
    guard.record("a", False, 0.0)
    with pytest.raises(RuntimeError, match="already ended"):
        guard.record("b", False, 0.0)


@pytest.mark.parametrize("spawn_resources, tipped", [(True, [20, 28, 36, 44, 52, 60, 68, 76, 84, 92]),
                                                     (False, [])])
def test_the_teleport_tip_follows_the_20th_28th_36th_action_when_the_task_spawned_resources(spawn_resources,
                                                                                            tipped):
    guard = Guard(spawn_resources=spawn_resources)
    seen = [] if guard.tip() is None else [0]
    for action, failed, reward in varied(99):
        guard.record(action, failed, reward)
        if guard.tip() is not None:
            seen.append(len(guard.actions))
    assert seen == tipped
    assert "teleport_to_spawn()" in TIP
