"""The CURVE keys of a run, made by the launch process: a keypair for the kernel, one per node,
one for ``launch ctl``, and the files that carry them to other processes of the same user.

Whether a bus uses CURVE at all is a launch-file decision (``bus.transport``, ``bus.host``,
``bus.curve``), which is why this lives with the graph and not in kernel.bus.curve, which a node
process loads to arm its sockets with the keys handed to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Sequence

import zmq
import zmq.auth

from kernel.bus.curve import ENV_CLIENTS, ENV_PUBLIC, ENV_SECRET, ENV_SERVER, CurveServer, KeyPair, missing_curve
from kernel.launchfile import BusSpec, CurveSpec, LaunchError, is_loopback


def curve_wanted(bus: BusSpec) -> bool:
    """CURVE is on when asked for, or by default on any TCP bus: loopback too, since every local
    user can reach a loopback port (another user forged results over one)."""
    if bus.curve is None:
        return bus.transport == "tcp"
    return bus.curve is not False


def open_loopback(bus: BusSpec) -> bool:
    """Whether the launch file opted out of CURVE on a loopback TCP bus (``curve: false``): allowed,
    but ``launch run`` says that any local user can then join the bus."""
    return bus.transport == "tcp" and bus.curve is False and is_loopback(bus.host)


OPEN_LOOPBACK_WARNING = ("bus.curve: false: this TCP bus on {host} has no CURVE, so any local user can join it, "
                         "read its data, end its episodes with made-up scores and pause or stop the run")


def check_open_tcp(bus: BusSpec) -> None:
    """The launch-file rule again, for a bus changed after loading (the Ray backend moves it to TCP)."""
    if bus.transport == "tcp" and bus.curve is False and not is_loopback(bus.host) and not bus.insecure:
        raise LaunchError(f"the bus would listen on {bus.host} without CURVE; remove 'curve: false' or add "
                          "'insecure: true' to accept an open bus", key="bus.curve")


@dataclass
class RunKeys:
    """Every key of one run: made fresh at start (or the kernel's read from ``bus.curve.keys``)."""

    kernel: KeyPair
    nodes: dict[str, KeyPair]
    control: KeyPair  # for `launch ctl` on this machine, handed over in the run's announcement file
    extra_clients: list[str] = field(default_factory=list)  # public keys from bus.curve.keys

    @classmethod
    def create(cls, bus: BusSpec, node_ids: Sequence[str]) -> RunKeys | None:
        """The run's keys, or None when the bus does not use CURVE."""
        check_open_tcp(bus)
        if not curve_wanted(bus):
            return None
        missing = missing_curve()  # fail before anything starts when this libzmq has no CURVE
        if missing is not None:
            raise LaunchError(missing, key="bus.curve")
        kernel, extra = KeyPair.generate(), []
        if isinstance(bus.curve, CurveSpec):
            kernel, extra = _read_keys_dir(Path(bus.curve.keys).expanduser())
        return cls(kernel, {n: KeyPair.generate() for n in node_ids}, KeyPair.generate(), extra)

    def speaker_error(self, src: str, key: str | None, what: str) -> str | None:
        """Why a message claiming ``src`` cannot have come on a connection with CURVE key ``key``,
        or None: a node id is spoken only with that node's key, any other name (``launch ctl``'s,
        a client's) only with the control key or a certificate of ``bus.curve.keys``."""
        owner = self._owners.get(key or "")
        if src in self.nodes:
            if key == self.nodes[src].public:
                return None
        elif owner is None and key is not None and key in self._client_keys:
            return None
        holder = (f"the key of node {owner!r}" if owner is not None else
                  "a client key" if key in self._client_keys else "no key of this run")
        return (f"{what} claims src {src!r}, but its connection is authenticated with {holder}; under CURVE a "
                "node speaks with its own key only, and a client never speaks for a node")

    @cached_property
    def _owners(self) -> dict[str, str]:
        """Public key -> node id (looked up once per message)."""
        return {pair.public: node for node, pair in self.nodes.items()}

    @cached_property
    def _client_keys(self) -> frozenset[str]:
        return frozenset((self.control.public, *self.extra_clients))

    def node_clients(self) -> list[str]:
        """The public keys a node inbox accepts: the run's nodes and the extra certificates."""
        return [k.public for k in self.nodes.values()] + self.extra_clients

    def kernel_server(self) -> CurveServer:
        return CurveServer(self.kernel, [*self.node_clients(), self.control.public])

    def node_env(self, node_id: str) -> dict[str, str]:
        """What a node process needs, to be put in its environment (never on the wire)."""
        own = self.nodes[node_id]
        return {ENV_SERVER: self.kernel.public, ENV_PUBLIC: own.public, ENV_SECRET: own.secret,
                ENV_CLIENTS: ",".join(self.node_clients())}

    def control_keys(self) -> dict[str, str]:
        """What `launch ctl` needs to reach the kernel; written to a file readable by this user only."""
        return {"server": self.kernel.public, "public": self.control.public, "secret": self.control.secret}


def _read_keys_dir(directory: Path) -> tuple[KeyPair, list[str]]:
    """``server.key_secret`` is the kernel's keypair; every other ``*.key`` is a client to accept.

    The files are the ones ``zmq.auth.create_certificates(directory, name)`` writes.
    """
    server = directory / "server.key_secret"
    if not server.is_file():
        raise LaunchError(f"{server} not found; create the kernel's keys with "
                          f"python -c \"import zmq.auth; zmq.auth.create_certificates('{directory}', 'server')\"",
                          key="bus.curve.keys")
    try:
        public, secret = zmq.auth.load_certificate(server)
        clients = [zmq.auth.load_certificate(p)[0] for p in sorted(directory.glob("*.key")) if p.name != "server.key"]
    except (OSError, ValueError) as exc:
        raise LaunchError(f"cannot read the CURVE certificates in {directory}: {exc}", key="bus.curve.keys") from None
    if secret is None:
        raise LaunchError(f"{server} holds no secret key", key="bus.curve.keys")
    return KeyPair(public.decode("ascii"), secret.decode("ascii")), [c.decode("ascii") for c in clients]

