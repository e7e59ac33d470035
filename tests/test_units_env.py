"""EnvNode's loop on the in-memory runtime of kernel.testing: no processes, no sockets, milliseconds."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kernel.sdk.env import EnvNode, Observation, StepResult
from kernel.sdk.env_wrappers import FrameResize, TimeLimit
from kernel.sdk.node import Episode
from kernel.testing import FakeRuntime


class Walk(EnvNode):
    """Walk right from 0 to 3."""

    env = "walk"

    async def reset(self, episode: Episode) -> None:
        self.x = 0
        self.rendered = 0

    def observe(self) -> Observation:
        return {"actions": ["left", "right"], "idle": None, "text": f"at {self.x}"}

    def render(self) -> Any:
        self.rendered += 1
        return np.full((4, 6, 3), self.x, np.uint8)

    async def step(self, action: str | None) -> StepResult:
        self.x += {"left": -1, "right": 1, None: 0}[action]
        return StepResult(reward=float(self.x == 3), done=self.x == 3, info={"success": self.x == 3})


async def play(script: list[Any], episodes: int = 1, readers: tuple[str, ...] = (), observers: tuple[str, ...] = (),
               **params: Any) -> tuple[Walk, FakeRuntime]:
    env = Walk()
    rt = FakeRuntime(env, "env", params=params, actions=script, episodes=episodes, readers={"step": readers},
                     observers=observers)
    await rt.play(teardown=False)
    return env, rt


async def test_the_loop_publishes_obs_then_step_and_ends_the_episode_itself_without_a_judge():
    env, rt = await play(["right", "right", "right"])
    # each step's record follows the next observation (off the agent's path); the last goes at once
    assert [o for o, _, _ in rt.published] == ["obs", "obs", "step", "obs", "step", "step"]
    obs = rt.bodies("obs")
    assert [(o["env"], o["episode"], o["t"], o["text"]) for o in obs] == [("walk", "ep00000", t, f"at {t}") for t in range(3)]
    steps = rt.bodies("step")
    assert [s["action"] for s in steps] == ["right"] * 3 and [s["done"] for s in steps] == [False, False, True]
    assert all(s["valid"] and s["info"]["invalid"] == 0 and s["info"]["stopped"] is False for s in steps)
    assert [step for _, _, step in rt.published] == [0, 1, 0, 2, 1, 2]
    assert rt.ended() == [{"episode": "ep00000", "status": "completed", "attempt": 1,  # the attempt it played
                           "metrics": {"steps": 3, "invalid": 0, "stopped": False, "success": 1.0}}]


async def test_with_a_judge_reading_step_the_env_leaves_the_ending_to_it():
    _, rt = await play(["right"] * 3, readers=("judge",))
    assert rt.bodies("step")[-1]["done"] and rt.ended() == []
    _, rt = await play(["right"] * 3, readers=("recorder",), judge=False)  # the param overrides the wiring
    assert len(rt.ended()) == 1


async def test_observers_reading_step_are_no_judge_so_the_env_still_ends_its_episodes():
    # the recorder of --record and the console of --ui read step; taken for a judge, they left every
    # episode of a judge-less graph unended (0/3 after 30 s)
    _, rt = await play(["right"] * 3, episodes=2, readers=("console", "recorder"), observers=("console", "recorder"))
    assert [e["episode"] for e in rt.ended()] == ["ep00000", "ep00001"]
    _, rt = await play(["right"] * 3, readers=("judge", "recorder"), observers=("recorder",))
    assert rt.ended() == []  # a judge of the launch file still ends them


@pytest.mark.parametrize("bad", ["jump", 7, {"move": "right"}, ["right"], b"right"])
async def test_an_invalid_action_is_a_spent_step_applying_nothing_and_is_counted(bad):
    env, rt = await play([bad, None, bad, "right", "right", "right"])
    steps = rt.bodies("step")
    assert [s["valid"] for s in steps] == [False, True, False, True, True, True]
    assert [s["action"] for s in steps[:3]] == [None, None, None] and steps[2]["info"]["invalid"] == 2
    assert rt.ended()[0]["metrics"]["invalid"] == 2 and rt.ended()[0]["metrics"]["steps"] == 6


async def test_a_stop_request_ends_the_episode_as_a_failure():
    _, rt = await play(["right", {"stop": True, "reason": "lost"}, "right"], episodes=2)  # then "script over"
    first = rt.bodies("step")[1]
    assert first["done"] and first["valid"] and first["action"] is None and first["info"]["stopped"] == "lost"
    assert rt.ended()[0]["metrics"] == {"steps": 2, "invalid": 0, "stopped": True, "success": 0.0}
    assert rt.bodies("obs")[2]["episode"] == "ep00001" and rt.bodies("obs")[2]["t"] == 0
    assert rt.ended()[1]["metrics"]["steps"] == 2 and rt.bodies("step")[-1]["info"]["stopped"] == "script over"


async def test_frames_are_off_by_default_and_not_even_rendered():
    env, rt = await play(["right"] * 3)
    assert env.rendered == 0 and all("frame" not in o for o in rt.bodies("obs"))
    env, rt = await play(["right"] * 3, frames=True, frame_size=(3, 2))
    frames = [o["frame"] for o in rt.bodies("obs")]
    assert env.rendered == 3 and [f.shape for f in frames] == [(2, 3, 3)] * 3 and frames[2][0, 0, 0] == 2


async def test_max_steps_truncates_the_episode():
    _, rt = await play(["left"] * 10, max_steps=4)
    steps = rt.bodies("step")
    assert len(steps) == 4 and steps[-1]["done"] and steps[-1]["info"]["truncated"]
    assert "truncated" not in steps[-2]["info"] and rt.ended()[0]["metrics"]["success"] == 0.0


def test_wrappers_on_their_own():
    frame = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    small = FrameResize(3, 2).resize(frame)
    assert small.shape == (2, 3, 3) and (small[1, 2] == frame[2, 4]).all()
    limit = TimeLimit(2)
    assert not limit.result(0, StepResult()).done
    done = limit.result(1, StepResult(info={"a": 1}))
    assert done.done and done.info == {"a": 1, "truncated": True}
    assert "truncated" not in limit.result(1, StepResult(done=True)).info
    with pytest.raises(ValueError):
        TimeLimit(0)
