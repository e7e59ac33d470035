"""The simulated world behind an MQTT broker, as one node: a local mosquitto on a loopback port and
the device programs that connect to it. A graph that drives real hardware drops this node and
points the bridge at the real broker; nothing else changes.

Why a node and not ``cmd:`` entries in the launch file: every process of a graph must register
with the kernel before the run starts, and neither mosquitto nor a device does. This node does,
and owns their lifetimes: it reports ready only once the broker accepts connections, and stops
them when the graph stops (they also die with it if it is killed).

Params: see ``BrokerParams`` (``launch describe mqtt.broker``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import Field, field_validator

from kernel.bus.lifeline import die_with_parent
from kernel.sdk.node import Node, NodeParams
from nodes.game.mqtt.mosquitto import Mosquitto, find_binary, is_loopback


class BrokerParams(NodeParams):
    port: int = Field(1883, ge=1, le=65535, description="the broker's port")
    host: str = Field("127.0.0.1", description="the address to bind; loopback only (the broker allows "
                      "anonymous clients)")
    binary: str | None = Field(None, description="the mosquitto program (default: from PATH or /usr/sbin)")
    devices: list[list[str | int]] = Field(default_factory=list, description="device programs to start, each a "
                                           "command list in which {python}, {host} and {port} are filled in")

    @field_validator("host")
    @classmethod
    def _loopback(cls, host: str) -> str:
        if not is_loopback(host):
            raise ValueError(f"{host!r} is not a loopback address; the local broker allows anonymous clients, "
                             "so it binds 127.0.0.1 only")
        return host

    @field_validator("devices")
    @classmethod
    def _commands(cls, devices: list[list[str | int]]) -> list[list[str | int]]:
        if not all(devices):
            raise ValueError("a device command is empty; e.g. ['{python}', '-m', 'nodes.game.mqtt.robot', "
                             "'--port', '{port}']")
        return devices


class LocalBroker(Node):
    """No ports: it only hosts the broker and the simulated devices for the rest of the graph."""

    Params = BrokerParams
    params: BrokerParams

    @classmethod
    def preflight(cls, params: BrokerParams) -> list[str]:
        if find_binary(params.binary) is None:
            return [f"mosquitto not found ({params.binary or 'PATH, /usr/sbin'}); install it with `apt-get "
                    "install mosquitto`, or remove this node and point the bridge at a broker"]
        return []

    async def setup(self) -> None:
        problems = self.preflight(self.params)
        if problems:
            raise ValueError("; ".join(problems))
        host, port = self.params.host, self.params.port
        logs = self.run_dir / "logs" if self.run_dir else Path(tempfile.mkdtemp(prefix="fb-broker-"))
        self.broker = Mosquitto(port, host=host, binary=self.params.binary,
                                workdir=logs, log_path=logs / f"{self.id}-mosquitto.log")
        self.devices: list[subprocess.Popen[bytes]] = []
        self.broker.start()
        await self.broker.wait_ready()
        self.log.info(f"mosquitto is listening on {self.broker.address}", log=str(self.broker.log_path))
        values = {"python": sys.executable, "host": host, "port": str(port)}
        for command in self.params.devices:
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
