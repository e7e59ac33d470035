"""Who may end an episode (kernel.graph.trust), in-process: the kernel's service table is called as a
node's request would call it, with no bus and no process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kernel.graph import services
from kernel.graph.trust import EpisodeRefused, EpisodeTakenBack, judges

GRAPH = """nodes:
  - {id: env, uses: hello.env, inputs: {action: agent/action}}
  - {id: agent, uses: hello.agent, inputs: {obs: env/obs}}
  - {id: judge, uses: hello.judge, inputs: {step: env/step}}
  - {id: env2, uses: hello.env, inputs: {action: agent2/action}}
  - {id: agent2, uses: hello.agent, inputs: {obs: env2/obs}}
  - {id: judge2, uses: hello.judge, inputs: {step: env2/step}}
run: {episodes: 6}
"""


@pytest.fixture
async def kernel(tmp_path: Path) -> Any:
    from kernel.graph.core import Kernel
    from kernel.launchfile import load
    from kernel.tools.record import with_recorder

    path = tmp_path / "g.yaml"
    path.write_text(GRAPH)
    k = Kernel(with_recorder(load(path)), tmp_path, "ipc:///nowhere")
    yield k
    k.book.close()


def _end(kernel: Any, src: str, eid: str, **extra: Any) -> Any:
    return services.call(kernel, src, "episode.end", {"episode": eid, "metrics": {"score": 1e9}, **extra})


def test_judges_are_the_readers_of_a_node_that_it_does_not_read_itself(tmp_path: Path) -> None:
    from kernel.launchfile import load
    from kernel.tools.record import with_recorder

    path = tmp_path / "g.yaml"
    path.write_text(GRAPH)
    found = judges(with_recorder(load(path)))
    # the agent reads env but env reads it back (a player, not a judge); the recorder only watches
    assert found["env"] == {"judge"} and found["env2"] == {"judge2"}
    assert found["judge"] == frozenset()


async def test_only_the_holder_and_its_judges_end_an_episode_and_refusals_are_counted(kernel: Any) -> None:
    assert kernel.next_episode("env")["id"] == "ep00000"
    assert kernel.next_episode("env2")["id"] == "ep00001"
    for src in ("judge2", "agent", "env2", "recorder"):  # another replica's judge, a player, an observer
        with pytest.raises(EpisodeRefused, match=r"ep00000 is dealt to 'env', and only .* \(here: env, judge\)"):
            _end(kernel, src, "ep00000")
    with pytest.raises(EpisodeRefused, match="only nodes of this graph may call episode"):
        _end(kernel, "ctl-1234-abcdef", "ep00000")  # a client (launch ctl's name) is no node
    with pytest.raises(EpisodeRefused, match="dealt to no node now"):
        _end(kernel, "judge", "ep00004")  # an episode nobody was dealt: the forged end of the attack
    assert not kernel.book.is_ended("ep00000") and kernel.book.ended_count == 0
    assert kernel.refused.counts == {"judge2": 1, "agent": 1, "env2": 1, "recorder": 1, "ctl-1234-abcdef": 1,
                                     "judge": 1}
    assert kernel.stats()["refused"] == dict(kernel.refused.counts)  # what launch stats and summary.json show

    # a node of the graph may add metrics to an episode in flight (an agent's model usage) ...
    assert services.call(kernel, "agent2", "episode.report", {"episode": "ep00000", "metrics": {"tokens": 3}})
    with pytest.raises(EpisodeRefused, match="dealt to no node now"):  # ... not to one nobody holds
        services.call(kernel, "agent", "episode.report", {"episode": "ep00005", "metrics": {"score": 1}})

    assert _end(kernel, "judge", "ep00000") is True  # its judge
    assert _end(kernel, "env2", "ep00001") is True  # its holder (an environment that ends its own)
    assert kernel.book.records["ep00000"]["metrics"] == {"tokens": 3, "score": 1e9}
    assert kernel.book.ended_count == 2
    assert _end(kernel, "judge2", "ep00000") is True  # a late word on an ended episode changes nothing
    assert kernel.book.ended_count == 2


async def test_a_late_end_of_an_attempt_taken_back_is_refused_as_such_and_the_new_one_counts(kernel: Any) -> None:
    assert kernel.next_episode("env")["id"] == "ep00000"
    kernel.book.node_lost("env")  # env died mid-episode: ep00000 goes back to the deck
    assert _end(kernel, "judge", "ep00000") is True  # taken back but not dealt again yet: it may still end
    assert kernel.book.is_ended("ep00000")

    assert kernel.next_episode("env")["id"] == "ep00001"
    kernel.book.node_lost("env")
    again = kernel.next_episode("env2")  # dealt again, to the other replica
    assert again["id"] == "ep00001" and again["attempt"] == 2
    with pytest.raises(EpisodeTakenBack, match="taken back from 'env' and ep00001 dealt again to 'env2' "
                                               r"\(attempt 2\)"):
        _end(kernel, "judge", "ep00001")
    assert not kernel.book.is_ended("ep00001")

    assert kernel.next_episode("env")["id"] == "ep00002"
    kernel.book.node_lost("env")
    assert kernel.next_episode("env")["attempt"] == 2  # dealt again to the same node
    with pytest.raises(EpisodeTakenBack, match="attempt 1 .* dealt again \\(attempt 2\\)"):
        _end(kernel, "env", "ep00002", attempt=1)  # the dead attempt's end, told apart by its number
    assert _end(kernel, "env", "ep00002", attempt=2) is True
    assert _end(kernel, "judge2", "ep00001") is True
    assert kernel.refused.counts == {"judge": 1, "env": 1}


@pytest.mark.parametrize("curve, warned", [(None, False), (False, True)])
def test_launch_run_warns_in_one_line_when_a_loopback_tcp_bus_opts_out_of_curve(tmp_path: Path, curve: bool | None,
                                                                                  warned: bool) -> None:
    import io

    from rich.console import Console

    from kernel.graph import backends
    from kernel.launchfile import load

    path = tmp_path / "g.yaml"
    path.write_text(GRAPH + "bus: {transport: tcp" + ("" if curve is None else ", curve: false") + "}\n")
    out = io.StringIO()
    placement = backends.prepare(load(path), "local", None, Console(file=out, width=80))
    assert (placement.keys is None) == warned  # CURVE on by default, off only by the opt-out
    lines = out.getvalue().splitlines()
    if warned:
        assert len(lines) == 1 and "warning: bus.curve: false" in lines[0] and "any local user can join it" in lines[0]
    else:
        assert lines == []


async def test_under_curve_the_sender_is_the_key_it_connected_with_not_the_name_it_claims(tmp_path: Path) -> None:
    """A node of the run (here the agent, with its own key) names itself env to end env's episode;
    a client name on a node key; then env itself: only the last is answered."""
    import asyncio

    import zmq

    from kernel.bus import protocol
    from kernel.bus.curve import KeyPair, client
    from kernel.graph.core import Kernel
    from kernel.graph.keys import RunKeys
    from kernel.launchfile import load

    path = tmp_path / "g.yaml"
    path.write_text(GRAPH + "bus: {transport: tcp}\n")
    lf = load(path)
    keys = RunKeys.create(lf.bus, [n.id for n in lf.nodes])
    assert keys is not None  # loopback TCP: CURVE by default
    kernel = Kernel(lf, tmp_path, "tcp://127.0.0.1:0", keys=keys)
    await kernel.open()
    ctx = zmq.Context.instance()
    socks: list[zmq.Socket] = []

    async def ask(identity: str, pair: KeyPair, svc: str, body: dict[str, Any]) -> Any:
        sock = ctx.socket(zmq.DEALER)
        socks.append(sock)
        sock.setsockopt(zmq.IDENTITY, identity.encode())
        sock.setsockopt(zmq.LINGER, 0)
        client(sock, pair, keys.kernel.public)
        sock.connect(kernel.endpoint)
        bad_before = sum(kernel.bad.counts.values())
        sock.send_multipart(protocol.encode(protocol.REQ, identity, svc, body, dst="kernel", cid=1))
        for _ in range(40):  # the kernel reads on this loop: let it run while waiting
            if sock.poll(0):
                return protocol.decode(sock.recv_multipart()).kind
            if sum(kernel.bad.counts.values()) > bad_before:
                return None  # dropped, and counted
            await asyncio.sleep(0.05)
        raise AssertionError(f"neither an answer nor a count for {svc} from {identity}")

    try:
        assert kernel.next_episode("env")["id"] == "ep00000"
        end = {"episode": "ep00000", "metrics": {"score": 1e9}}
        assert await ask("env", keys.nodes["agent"], "episode.end", end) is None
        assert await ask("ctl-1-abcdef", keys.nodes["agent"], "ctl.pause", {}) is None
        assert kernel.bad.counts == {"env": 1, "ctl-1-abcdef": 1} and not kernel.paused
        assert not kernel.book.is_ended("ep00000")
        assert await ask("ctl-2-abcdef", keys.control, "status", {}) == "rep"  # launch ctl's key
        assert await ask("env", keys.nodes["env"], "episode.end", end) == "rep"  # the holder, with its own key
        assert kernel.book.is_ended("ep00000")
    finally:
        for sock in socks:
            sock.close(linger=0)
        kernel.close()
