"""CurveZMQ for the bus, node side: who may connect to the kernel and to node inboxes, and encryption on the way.

Plain TCP ZeroMQ has no authentication: anyone who reaches a port can say ``hello``, read a graph's
data or send ``ctl.stop``, and on loopback "anyone" is every local user. So every TCP bus uses
CURVE unless the launch file opts out (``bus.curve: false``), and every socket of it is armed here:

* the kernel has a run keypair; its public key reaches the nodes in ``FRAMEBUS_CURVE_SERVERKEY``;
* every node has its own keypair (``FRAMEBUS_CURVE_PUBLICKEY`` / ``FRAMEBUS_CURVE_SECRETKEY``), used
  as a client towards the kernel and its peers, and as the server key of its own inbox (the public
  half travels in ``hello`` and ``peers``; public keys are not secret);
* the kernel and every inbox accept only the public keys they were given
  (``FRAMEBUS_CURVE_CLIENTS``), through a ZAP handler; a peer with no keys, or with unknown keys,
  never completes the handshake and so never gets a byte in or out.

Secret keys exist only in the launching process and in the environment of the processes it starts
(or, for ``launch ctl``, in a file only its user can read); they are never sent on the bus. The
launch process makes them (kernel.graph.keys); this module only arms sockets with them, so a node
process needs nothing of the launch file.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import structlog
import zmq
from zmq.auth.thread import ThreadAuthenticator

log = structlog.get_logger("framebus.curve")

ZAP_DOMAIN = "framebus"
ENV_SERVER = "FRAMEBUS_CURVE_SERVERKEY"
ENV_PUBLIC = "FRAMEBUS_CURVE_PUBLICKEY"
ENV_SECRET = "FRAMEBUS_CURVE_SECRETKEY"
ENV_CLIENTS = "FRAMEBUS_CURVE_CLIENTS"


@dataclass(frozen=True)
class KeyPair:
    """A CURVE keypair as Z85 text (40 characters each), the form libzmq and the env both take."""

    public: str
    secret: str = field(repr=False)

    @classmethod
    def generate(cls) -> KeyPair:
        public, secret = zmq.curve_keypair()
        return cls(public.decode("ascii"), secret.decode("ascii"))


def missing_curve() -> str | None:
    """Why this libzmq cannot do CURVE (built without libsodium / tweetnacl), or None when it can."""
    if zmq.has("curve"):
        return None
    return (f"this libzmq ({zmq.zmq_version()}) was built without CURVE security, which a TCP bus (or "
            "bus.curve: true) needs; install a pyzmq wheel (they bundle a libzmq "
            "with CURVE) or rebuild libzmq with libsodium (or, on loopback only, set bus.curve: false)")


@dataclass
class NodeCurve:
    """The node side, read from the environment its supervisor gave it."""

    keys: KeyPair
    kernel_key: str
    clients: list[str]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NodeCurve | None:
        env = os.environ if environ is None else environ
        if not env.get(ENV_SECRET):
            return None
        missing = [k for k in (ENV_SERVER, ENV_PUBLIC) if not env.get(k)]
        if missing:
            raise RuntimeError(f"{ENV_SECRET} is set but {', '.join(missing)} is not; the node cannot use CURVE")
        missing_lib = missing_curve()
        if missing_lib is not None:
            raise RuntimeError(missing_lib)
        clients = [c for c in env.get(ENV_CLIENTS, "").split(",") if c]
        return cls(KeyPair(env[ENV_PUBLIC], env[ENV_SECRET]), env[ENV_SERVER], clients)

    def server(self) -> CurveServer:
        return CurveServer(self.keys, self.clients)

    def connect_kernel(self, sock: zmq.Socket) -> None:
        client(sock, self.keys, self.kernel_key)

    def connect_peer(self, sock: zmq.Socket, peer: str, features: Mapping[str, Any]) -> None:
        key = features.get("curve")
        if not isinstance(key, str):
            raise RuntimeError(f"peer {peer!r} announced no CURVE key; this bus needs one")
        client(sock, self.keys, key)


def client(sock: zmq.Socket, keys: KeyPair, server_key: str) -> None:
    """Make ``sock`` a CURVE client of the server whose public key is ``server_key`` (before connecting)."""
    sock.curve_secretkey = keys.secret.encode("ascii")
    sock.curve_publickey = keys.public.encode("ascii")
    sock.curve_serverkey = server_key.encode("ascii")


class CurveServer:
    """A server keypair and the client keys it accepts; ``serve`` arms a socket before it binds."""

    def __init__(self, keys: KeyPair, allowed: Sequence[str]) -> None:
        self.keys = keys
        self.allowed = frozenset(allowed)
        self._gate: _Gate | None = None
        self._refused_before = 0  # the gate's count when this server started (it may be shared)
        self._refused = 0  # kept at stop, for summary.json

    @property
    def refused(self) -> int:
        """Handshakes refused (keys not of this run) while this server served: the count an
        outsider's attempts leave in summary.json. A gate shared by servers in one process (the
        test harness) counts theirs together."""
        if self._gate is not None:
            return self._gate.refused - self._refused_before
        return self._refused

    def serve(self, sock: zmq.Socket) -> None:
        # The ZAP handler must exist before the first handshake: without one, libzmq lets every
        # CURVE client in. So it starts here, before the caller binds.
        self._gate = _Gate.acquire(sock.context, self.allowed)
        self._refused_before = self._gate.refused
        sock.zap_domain = ZAP_DOMAIN.encode()
        sock.curve_server = True
        sock.curve_secretkey = self.keys.secret.encode("ascii")
        sock.curve_publickey = self.keys.public.encode("ascii")

    def stop(self) -> None:
        if self._gate is not None:
            self._refused = self.refused
            self._gate.release(self.allowed)
            self._gate = None


class _Gate:
    """One ZAP handler per ZeroMQ context (libzmq allows only one), shared by the servers in it.

    The test harness runs a kernel and nodes in one process and one context; each adds its
    accepted keys here and takes them away when it stops.
    """

    _lock = threading.Lock()
    _gates: dict[int, _Gate] = {}

    def __init__(self, ctx: zmq.Context[Any]) -> None:
        self.ctx = ctx
        self.users = 0
        self.refused = 0
        self.allowed: Counter[str] = Counter()  # a key stays while a server in this context accepts it
        self.auth = ThreadAuthenticator(ctx)
        self.auth.start()
        self.auth.configure_curve_callback(domain=ZAP_DOMAIN, credentials_provider=self)

    @classmethod
    def acquire(cls, ctx: zmq.Context[Any], keys: frozenset[str]) -> _Gate:
        with cls._lock:
            gate = cls._gates.get(id(ctx))
            if gate is None:
                gate = cls._gates[id(ctx)] = cls(ctx)
            gate.users += 1
            gate.allowed.update(keys)
            return gate

    def release(self, keys: frozenset[str]) -> None:
        with self._lock:
            self.allowed -= Counter(keys)  # drops the keys whose count reaches 0
            self.users -= 1
            if self.users > 0:
                return
            self._gates.pop(id(self.ctx), None)
        self.auth.stop()

    def callback(self, domain: str, key: bytes) -> bool:
        """Called by pyzmq's ZAP thread for every CURVE handshake."""
        text = key.decode("ascii", errors="replace")
        if text in self.allowed:
            return True
        self.refused += 1
        log.warning("refused a connection: its CURVE key is not one of this run's", key=text[:12] + "...")
        return False
