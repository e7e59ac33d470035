"""JudgeNode and the typed step record on the in-memory runtime of kernel.testing: no processes, milliseconds.

The environment side is the guess game of docs/nodes.md (tests/toy_env.py) played by a scripted
clock; its published step bodies go to the judge of docs/nodes.md (tests/toy_judge.py) as messages,
so both ends of the step stream are the real bases."""

from __future__ import annotations

from typing import Any

import pytest

from kernel.sdk.env import StepResult
from kernel.sdk.env_wrappers import TimeLimit
from kernel.sdk.judge import JudgedEpisode, JudgeNode, Unscored
from kernel.sdk.steps import StepRecord, StepRecordError, episode_labels, parse_step, stop_reason
from kernel.testing import FakeRuntime
from tests.toy_env import GuessEnv
from tests.toy_judge import GuessJudge


async def play_guess(script: list[Any], episodes: int = 1, **params: Any) -> FakeRuntime:
    """The guess game (secret 12 for seed 0 with size 16) played to the end; its runtime holds what it sent."""
    rt = FakeRuntime(GuessEnv(), "env", params=params, actions=script, episodes=episodes,
                     readers={"step": ["judge"] if params.get("judge") else []})
    await rt.play(teardown=False)
    return rt


async def make_judge(cls: type[JudgeNode] = GuessJudge, **params: Any) -> tuple[JudgeNode, FakeRuntime]:
    judge = cls()
    rt = FakeRuntime(judge, "judge", params=params, sources={"step": ["env"]})
    await judge.setup()
    return judge, rt


async def feed(judge: JudgeNode, bodies: list[Any], src: str = "env") -> None:
    for body in bodies:
        await judge._rt.deliver("step", body, src=src)  # type: ignore[attr-defined]


def record(episode: str, t: int, done: bool = False, **more: Any) -> dict[str, Any]:
    return {"episode": episode, "t": t, "action": "1", "valid": True, "reward": 0.0, "done": done, "info": {}, **more}


# -- the step record -----------------------------------------------------------------------------------------------
def test_a_body_is_parsed_once_into_a_typed_record_with_defaults_and_its_own_keys_kept():
    parsed = parse_step({"episode": "ep0", "t": 2, "done": True, "reward": 1, "rewards": {"a": 1.0}})
    assert parsed == {"episode": "ep0", "t": 2, "action": None, "valid": True, "reward": 1.0, "done": True,
                      "truncated": False, "info": {}, "rewards": {"a": 1.0}}
    assert isinstance(parsed["reward"], float)


def test_truncated_missing_from_an_older_record_is_read_where_it_was_kept():
    old = {"episode": "ep0", "t": 3, "done": True, "info": {"truncated": True}}
    assert parse_step(old)["truncated"] is True
    assert parse_step({**old, "truncated": False})["truncated"] is False  # the field wins where it is


@pytest.mark.parametrize("body, field", [
    ("a step", "mapping"), ({"t": 0, "done": False}, "episode"), ({"episode": "", "t": 0, "done": False}, "episode"),
    ({"episode": "e", "t": -1, "done": False}, "t"), ({"episode": "e", "t": True, "done": False}, "t"),
    ({"episode": "e", "t": 0, "done": 1}, "done"), ({"episode": "e", "t": 0, "done": False, "info": []}, "info"),
    ({"episode": "e", "t": 0, "done": False, "reward": "1"}, "reward"),
    ({"episode": "e", "t": 0, "done": False, "valid": None}, "valid"),
    ({"episode": "e", "t": 0, "done": False, "truncated": "yes"}, "truncated"),
    ({"episode": "e", "t": 0, "done": False, "attempt": 0}, "attempt"),
])
def test_a_malformed_body_is_refused_naming_what_is_wrong(body, field):
    with pytest.raises(StepRecordError, match=field):
        parse_step(body)


def test_a_stop_request_has_one_shape():
    assert stop_reason({"stop": True, "reason": "lost"}) == "lost"
    assert stop_reason({"stop": True}) == "stopped"
    assert stop_reason({"stop": False, "reason": "x"}) is None and stop_reason("left") is None


