"""Who may call which kernel service, whatever carried the call.

Getting onto the bus is the transport's business (a private ipc folder, or CURVE keys handed to the
run's processes); this is the rule for what a peer that got on may do, so one node of a graph
cannot write another's results:

* ``episode.*``, ``run.*`` and ``results`` come from nodes of the graph only (``launch ctl`` and
  other clients may call ``ctl.*``, ``status`` and ``stats``);
* ``episode.end`` of an episode comes from the node it was dealt to or from one of that node's
  judges (:func:`judges`); ``episode.report`` from any node of the graph (an agent's or a model
  server's usage), but not for an episode nobody holds;
* a late word on an attempt that was taken back and dealt again is refused as
  :class:`EpisodeTakenBack`, which the SDK logs instead of raising: that race is no fault of the node.

An ended episode stays as it ended; a late word on it is ignored (kernel.graph.episodes), as before.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping

from kernel.graph.episodes import EpisodeBook
from kernel.launchfile import LaunchFile

NODE_SERVICES = ("episode.", "run.", "results")  # prefixes of the services only the graph's nodes may call


class EpisodeRefused(PermissionError):
    """A service call the sender may not make: it names the rule it broke."""


class EpisodeTakenBack(EpisodeRefused):
    """A late word on an attempt the kernel took back (a node it needed died) and dealt again."""


def judges(lf: LaunchFile) -> dict[str, frozenset[str]]:
    """For each node, the nodes that may end the episodes dealt to it: those that read its outputs,
    directly or through other nodes, except the ones it reads itself (its agents) and observers
    (the recorder, the console). The kernel knows judges by wiring alone: a judge that also feeds
    its environment directly would not count, and is not a shape any bundled graph has."""
    readers: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}
    for src, _output, dst, _input in lf.edges():
        readers.setdefault(src, set()).add(dst)
        reads.setdefault(dst, set()).add(src)
    observers = {n.id for n in lf.nodes if n.observer}
    found: dict[str, frozenset[str]] = {}
    for node in lf.nodes:
        seen: set[str] = set()
        todo = [node.id]
        while todo:
            for reader in readers.get(todo.pop(), ()):
                if reader not in seen:
                    seen.add(reader)
                    todo.append(reader)
        found[node.id] = frozenset(seen - {node.id} - reads.get(node.id, set()) - observers)
    return found


def admit_node_service(svc: str, src: str, nodes: Collection[str]) -> None:
    """Refuse ``episode.*``, ``run.*`` and ``results`` from a sender that is no node of the graph."""
    if svc.startswith(NODE_SERVICES) and src not in nodes:
        raise EpisodeRefused(f"{svc} from {src!r} refused: only nodes of this graph may call episode.*, run.* "
                             "and results (a client such as launch ctl may call ctl.*, status and stats)")


def admit_episode(book: EpisodeBook, judges_of: Mapping[str, Collection[str]], svc: str, src: str,
                  body: Mapping[str, Any]) -> None:
    """Refuse ``episode.end`` / ``episode.report`` of ``body["episode"]`` from ``src`` unless the
    rule above allows it. The id was checked to be in the run's deal before."""
    eid = body["episode"]
    if book.is_ended(eid):
        return  # changes nothing: the first end stands
    holder, before = book.holder(eid), book.taken_from(eid)
    if holder is None and before is None:
        raise EpisodeRefused(f"{svc} of {eid} from {src!r} refused: that episode is dealt to no node now (not yet "
                             "dealt, or not in this run); only the node it is dealt to and that node's judges "
                             "may end it or report on it")

    def speaks_for(node: str | None) -> bool:
        return node is not None and (src == node or src in judges_of.get(node, ()))

    attempt = body.get("attempt")
    if speaks_for(holder):
        if attempt is not None and attempt != book.attempt(eid):
            raise EpisodeTakenBack(f"{svc} of {eid} attempt {attempt} from {src!r} refused: that attempt was taken "
                                   f"back and {eid} dealt again (attempt {book.attempt(eid)}); it is not counted")
        return
    if speaks_for(before):
        if holder is None:
            return  # taken back and not dealt again yet: its first attempt may still end, and stands then
        raise EpisodeTakenBack(f"{svc} of {eid} from {src!r} refused: that attempt was taken back from {before!r} "
                               f"and {eid} dealt again to {holder!r} (attempt {book.attempt(eid)}); it is not counted")
    if svc == "episode.report":
        return  # metrics any node of the graph may add (an agent's or a model server's usage)
    owner = holder if holder is not None else before
    allowed = sorted({owner, *judges_of.get(owner, ())}) if owner is not None else []
    raise EpisodeRefused(f"{svc} of {eid} from {src!r} refused: {eid} is dealt to {owner!r}, and only the node an "
                         f"episode is dealt to and its judges may end it (here: {', '.join(allowed)})")
