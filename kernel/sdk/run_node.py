"""Entry point of a node process started by the supervisor: ``python -m kernel.sdk.run_node``.

Everything it needs comes from the environment (FRAMEBUS_NODE_ID, FRAMEBUS_KERNEL, FRAMEBUS_USES),
and the rest (params, wiring, peers) from the kernel's welcome, so a node's command line stays short.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys

from kernel.bus import logs, outlet
from kernel.bus import outbox as outbox_
from kernel.bus.curve import NodeCurve
from kernel.sdk.registry import load_node_class
from kernel.sdk.runtime import NodeRuntime


def main() -> int:
    node_id = os.environ["FRAMEBUS_NODE_ID"]
    outbox = None
    if outbox_.shipping():  # on another machine than the run folder: results go to the kernel
        outbox = outbox_.Outbox()
        own = outbox_.own_run_dir(os.environ.get("FRAMEBUS_RUN_DIR") or node_id)
        # The run folder's paths mean nothing here: what the node writes itself goes to a folder of its own.
        os.environ["FRAMEBUS_RUN_DIR"], os.environ["FRAMEBUS_LOG_DIR"] = str(own), str(own / "logs")
    logs.configure(node_id, os.environ.get("FRAMEBUS_LOG_DIR"), ship=outbox)
    cls = load_node_class(os.environ["FRAMEBUS_USES"])
    params = json.loads(os.environ.get("FRAMEBUS_PARAMS") or "null")
    runtime = NodeRuntime(cls(), node_id, os.environ["FRAMEBUS_KERNEL"], params=params,
                          inbox_dir=os.environ.get("FRAMEBUS_IPC_DIR"),
                          tcp_host=os.environ.get("FRAMEBUS_TCP_HOST") or None, curve=NodeCurve.from_env(),
                          outbox=outbox)
    profile_dir = os.environ.get("FRAMEBUS_PROFILE_DIR")
    profiler = None
    if profile_dir:  # cProfile of this node's whole life, read with pstats or snakeviz (docs/protocol.md)
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        try:
            import uvloop
        except ImportError:
            return asyncio.run(runtime.main())
        return uvloop.run(runtime.main())
    finally:
        if profiler is not None:
            profiler.disable()
            os.makedirs(profile_dir, exist_ok=True)  # type: ignore[arg-type]
            profiler.dump_stats(os.path.join(profile_dir, f"{node_id}.prof"))  # type: ignore[arg-type]
        outlet.drain()  # the queued log lines go out before a traceback Python prints on the way out


if __name__ == "__main__":
    sys.exit(main())
