"""The simulated world behind an MQTT broker, as one node: a local mosquitto on a loopback port and
the device programs that connect to it. A graph that drives real hardware drops this node and
points the bridge at the real broker; nothing else changes.

Why a node and not ``cmd:`` entries in the launch file: every process of a graph must register
with the kernel before the run starts, and neither mosquitto nor a device does. This node does,
and owns their lifetimes: it reports ready only once the broker accepts connections, and stops
them when the graph stops (they also die with it if it is killed).

Params: ``port`` (1883), ``host`` (127.0.0.1; loopback only), ``binary`` (mosquitto from PATH or
/usr/sbin), ``devices``: a list of commands (lists of strings) in which ``{python}``, ``{host}``
and ``{port}`` are replaced by this interpreter and the broker's address.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from kernel.graph.supervisor import die_with_parent
from kernel.sdk.node import Node
from nodes.game.mqtt.mosquitto import Mosquitto, find_binary, is_loopback


class LocalBroker(Node):
    """No ports: it only hosts the broker and the simulated devices for the rest of the graph."""

    @classmethod
    def preflight(cls, params: dict[str, Any]) -> list[str]:
        problems = []
        if find_binary(params.get("binary")) is None:
            problems.append(f"mosquitto not found ({params.get('binary') or 'PATH, /usr/sbin'}); install it "
                            f"with `apt-get install mosquitto`, or remove this node and point the bridge at a broker")
        if not is_loopback(str(params.get("host", "127.0.0.1"))):
            problems.append(f"param host: {params.get('host')!r} is not a loopback address; the local broker "
                            f"allows anonymous clients, so it binds 127.0.0.1 only")
        port = params.get("port", 1883)
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            problems.append(f"param port: expected an integer from 1 to 65535, got {port!r}")
        devices = params.get("devices") or []
        if not isinstance(devices, list) or not all(
                isinstance(d, list) and d and all(isinstance(a, (str, int)) for a in d) for d in devices):
            problems.append("param devices: expected a list of commands, each a list of strings, e.g. "
                            "[['{python}', '-m', 'nodes.game.mqtt.robot', '--port', '{port}']]")
        return problems

    async def setup(self) -> None:
        problems = self.preflight(self.params)
        if problems:
            raise ValueError("; ".join(problems))
        host, port = str(self.params.get("host", "127.0.0.1")), int(self.params.get("port", 1883))
        logs = self.run_dir / "logs" if self.run_dir else Path(tempfile.mkdtemp(prefix="fb-broker-"))
        self.broker = Mosquitto(port, host=host, binary=self.params.get("binary"),
                                log_path=logs / f"{self.id}-mosquitto.log")
        self.devices: list[subprocess.Popen[bytes]] = []
        self.broker.start()
        await self.broker.wait_ready()
        self.log.info(f"mosquitto is listening on {self.broker.address}", log=str(self.broker.log_path))
        values = {"python": sys.executable, "host": host, "port": str(port)}
        for command in self.params.get("devices") or []:
            argv = [_fill(str(arg), values) for arg in command]
            self.devices.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent))
            self.log.info("started a device", argv=argv, pid=self.devices[-1].pid)
        self.watch = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        """Say so at once when the broker or a device dies during the run (the bridge will be
        reconnecting, or the environment waiting for answers, and the cause is here)."""
        reported: set[int] = set()
        while True:
            await asyncio.sleep(1.0)
            procs = [p for p in [self.broker.process, *self.devices] if p is not None]
            for proc in procs:
                if proc.poll() is not None and proc.pid not in reported:
                    reported.add(proc.pid)
                    what = "mosquitto" if proc is self.broker.process else f"device {proc.args}"
                    self.log.error(f"{what} exited with code {proc.returncode} during the run",
                                   tail=self.broker.log_tail() if proc is self.broker.process else None)

    async def teardown(self) -> None:
        if hasattr(self, "watch"):
            self.watch.cancel()
        for proc in getattr(self, "devices", []):
            if proc.poll() is None:
                proc.terminate()
        for proc in getattr(self, "devices", []):
            try:
                proc.wait(1.0)
            except subprocess.TimeoutExpired:
                proc.kill()
        if hasattr(self, "broker"):
            self.broker.stop()


def _fill(arg: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        arg = arg.replace("{" + key + "}", value)
    return arg
