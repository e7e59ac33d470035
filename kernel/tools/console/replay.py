"""An ended (or running) episode played back step by step on the console page, from the run folder.

Two places say what happened at a step, and neither alone says it all:

* the results store (``results.sqlite``, table ``steps``): each agent's step record, written by the
  agents that keep them (``agent.llm``: prompt, reply, parsed action, validity, tokens;
  ``agent.web``: who decided). Agents that keep none (``agent.random``, ``hello.agent``) leave it empty;
* the recordings (``recording*.mcap``, only with ``launch run --record``): every observation (its
  text and, where the environment draws, its frame) and the environment's step record (the action
  applied, its validity, the reward). Frames are kept nowhere else: step records note an image's size only.

So an episode's steps are the ``t`` found in either, and a step shows what each has. The page asks
for the episode's outline first (one small row per step) and then for one step at a time, so a long
episode's prompts are not sent all at once. Every method blocks on SQLite or files: the console
calls them in a worker thread.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from kernel.tools.console.bodies import plain
from kernel.tools.console.recorded import Recordings, Seen

NO_FRAMES = ("this run kept no frames: only `launch run --record` keeps them (RUN/recording.mcap), "
             "from an environment that draws (env.frames=true)")


class Replays:
    """Episodes of one run folder, for the page's replay view (see the module docstring)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.recordings = Recordings(run_dir)

    # store -------------------------------------------------------------------------------------
    def _db(self) -> sqlite3.Connection | None:
        path = self.run_dir / "results.sqlite"
        if not path.exists():
            return None
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0)

    def _query(self, sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        db = self._db()
        if db is None:
            return []
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # the store is there but nothing was written to it yet
                return []
            raise
        finally:
            db.close()

    def _steps(self, sql: str, episode: str, extra: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """``sql`` (with ``{where}`` for the episode's rows of the attempt shown, see ``steps_of``)
        over the episode's step rows; ``extra``: the arguments after the episode's."""
        db = self._db()
        if db is None:
            return []
        try:
            where, args = steps_of(db, episode)
            return db.execute(sql.format(where=where), (*args, *extra)).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return []
            raise
        finally:
            db.close()

    def _ended(self) -> list[str]:
        return [eid for (eid,) in self._query("SELECT episode_id FROM episodes ORDER BY rowid", ())]

    def _unknown(self, episode: str) -> LookupError:
        ended = self._ended()
        shown = ", ".join(ended if len(ended) <= 8 else [*ended[:4], "…", *ended[-3:]])
        return LookupError(f"no episode {episode!r} in this run: it has neither step records nor recorded "
                           f"observations; the ended episodes are {shown or 'none yet'} ({len(ended)} in all)")

    # the page's requests -----------------------------------------------------------------------
    def records(self, episode: str) -> list[dict[str, Any]]:
        """Every agent step record of the episode (the attempt shown), for the page's steps list."""
        return [{"node": node, "t": t, "record": plain(json.loads(record), max_str=2000)}
                for node, t, record in self._steps("SELECT node, t, record FROM steps WHERE {where} "
                                                   "ORDER BY t, rowid", episode)]

    def episode(self, episode: str) -> dict[str, Any]:
        """The episode's outline: its row in the episode table and one small row per step."""
        row = self._query("SELECT idx, status, node, retries, metrics FROM episodes WHERE episode_id = ?", (episode,))
        records: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for node, t, record in self._steps("SELECT node, t, record FROM steps WHERE {where} ORDER BY t, rowid",
                                           episode):
            if isinstance(t, int):
                records.setdefault(t, []).append((node, json.loads(record)))
        self.recordings.refresh()
        seen = self.recordings.episode(episode)
        if not row and not records and not seen:
            raise self._unknown(episode)
        steps = [_outline(t, records.get(t, []), seen.get(t)) for t in sorted(set(records) | set(seen))]
        idx, status, node, retries, metrics = row[0] if row else (None, "running", None, 0, "{}")
        framed = any(s["frame"] for s in steps)
        pending = self.recordings.writing and _behind(records, seen)
        return {"episode": episode, "index": idx, "status": status, "node": node, "retries": retries,
                "metrics": plain(json.loads(metrics or "{}")), "steps": steps,
                "stored": sum(len(r) for r in records.values()),
                "recordings": self.recordings.names, "frames": framed, "pending": pending,
                "frames_note": "" if framed else self._frames_note(seen, pending)}

    def _frames_note(self, seen: dict[int, Seen], pending: bool) -> str:
        if not self.recordings.names:
            return NO_FRAMES
        if pending:
            return "the recording has not caught up with this episode yet (it is written every few seconds)"
        if not seen:
            return f"{', '.join(self.recordings.names)} has no observation of this episode"
        return "the recording has no frames of this episode: its environment drew none (env.frames=false?)"

    def step(self, episode: str, t: int) -> dict[str, Any]:
        """Everything kept about step ``t``: the observation, the step record, each agent's record."""
        rows = self._steps("SELECT node, record FROM steps WHERE {where} AND t = ? ORDER BY rowid", episode, (t,))
        self.recordings.refresh()
        seen = self.recordings.episode(episode)
        if not rows and t not in seen:
            raise self._out_of_range(episode, t, seen)
        at = seen.get(t)
        return {"episode": episode, "t": t,
                "obs": {"node": at.node, "text": at.text, "goal": at.goal} if at is not None else None,
                "step": plain(at.step, max_str=2000) if at is not None and at.step is not None else None,
                "frame": at is not None and at.frame is not None,
                "records": [{"node": node, "record": plain(json.loads(record), max_str=6000)} for node, record in rows]}

    def frame(self, episode: str, t: int) -> bytes:
        """The recorded frame of step ``t`` (PNG, as the recorder wrote it)."""
        self.recordings.refresh()
        seen = self.recordings.episode(episode)
        png = self.recordings.picture(episode, t) if t in seen else None
        if png is not None:
            return png
        if t not in seen:
            stored = self._steps("SELECT 1 FROM steps WHERE {where} AND t = ? LIMIT 1", episode, (t,))
            if not stored:
                raise self._out_of_range(episode, t, seen)
            raise LookupError(f"no frame of {episode} t={t}: " + (self._frames_note(seen, self.recordings.writing)))
        raise LookupError(f"no frame of {episode} t={t}: its observation carried no picture")

    def _out_of_range(self, episode: str, t: int, seen: dict[int, Seen]) -> LookupError:
        found = sorted(set(seen) | {s for (s,) in self._steps("SELECT DISTINCT t FROM steps WHERE {where} "
                                                                "AND t IS NOT NULL", episode)})
        if not found:
            if not self._query("SELECT 1 FROM episodes WHERE episode_id = ?", (episode,)):
                return self._unknown(episode)
            return LookupError(f"episode {episode} kept no steps (no step records, no recording), so there is no t={t}")
        span = f"t={found[0]}..{found[-1]}" if found == list(range(found[0], found[-1] + 1)) else \
            "t in " + ", ".join(map(str, found[:20])) + (" …" if len(found) > 20 else "")
        return LookupError(f"no step t={t} in episode {episode}: it has {len(found)} steps, {span}")


def steps_of(db: sqlite3.Connection, episode: str) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause (and its arguments) of ``episode``'s step rows of one attempt: the one that
    ended it, or the latest of one still open. An episode a dead node took down was played again
    under the same id (kernel.bus.resultsdb's ``attempt``), and the abandoned attempt's steps are
    no part of it. A run folder from before attempts were kept gets every row of the episode."""
    try:
        row = db.execute("SELECT COALESCE(attempt, 1) FROM episodes WHERE episode_id = ?", (episode,)).fetchone()
        if row is None:
            row = db.execute("SELECT MAX(COALESCE(attempt, 1)) FROM steps WHERE episode_id = ?", (episode,)).fetchone()
    except sqlite3.OperationalError:  # no attempt column (an older run), or no tables yet
        return "episode_id = ?", (episode,)
    if row is None or row[0] is None:
        return "episode_id = ?", (episode,)
    return "episode_id = ? AND COALESCE(attempt, 1) = ?", (episode, row[0])


def _behind(records: dict[int, Any], seen: dict[int, Seen]) -> bool:
    """Whether the recording has not caught up with the episode: a step with a record but no recorded
    observation, or a last step without the step record its predecessors have (the environment
    publishes it after the observation, so a write can fall between them)."""
    if any(t not in seen for t in records):
        return True
    ts = sorted(seen)
    return bool(ts) and seen[ts[-1]].step is None and any(seen[t].step is not None for t in ts[:-1])


def _outline(t: int, records: list[tuple[str, dict[str, Any]]], seen: Seen | None) -> dict[str, Any]:
    """One row of the episode's outline: what the step did, in a few words."""
    step = seen.step if seen is not None and seen.step is not None else {}
    first = records[0][1] if records else {}
    action = step["action"] if "action" in step else first.get("sent", first.get("action"))
    valid = step.get("valid") if "valid" in step else (all(bool(r.get("valid", True)) for _, r in records)
                                                       if records else None)
    return {"t": t, "action": plain(action, max_str=200), "valid": valid, "reward": step.get("reward"),
            "done": step.get("done"), "frame": seen is not None and seen.frame is not None,
            "decided_by": [r.get("decided_by") or node for node, r in records]}
