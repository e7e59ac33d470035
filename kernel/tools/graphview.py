"""Pictures of a resolved launch file.

After includes, replicas and overrides, the wiring that actually runs can be
far from what any single file shows. These renderers show the resolved graph:
plain text for a terminal, Mermaid for docs and pull requests. Both are pure
functions of a :class:`~kernel.launchfile.LaunchFile` so they can be used
without starting anything.
"""

from __future__ import annotations

import re

from kernel.launchfile import ClockSpec, LaunchFile, NodeSpec

__all__ = ["render_mermaid", "render_text"]


def _runs(node: NodeSpec) -> str:
    if node.uses is not None:
        return f"uses {node.uses}"
    return "cmd " + " ".join(node.cmd or [])


def _clock(clock: ClockSpec) -> str:
    parts = [clock.mode]
    if clock.fps is not None:
        parts.append(f"fps={clock.fps:g}")
    if clock.deadline is not None:
        parts.append(f"deadline={clock.deadline:g}s")
    if clock.wait_for:
        parts.append("wait_for=" + ",".join(clock.wait_for))
    return " ".join(parts)


def render_text(lf: LaunchFile) -> str:
    """One block per node: what runs, what feeds each input, how it is clocked."""
    header = f"{lf.name}: {len(lf.nodes)} node{'s' if len(lf.nodes) != 1 else ''}, " \
             f"bus {lf.bus.transport}"
    if lf.description:
        header += f" - {lf.description}"
    lines = [header]
    for node in lf.nodes:
        title = f"{node.id}  {_runs(node)}"
        if node.group is not None:
            title += f"  (group {node.group}, replica {node.replica})"
        lines.append(title)
        for port, inp in node.inputs.items():
            sources = ", ".join(inp.sources)
            lines.append(f"  {port} <- {sources} [{inp.policy} {inp.size}]")
        if node.clock is not None:
            lines.append(f"  clock: {_clock(node.clock)}")
        if node.restart.policy != "never":
            lines.append(f"  restart: {node.restart.policy} "
                         f"(max {node.restart.max_restarts}, backoff {node.restart.backoff:g}s)")
    return "\n".join(lines) + "\n"


def _mermaid_ids(lf: LaunchFile) -> dict[str, str]:
    """Node ids may hold '-', which Mermaid reads as an edge; give each a safe name."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for node in lf.nodes:
        base = "n_" + re.sub(r"[^A-Za-z0-9_]", "_", node.id)
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        out[node.id] = name
    return out


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def render_mermaid(lf: LaunchFile) -> str:
    """A ``flowchart LR``: a box per node, an edge per wire, a subgraph per replica group."""
    ids = _mermaid_ids(lf)
    lines = ["flowchart LR"]

    def box(node: NodeSpec, indent: str) -> str:
        runs = node.uses if node.uses is not None else " ".join(node.cmd or [])
        return f'{indent}{ids[node.id]}["{_label(node.id)}<br/><small>{_label(runs)}</small>"]'

    groups: dict[str, list[NodeSpec]] = {}
    for node in lf.nodes:
        if node.group is None:
            lines.append(box(node, "    "))
        else:
            groups.setdefault(node.group, []).append(node)
    for n, (group, members) in enumerate(groups.items()):
        lines.append(f'    subgraph g_{n}["{_label(group)}"]')
        lines.extend(box(node, "        ") for node in members)
        lines.append("    end")
    for src, output, dst, port in lf.edges():
        if src not in ids or dst not in ids:
            continue
        lines.append(f'    {ids[src]} -->|"{_label(output)}→{_label(port)}"| {ids[dst]}')
    return "\n".join(lines) + "\n"