def test_time_limit_sets_the_field_and_keeps_the_info_key_older_readers_look_for():
    cut = TimeLimit(2).result(1, StepResult())
    assert cut.done and cut.truncated and cut.info == {"truncated": True}


# -- env to judge ----------------------------------------------------------------------------------------------------
async def test_the_labels_are_the_same_whether_the_env_or_a_judge_ends_the_episode():
    script = ["99", "8", {"stop": True, "reason": "bored"}]  # invalid, a wrong guess, then a stop request
    alone = await play_guess(script)
    judged = await play_guess(script, judge=True)
    assert judged.requested("episode.end") == []  # a judge reads step: the env leaves the ending to it
    judge, rt = await make_judge()
    await feed(judge, judged.bodies("step"))
    (by_env,), (by_judge,) = alone.requested("episode.end"), rt.requested("episode.end")
    labels = {k: by_env["metrics"][k] for k in ("steps", "invalid", "stopped")}
    assert labels == {"steps": 3, "invalid": 1, "stopped": True}
    assert {k: by_judge["metrics"][k] for k in labels} == labels and by_judge["status"] == "completed"
    assert judged.bodies("step")[-1]["info"]["stopped"] == "bored"  # the reason travels in the record


async def test_truncated_travels_as_a_field_from_the_env_to_the_judge():
    rt = await play_guess(["0", "1"], judge=True, max_steps=2)  # the secret is 12: never found
    last = rt.bodies("step")[-1]
    assert last["done"] and last["truncated"] is True and rt.bodies("step")[0]["truncated"] is False
    judge, jrt = await make_judge()
    await feed(judge, rt.bodies("step"))
    assert jrt.requested("episode.end")[0]["metrics"]["truncated"] is True
    found = await play_guess(["8", "12"], judge=True, max_steps=2)  # found on the last allowed guess
    assert found.bodies("step")[-1]["done"] and found.bodies("step")[-1]["truncated"] is False


async def test_scores_and_the_summary_section_are_in_place_before_the_episode_ends():
    rt = await play_guess(["8", "12", "4"], episodes=2, judge=True)  # secrets 12 and 4: 2 guesses, then 1
    judge, jrt = await make_judge()
    assert jrt.summary_sections == {}  # nothing to say yet
    await feed(judge, rt.bodies("step"))
    ends = jrt.requested("episode.end")
    assert [e["metrics"]["score"] for e in ends] == [50.0, 100.0]
    assert [e["episode"] for e in ends] == ["ep00000", "ep00001"] and all("attempt" not in e for e in ends)
    assert jrt.summary_sections["guess"] == {"episodes": 2, "mean_score": 75.0}


# -- per-episode state -------------------------------------------------------------------------------------------------
class Recording(JudgeNode):
    """Ends each episode with what it was given, and notes the order of its calls."""

    section = "recording"

    async def setup(self) -> None:
        self.seen: list[tuple[str, Any]] = []
        await super().setup()

    async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
        self.seen.append(("score", episode))
        if records[-1]["info"].get("unscorable"):
            raise Unscored("no way", {"level": 3})
        return {"ts": [r["t"] for r in records], "env": episode.env, "attempt": episode.attempt}

    def summary(self) -> dict[str, Any]:
        return {"scored": sum(1 for kind, _ in self.seen if kind == "score"), "unscored": self.unscored}

    async def finished(self, episode: JudgedEpisode) -> None:
        self.seen.append(("finished", episode.id))


async def test_interleaved_episodes_replays_and_attempts_each_keep_their_own_records():
    judge, rt = await make_judge(Recording)
    assert rt.summary_sections["recording"] == {"scored": 0, "unscored": 0}  # put in place by setup
    await feed(judge, [record("a", 0), record("b", 0), record("a", 1)], src="env1")
    await feed(judge, [record("b", 0)], src="env2")  # b played again from the start (abandoned, dealt again)
    await feed(judge, [record("a", 0, attempt=2), record("b", 1, done=True)], src="env2")
    await feed(judge, [record("a", 1, attempt=2, done=True)], src="env3")
    ends = {e["episode"]: e["metrics"] for e in rt.requested("episode.end")}
    assert ends == {"b": {"ts": [0, 1], "env": "env2", "attempt": 1}, "a": {"ts": [0, 1], "env": "env3", "attempt": 2}}
    assert judge._playing == {}  # nothing kept once an episode ended


