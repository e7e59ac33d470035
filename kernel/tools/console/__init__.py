"""The live console: a page on loopback that shows a running graph and steers it.

``launch run FILE --ui [PORT]`` adds a :class:`~kernel.tools.console.node.ConsoleNode` to the graph
(a rewrite, like ``--record``): it reads every output with ``latest`` inputs (one per output, so a
slow page drops old messages, counted as any edge's drops, and never holds a sender back) and
serves a Starlette app on uvicorn, on 127.0.0.1, from its own event loop. ``launch ui [RUN]``
attaches to a running graph: it prints the console's address when the run has one, else serves a
console of its own that shows the graph, its counters and the steering buttons (no frames: only a
node of the graph receives data).

Every request and socket needs the run's token (``?token=``, in the printed address); without it
the answer is 401, with a wrong one 403; the socket also opens only for the console's own origin
(kernel.tools.console.app). The page is plain HTML, CSS and JavaScript served from
``static/`` (no build step, nothing from the network), and talks msgpack over one WebSocket.

This module is what the launcher needs (the rewrite, tokens, ports); it imports no Starlette.
"""

from __future__ import annotations

import secrets
import socket
from typing import Any

from kernel.launchfile import InputSpec, LaunchError, LaunchFile, NodeSpec, RestartSpec
from kernel.tools import rewrite

CONSOLE_USES = "kernel.tools.console.node:ConsoleNode"
READ_RATE = 10.0
"""Messages a second the console is sent per output: its pages are updated 10 times a second, so
the senders drop the rest before encoding them (kernel.bus.thinning), not the console after."""
WEB_AGENT = "agent.web"
WEB_AGENT_CLASS = "nodes.agent.web:WebAgent"  # used where the entry point is not installed (a fresh checkout)
HOST = "127.0.0.1"


def new_token() -> str:
    return secrets.token_urlsafe(24)


def free_port() -> int:
    """A port free on loopback now (the console binds it a moment later)."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def url(port: int, token: str) -> str:
    return f"http://{HOST}:{port}/?token={token}"


def input_name(i: int) -> str:
    return f"in{i}"


def web_agent_uses() -> str:
    from kernel.sdk.registry import registered_nodes

    return WEB_AGENT if WEB_AGENT in registered_nodes() else WEB_AGENT_CLASS


def is_web_agent(spec: NodeSpec) -> bool:
    return spec.uses in (WEB_AGENT, WEB_AGENT_CLASS)


def with_human(lf: LaunchFile, agent_id: str) -> LaunchFile:
    """``agent_id`` played from the page: its ``uses`` becomes ``agent.web``, its inputs stay, and
    its params keep only ``keys`` (extra key bindings). The environments it acts for lose their
    clock deadline (a person needs more than a model's few seconds)."""
    try:
        spec = lf.node(agent_id)
    except LaunchError:
        raise LaunchError(f"--human {agent_id}: the graph has no node {agent_id!r}; its nodes are "
                          f"{', '.join(n.id for n in lf.nodes)}") from None
    if "obs" not in spec.inputs:
        raise LaunchError(f"--human {agent_id}: that node has no 'obs' input, so it is no agent a person can "
                          f"replace (its inputs: {', '.join(spec.inputs) or 'none'})")
    params = {"keys": spec.params["keys"]} if isinstance(spec.params.get("keys"), dict) else {}
    lf = rewrite.replace_node(lf, agent_id, uses=web_agent_uses(), params=params)
    for src, _output, dst, _inp in lf.edges():
        if src == agent_id and lf.node(dst).clock is not None and lf.node(dst).clock.deadline is not None:
            clock = lf.node(dst).clock.model_copy(update={"deadline": None})
            lf = rewrite.replace_node(lf, dst, clock=clock)
    return lf


def with_takeover(lf: LaunchFile, agent_id: str) -> LaunchFile:
    """``agent_id`` keeps deciding (as ``<agent_id>-auto``) until a person takes over from the page:
    an ``agent.web`` node takes its id (so the wiring and clocks that name it stay as they are), reads
    the same observations and gets the agent's actions on its ``auto`` input."""
    try:
        spec = lf.node(agent_id)
    except LaunchError:
        raise LaunchError(f"--takeover {agent_id}: the graph has no node {agent_id!r}; its nodes are "
                          f"{', '.join(n.id for n in lf.nodes)}") from None
    if "obs" not in spec.inputs:
        raise LaunchError(f"--takeover {agent_id}: that node has no 'obs' input, so it is no agent a person can "
                          f"take over (its inputs: {', '.join(spec.inputs) or 'none'})")
    other = sorted({f"{src}/{output}" for src, output, _, _ in lf.edges() if src == agent_id and output != "action"})
    if other:
        raise LaunchError(f"--takeover {agent_id}: the graph reads {', '.join(other)}; a person can stand in only for "
                          "an agent whose one wired output is 'action'")
    auto_id = rewrite.free_id(lf, f"{agent_id}-auto")
    auto = spec.model_copy(update={"id": auto_id})
    web = NodeSpec(id=agent_id, uses=web_agent_uses(),
                   params={"auto": True, **({"keys": spec.params["keys"]} if isinstance(spec.params.get("keys"), dict)
                                             else {})},
                   inputs={"obs": spec.inputs["obs"],
                           "auto": InputSpec(sources=[f"{auto_id}/action"], policy="fifo", size=16)})
    lf = rewrite.replace_node(lf, agent_id, web)
    lf = rewrite.add_node(lf, auto)
    for src, _output, dst, _inp in lf.edges():
        if src == agent_id and lf.node(dst).clock is not None and lf.node(dst).clock.deadline is not None:
            lf = rewrite.replace_node(lf, dst, clock=lf.node(dst).clock.model_copy(update={"deadline": None}))
    return lf


def with_console(lf: LaunchFile, port: int, token: str, *, node_id: str = "console") -> LaunchFile:
    """The launch file plus a console node that reads every output (``latest``, one input each)."""
    from kernel.tools.record import recordable_outputs

    sources = [s for s in recordable_outputs(lf)]
    humans = [n.id for n in lf.nodes if is_web_agent(n)]
    inputs = {input_name(i): InputSpec(sources=[s], policy="latest", rate=READ_RATE) for i, s in enumerate(sources)}
    params: dict[str, Any] = {"port": port, "token": token, "sources": sources, "humans": humans}
    spec = NodeSpec(id=rewrite.free_id(lf, node_id), uses=CONSOLE_USES, params=params,
                    inputs=inputs,  # type: ignore[arg-type]
                    restart=RestartSpec(policy="on-failure"), observer=True)
    return rewrite.add_node(lf, spec)
