"""CurveZMQ for the bus: who may connect to the kernel and to node inboxes, and encryption on the way.

Plain TCP ZeroMQ has no authentication: anyone who reaches a port can say ``hello``, read a graph's
data or send ``ctl.stop``. So when the bus leaves the machine (``bus.transport: tcp`` on a host that
is not loopback), or when a launch file asks for it (``bus.curve: true``), every socket uses CURVE:

* the kernel has a run keypair; its public key reaches the nodes in ``FRAMEBUS_CURVE_SERVERKEY``;
* every node has its own keypair (``FRAMEBUS_CURVE_PUBLICKEY`` / ``FRAMEBUS_CURVE_SECRETKEY``), used
  as a client towards the kernel and its peers, and as the server key of its own inbox (the public
  half travels in ``hello`` and ``peers``; public keys are not secret);
* the kernel and every inbox accept only the public keys they were given
  (``FRAMEBUS_CURVE_CLIENTS``), through a ZAP handler; a peer with no keys, or with unknown keys,
  never completes the handshake and so never gets a byte in or out.

Secret keys exist only in the launching process and in the environment of the processes it starts
(or, for ``launch ctl``, in a file only its user can read); they are never sent on the bus.
"""

from __future__ import annotations

import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import structlog
import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from kernel.launchfile import BusSpec, CurveSpec, LaunchError, is_loopback

log = structlog.get_logger("framebus.security")

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


def curve_wanted(bus: BusSpec) -> bool:
    """CURVE is on when asked for, or by default when the bus is TCP beyond loopback."""
    if bus.curve is None:
        return bus.transport == "tcp" and not is_loopback(bus.host)
    return bus.curve is not False


def require_curve() -> None:
    """Fail before anything starts when this libzmq was built without CURVE (libsodium / tweetnacl)."""
    if not zmq.has("curve"):
        raise LaunchError(f"this libzmq ({zmq.zmq_version()}) was built without CURVE security, which a bus over "
                          "non-loopback TCP (or bus.curve: true) needs; install a pyzmq wheel (they bundle a libzmq "
                          "with CURVE) or rebuild libzmq with libsodium", key="bus.curve")


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
        require_curve()
        kernel, extra = KeyPair.generate(), []
        if isinstance(bus.curve, CurveSpec):
            kernel, extra = _read_keys_dir(Path(bus.curve.keys).expanduser())
        return cls(kernel, {n: KeyPair.generate() for n in node_ids}, KeyPair.generate(), extra)

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
        require_curve()
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

    def serve(self, sock: zmq.Socket) -> None:
        # The ZAP handler must exist before the first handshake: without one, libzmq lets every
        # CURVE client in. So it starts here, before the caller binds.
        self._gate = _Gate.acquire(sock.context, self.allowed)
        sock.zap_domain = ZAP_DOMAIN.encode()
        sock.curve_server = True
        sock.curve_secretkey = self.keys.secret.encode("ascii")
        sock.curve_publickey = self.keys.public.encode("ascii")

    def stop(self) -> None:
        if self._gate is not None:
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
        self.allowed: dict[str, int] = {}
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
            for key in keys:
                gate.allowed[key] = gate.allowed.get(key, 0) + 1
            return gate

    def release(self, keys: frozenset[str]) -> None:
        with self._lock:
            for key in keys:
                left = self.allowed.get(key, 0) - 1
                if left > 0:
                    self.allowed[key] = left
                else:
                    self.allowed.pop(key, None)
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
        log.warning("refused a connection: its CURVE key is not one of this run's", key=text[:12] + "...")
        return False


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to a file only this user can read (it may hold a secret key), atomically.

    The text goes to a fresh temporary file in the same folder (mkstemp: O_CREAT|O_EXCL|O_NOFOLLOW,
    mode 0600), which is then renamed onto ``path``. So a symlink planted at ``path`` is replaced,
    never written through, and a reader sees the old file or the whole new one.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            os.fchmod(fd, 0o600)  # mkstemp asks for 0600, but a umask may have taken bits away
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
