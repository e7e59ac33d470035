"""The environment of a replay: it plays recorded observations back to live agents.

Its own module so that ``launch`` (kernel/tools/replay.py) starts without the node SDK and numpy.
"""

from __future__ import annotations

import json
from pathlib import Path

from kernel.sdk.node import Node
from kernel.tools.record import read_recording, to_json
from kernel.tools.replay import episodes


class ReplayEnv(Node):
    """Publishes recorded observations in order and collects the agents' answers.

    Params: ``recording`` (the MCAP file), ``topic`` (the observation channel, ``env/obs``),
    ``episodes`` (recorded episode ids, one per dealt episode). Each answer is compared with the
    recorded one and written to ``RUN/replay.jsonl``; every episode ends with ``agreement``.
    """

    inputs = ("action",)
    outputs = ("obs",)
    launching_host = True  # reads the recording and writes RUN/replay.jsonl itself

    async def setup(self) -> None:
        rec = read_recording(Path(self.params["recording"]))
        traces = episodes(rec, str(self.params["topic"]))
        wanted = [str(e) for e in self.params.get("episodes") or traces]
        missing = [e for e in wanted if e not in traces]
        if missing:
            raise ValueError(f"episodes not in the recording: {missing}; it has {list(traces)}")
        self.plan = [traces[e] for e in wanted]
        self.out = (self.run_dir / "replay.jsonl").open("a") if self.run_dir else None

    async def run(self) -> None:
        while (episode := await self.next_episode()) is not None:
            trace = self.plan[episode.index]
            same = total = 0
            for d in trace.decisions:
                await self.publish("obs", d.obs.body(), step=d.t)
                answers = await self.clock.actions(d.t)
                for agent, action in answers.items():
                    recorded = d.actions.get(agent)
                    agree = to_json(recorded, None) == to_json(action, None)
                    same += agree
                    total += 1
                    if self.out is not None:
                        self.out.write(json.dumps({"episode": trace.id, "t": d.t, "agent": agent,
                                                   "recorded": to_json(recorded, None),
                                                   "replayed": to_json(action, None), "same": agree}) + "\n")
            if self.out is not None:
                self.out.flush()
            await self.end_episode(episode, recorded_episode=trace.id, decisions=total, same=same,
                                   agreement=same / total if total else 0.0)

    async def teardown(self) -> None:
        if self.out is not None:
            self.out.close()
