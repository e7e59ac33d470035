"""The services the kernel answers on kernel.sock: one handler per name, in one table.

Nodes ask for and end episodes (``Node.next_episode``, ``report``, ``end_episode``, ``record_error``);
``launch ctl`` and ``launch stats`` pause, step, stop and read the run. A handler returns the reply's
body, raises to send an error reply, or returns DEFERRED to answer later (an ``episode.next`` that
must wait for an episode in flight or a restarting node; ``Kernel._answer_asks`` answers it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from kernel.graph import trust

if TYPE_CHECKING:
    from kernel.graph.core import Kernel

DEFERRED = object()  # what a service returns when it answers later (kernel._asks)

Handler = Callable[["Kernel", str, dict[str, Any]], Any]


def _episode_in_range(kernel: Kernel, svc: str, src: str, body: dict[str, Any]) -> None:
    """An episode id past the run's last one is bad traffic (counted per sender), not just an error."""
    try:
        kernel.book.index_of(body["episode"])  # its form was checked with the body (kernel.bus.badtraffic)
    except ValueError as exc:
        kernel.bad.note(src, f"{svc}: {exc}")
        raise


def episode_next(kernel: Kernel, src: str, body: dict[str, Any]) -> Any:
    if not kernel.started:
        raise RuntimeError("the run has not started: ask for episodes in run(), not in setup()")
    return kernel.next_episode(src)


def episode_report(kernel: Kernel, src: str, body: dict[str, Any]) -> bool:
    _episode_in_range(kernel, "episode.report", src, body)
    trust.admit_episode(kernel.book, kernel.judges, "episode.report", src, body)
    kernel.book.report(body["episode"], body.get("metrics") or {})
    return True


def episode_end(kernel: Kernel, src: str, body: dict[str, Any]) -> bool:
    _episode_in_range(kernel, "episode.end", src, body)
    trust.admit_episode(kernel.book, kernel.judges, "episode.end", src, body)
    kernel.book.end(body["episode"], body.get("status", "completed"), body.get("metrics") or {})
    kernel.check_done()
    return True


def run_error(kernel: Kernel, src: str, body: dict[str, Any]) -> bool:
    kind, message = body.get("kind"), body.get("message")
    if not isinstance(kind, str) or not isinstance(message, str):
        raise ValueError("run.error takes {kind: str, message: str, episode: id (optional)}")
    episode = str(body["episode"]) if body.get("episode") is not None else None
    kernel.book.store.error(kind[:64], message[:2000], node=src, episode=episode)
    return True


def results(kernel: Kernel, src: str, body: dict[str, Any]) -> dict[str, Any]:
    """A batch of results from a node on another machine (kernel.bus.outbox, kernel.graph.inbox)."""
    return kernel.take_results(src, body, results_size(body["items"]))


def results_size(items: list[list[Any]]) -> int:
    """The bytes a batch holds, as the writer's backlog counts them."""
    size = 0
    for kind, payload in items:
        if kind == "step":
            size += len(payload[0]) + len(payload[4]) + 64
        elif kind == "media":
            size += sum(len(p[1]) for p in payload["pictures"]) + 512
        else:
            size += len(payload)
    return size


def _broadcast(cmd: str, paused: bool) -> Handler:
    """A ``launch ctl`` command every node's clock obeys (pause, resume, step N): it sets the
    kernel's paused flag, which a node that registers later is told too."""

    def handler(kernel: Kernel, src: str, body: dict[str, Any]) -> dict[str, Any]:
        kernel.paused = paused
        kernel.broadcast(cmd, {"n": int(body.get("n", 1))} if cmd == "step" else {})
        return kernel.status()

    return handler


def ctl_stop(kernel: Kernel, src: str, body: dict[str, Any]) -> dict[str, Any]:
    kernel.finish("stopped", f"stopped by {src}")
    return kernel.status()


SERVICES: dict[str, Handler] = {
    "episode.next": episode_next,
    "episode.report": episode_report,
    "episode.end": episode_end,
    "run.error": run_error,
    "results": results,
    "ctl.pause": _broadcast("pause", paused=True),
    "ctl.resume": _broadcast("resume", paused=False),
    "ctl.step": _broadcast("step", paused=True),
    "ctl.stop": ctl_stop,
    "stats": lambda kernel, src, body: kernel.stats(),
    "status": lambda kernel, src, body: kernel.status(),
}


def call(kernel: Kernel, src: str, svc: str, body: dict[str, Any]) -> Any:
    """Run the handler of ``svc`` for a request from ``src``, if the sender may call it
    (kernel.graph.trust); a refusal is counted per sender and answered with the rule it broke."""
    handler = SERVICES.get(svc)
    if handler is None:
        raise ValueError(f"the kernel has no service {svc!r}; it offers {', '.join(SERVICES)}")
    try:
        trust.admit_node_service(svc, src, kernel.nodes)
        return handler(kernel, src, body)
    except trust.EpisodeRefused as exc:
        kernel.refused.note(src, str(exc))
        raise