async def test_an_unscorable_episode_ends_unscored_on_the_record_with_its_labels_and_reason():
    judge, rt = await make_judge(Recording)
    await feed(judge, [record("a", 0, info={"invalid": 1}),
                       record("a", 1, done=True, info={"invalid": 1, "stopped": "gave up", "unscorable": True})])
    (end,) = rt.requested("episode.end")
    assert end["status"] == "unscored" and end["metrics"] == {"steps": 2, "invalid": 1, "stopped": True, "level": 3,
                                                            "reason": "no way"}
    assert rt.requested("run.error") == [{"kind": "recording.unscored", "message": "no way", "episode": "a"}]
    assert judge.unscored == 1 and rt.summary_sections["recording"] == {"scored": 1, "unscored": 1}
    assert [kind for kind, _ in judge.seen] == ["score", "finished"]


async def test_finished_runs_after_the_end_and_even_when_scoring_raises():
    class Broken(Recording):
        async def score(self, episode: JudgedEpisode, records: list[StepRecord]) -> dict[str, Any]:
            raise ValueError("a bug")

    judge, rt = await make_judge(Recording)
    ended_before: list[int] = []
    original = judge.finished

    async def finished(episode: JudgedEpisode) -> None:
        ended_before.append(len(rt.requested("episode.end")))
        await original(episode)

    judge.finished = finished  # type: ignore[method-assign]
    await feed(judge, [record("a", 0, done=True)])
    assert ended_before == [1]
    broken, brt = await make_judge(Broken)
    with pytest.raises(ValueError, match="a bug"):  # the runtime puts a failed handler on the record
        await feed(broken, [record("a", 0, done=True)])
    assert broken.seen == [("finished", "a")] and brt.requested("episode.end") == []


async def test_malformed_bodies_are_counted_and_on_the_record_at_powers_of_two():
    judge, rt = await make_judge(Recording)
    await feed(judge, ["junk", {"t": 0}, {"episode": "a"}, 7, {"episode": "b", "t": "x", "done": False}])
    assert judge.malformed == 5 and rt.requested("episode.end") == []
    errors = rt.requested("run.error")
    assert [e["kind"] for e in errors] == ["judge.malformed_step"] * 3  # the 1st, 2nd and 4th
    assert "mapping" in errors[0]["message"] and "(4x)" in errors[2]["message"] and errors[2]["episode"] is None
    await feed(judge, [record("c", 0), {"episode": "c", "t": 1, "done": True, "reward": "lots"}])
    (end,) = rt.requested("episode.end")  # a malformed last step still ends its episode, failed, not left open
    assert end["episode"] == "c" and end["status"] == "failed" and "reward" in end["metrics"]["reason"]
    assert judge._playing == {}


def test_labels_come_from_the_last_record():
    last = parse_step(record("a", 4, done=True, info={"invalid": 2, "stopped": "why"}))
    assert episode_labels(last) == {"steps": 5, "invalid": 2, "stopped": True}
    assert episode_labels(parse_step(record("a", 0, done=True))) == {"steps": 1, "invalid": 0, "stopped": False}


def test_replay_transcripts_say_truncated_for_new_and_older_recordings():
    from kernel.tools.record import Recorded
    from kernel.tools.replay import Decision, EpisodeTrace, transcript

    def trace(step: Any) -> str:
        obs = Recorded("env/obs", "env", "obs", 0, 0, 0, {"text": "at 0"})
        return transcript(EpisodeTrace("ep0", [Decision(0, obs, {"agent": "1"}, step)]))

    new = {"episode": "ep0", "t": 0, "done": True, "truncated": True, "info": {}}
    old = {"episode": "ep0", "t": 0, "done": True, "info": {"truncated": True}}  # before it was a field
    assert "done True, truncated" in trace(new) and "done True, truncated" in trace(old)
    assert "truncated" not in trace({**new, "truncated": False}) and "truncated" not in trace({"odd": 1})
