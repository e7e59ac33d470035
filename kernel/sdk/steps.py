"""The step record: what an environment says about each decision, read the same way by everyone.

An environment publishes one record per decision on ``step`` (docs/environments.md); judges,
``kernel.gym`` and the tools read them. Each reader used to pick the body apart by hand, and they
drifted: one counted a stop as ``stopped: "the reason"``, another as ``1``, a third as ``True``, and
Gymnasium's ``truncated`` went in as ``info.truncated`` to be fished out again by the bridge. Here a
body is parsed once into a typed :class:`StepRecord`, the labels every episode carries (steps,
invalid, stopped) come from one function, and a stop request is read by one function too.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = ["Labels", "StepRecord", "StepRecordError", "episode_labels", "parse_step", "stop_reason"]


class StepRecord(TypedDict):
    """The ``step`` body, one per applied decision, for judges and recorders. ``done`` is the last
    step of the episode, however it ended; ``truncated`` says it was cut off (a time limit) rather
    than ended by the game's own rules or a stop request (Gymnasium's ``truncated``)."""

    episode: str
    t: int
    action: Any  # what was applied: an action name, None (none or an invalid one); a mapping for several agents
    valid: bool
    reward: float
    done: bool
    truncated: bool
    info: dict[str, Any]
    attempt: NotRequired[int]  # on an episode dealt again (above 1)


class Labels(TypedDict):
    """What every ended episode says beside its benchmark's metrics, whoever ends it."""

    steps: int  # decisions taken, the last (a stop request too) included
    invalid: int  # of them, invalid ones (nothing was applied)
    stopped: bool  # an agent gave up (the reason stays in the last record's ``info.stopped``)


class StepRecordError(ValueError):
    """A ``step`` body that is not a step record; the message names the first field that is wrong."""


def stop_reason(body: Any) -> str | None:
    """The reason of a stop request (``{"stop": true, "reason": "..."}``), or None when ``body`` is
    not one. The reason is what travels on: ``info.stopped`` of the last record, then the labels."""
    if isinstance(body, dict) and body.get("stop"):
        return str(body.get("reason") or "stopped")
    return None


def episode_labels(last: StepRecord) -> Labels:
    """The labels of an episode from its last record (``info.invalid`` and ``info.stopped``, which
    the environment base writes; a record without them had none)."""
    info = last["info"]
    return {"steps": last["t"] + 1, "invalid": int(info.get("invalid") or 0), "stopped": bool(info.get("stopped"))}


def parse_step(body: Any) -> StepRecord:
    """The typed record of a ``step`` body off the wire (it comes from another process: it may be
    anything). ``episode``, ``t`` and ``done`` are required; a missing ``action`` is None, ``valid``
    true, ``reward`` 0 and ``info`` empty. ``truncated`` absent (a recording made before it was a field
    of its own) is read where it was kept then, ``info.truncated``. Other keys are kept as they are
    (``rewards`` per agent, say). Raises StepRecordError."""
    if not isinstance(body, dict):
        raise StepRecordError(f"a step record is a mapping, not {type(body).__name__}")
    episode, t, done = body.get("episode"), body.get("t"), body.get("done")
    if not isinstance(episode, str) or not episode:
        raise StepRecordError(f"episode: a non-empty string is required, got {_shown(episode)}")
    if not isinstance(t, int) or isinstance(t, bool) or t < 0:
        raise StepRecordError(f"t: a decision index (int >= 0) is required, got {_shown(t)}")
    if not isinstance(done, bool):
        raise StepRecordError(f"done: a bool is required, got {_shown(done)}")
    info = body.get("info", {})
    if not isinstance(info, dict):
        raise StepRecordError(f"info: a mapping is required, got {_shown(info)}")
    reward = body.get("reward", 0.0)
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise StepRecordError(f"reward: a number is required, got {_shown(reward)}")
    valid = body.get("valid", True)
    truncated = body.get("truncated", bool(info.get("truncated")))
    for name, value in (("valid", valid), ("truncated", truncated)):
        if not isinstance(value, bool):
            raise StepRecordError(f"{name}: a bool is required, got {_shown(value)}")
    record: StepRecord = {**body, "episode": episode, "t": t, "action": body.get("action"),  # type: ignore[typeddict-item]
                          "valid": valid, "reward": float(reward), "done": done, "truncated": truncated, "info": info}
    attempt = body.get("attempt")
    if attempt is not None and (not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 1):
        raise StepRecordError(f"attempt: an int >= 1 is required, got {_shown(attempt)}")
    return record


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
