"""A local mosquitto broker as a child process: for the simulated world of ``launch/robot_mqtt.yaml``
and for tests, which must be able to kill a real broker and start it again on the same port.

The generated config binds one listener to a loopback address and allows anonymous clients; that
is only safe because nothing outside this machine can reach it, so a non-loopback bind is refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from kernel.bus.lifeline import die_with_parent

DEBIAN_PATH = "/usr/sbin/mosquitto"  # Debian installs it outside a normal user's PATH


def find_binary(explicit: str | None = None) -> str | None:
    """The mosquitto executable: ``explicit`` if given, else from PATH, else Debian's location."""
    if explicit:
        return shutil.which(explicit) or (explicit if os.access(explicit, os.X_OK) else None)
    return shutil.which("mosquitto") or (DEBIAN_PATH if os.access(DEBIAN_PATH, os.X_OK) else None)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now (another process may still take it before we bind)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Mosquitto:
    """One broker process on ``host:port``; ``start`` again after ``stop``/``kill`` reuses the port."""

    def __init__(self, port: int, *, host: str = "127.0.0.1", binary: str | None = None,
                 workdir: Path | None = None, log_path: Path | None = None) -> None:
        if not is_loopback(host):
            raise ValueError(f"mosquitto host {host!r}: the local broker allows anonymous clients, so it only "
                             f"binds a loopback address (127.0.0.1)")
        found = find_binary(binary)
        if found is None:
            raise FileNotFoundError(f"mosquitto not found ({binary or 'PATH and ' + DEBIAN_PATH}); "
                                    f"install it with `apt-get install mosquitto`")
        self.binary, self.host, self.port = found, host, port
        # Without a workdir the broker's config goes in a temporary folder removed with this object
        # (or at exit), so test runs and throwaway brokers leave nothing behind in /tmp.
        self._tmp = None if workdir else tempfile.TemporaryDirectory(prefix="fb-mosquitto-")
        self.workdir = workdir or Path(self._tmp.name)
        self.log_path = log_path or self.workdir / "mosquitto.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def config(self) -> str:
        return (f"listener {self.port} {self.host}\n"
                "allow_anonymous true\n"
                "persistence false\n"
                "log_dest stderr\n"
                "log_type error\nlog_type warning\nlog_type notice\n")

    def start(self) -> None:
        conf = self.workdir / f"mosquitto-{self.port}.conf"
        conf.write_text(self.config())
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen([self.binary, "-c", str(conf)], stdin=subprocess.DEVNULL,
                                            stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)

    async def wait_ready(self, timeout: float = 10.0) -> None:
        """Until the broker accepts TCP connections; raises with mosquitto's own words if it exited."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process is None or self.process.poll() is not None:
                code = None if self.process is None else self.process.returncode
                raise RuntimeError(f"mosquitto on {self.address} exited with code {code} while starting: "
                                   f"{self.log_tail() or 'no output'}")
            try:
                _, writer = await asyncio.open_connection(self.host, self.port)
                writer.close()
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"mosquitto on {self.address} did not accept connections within "
                                       f"{timeout} s: {self.log_tail() or 'no output'}") from None
                await asyncio.sleep(0.02)

    def log_tail(self, lines: int = 5) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").strip().splitlines()[-lines:])
        except OSError:
            return ""

    def kill(self) -> None:
        """Stop abruptly, like a crashed or unplugged broker: clients see their connection drop."""
        self._end(signal.SIGKILL, 3.0)

    def stop(self) -> None:
        self._end(signal.SIGTERM, 3.0)

    def _end(self, sig: int, timeout: float) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

