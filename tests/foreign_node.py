"""A framebus node written only from docs/protocol.md, without the kernel package or numpy.

It stands in for a node written in another language: plain ZeroMQ sockets, msgpack, a poll loop.

* input ``in``: every DATA message is answered on output ``out`` with body ``{"echo": <body>}``
  and the same ``step`` (arrays in the body travel back untouched);
* service ``upper``: the string body, uppercased;
* it returns credits on ``block`` inputs, honours credits on ``block`` outputs, sends taps and
  heartbeats, leaves on ``stop`` (after ``bye``) and when the kernel has been silent too long.
"""

import os
import sys
import time

import msgpack
import zmq

VERSION = 1
ARRAY_EXT = 1
KINDS = ("data", "req", "rep", "err", "credit", "ctl", "tap")
INPUTS = ["in"]
OUTPUTS = ["out"]
SERVICES = ["upper"]


def log(*parts):
    sys.stderr.write(" ".join(str(p) for p in parts) + "\n")
    sys.stderr.flush()


class Malformed(Exception):
    pass


class RawArray:
    """An array frame we pass through without interpreting it."""

    def __init__(self, dtype, shape, data):
        self.dtype, self.shape, self.data = dtype, shape, data


def encode(kind, src, topic, body=None, dst=None, seq=0, cid=None, step=None, tp=None):
    """Returns (frames, size counted against max_message_bytes: body plus array frames)."""
    arrays = []

    def default(obj):
        if isinstance(obj, RawArray):
            arrays.append(obj)
            return msgpack.ExtType(ARRAY_EXT, msgpack.packb(len(arrays) - 1))
        if isinstance(obj, (tuple, set)):
            return list(obj)
        raise TypeError(f"{type(obj).__name__} cannot travel on the bus")

    packed = msgpack.packb(body, default=default, use_bin_type=True)
    header = {"v": VERSION, "k": kind, "src": src, "topic": topic, "seq": seq, "ts": time.time()}
    if dst is not None:
        header["dst"] = dst
    if tp:
        header["tp"] = tp
    if cid is not None:
        header["cid"] = cid
    if step is not None:
        header["step"] = step
    if arrays:
        header["arr"] = [[a.dtype, list(a.shape)] for a in arrays]
    frames = [msgpack.packb(header, use_bin_type=True), packed, *[a.data for a in arrays]]
    return frames, len(packed) + sum(len(a.data) for a in arrays)


def _itemsize(dtype):
    if not isinstance(dtype, str) or len(dtype) < 3 or dtype[0] not in "<>|=" or dtype[1] not in "biufc":
        raise Malformed(f"dtype {dtype!r} not allowed")
    try:
        return int(dtype[2:])
    except ValueError:
        raise Malformed(f"dtype {dtype!r} not allowed") from None


def decode(frames, max_bytes):
    """Returns (header, body); raises Malformed for anything the doc calls malformed."""
    if len(frames) < 2:
        raise Malformed(f"{len(frames)} frame(s); need header and body")
    total = sum(len(f) for f in frames)
    if total > max_bytes:
        raise Malformed(f"{total} bytes, over the limit of {max_bytes}")
    try:
        header = msgpack.unpackb(frames[0], raw=False)
    except Exception as exc:
        raise Malformed(f"header is not msgpack: {exc}") from None
    if not isinstance(header, dict):
        raise Malformed("header is not a map")
    if header.get("v") != VERSION:
        raise Malformed(f"protocol version {header.get('v')!r}")
    if header.get("k") not in KINDS:
        raise Malformed(f"unknown kind {header.get('k')!r}")
    if not isinstance(header.get("src"), str) or not isinstance(header.get("topic"), str):
        raise Malformed("src and topic must be strings")
    specs = header.get("arr") or []
    if not isinstance(specs, list) or len(specs) != len(frames) - 2:
        raise Malformed("arr does not match the array frames")
    arrays = []
    for spec, data in zip(specs, frames[2:]):
        if not isinstance(spec, list) or len(spec) != 2 or not isinstance(spec[1], list):
            raise Malformed(f"bad array spec {spec!r}")
        dtype, shape = spec
        count = 1
        for dim in shape:
            if not isinstance(dim, int) or dim < 0:
                raise Malformed(f"bad shape {shape!r}")
            count *= dim
        if count * _itemsize(dtype) != len(data):
            raise Malformed(f"array {spec!r} does not match its {len(data)} bytes")
        arrays.append(RawArray(dtype, shape, bytes(data)))

    def ext_hook(code, data):
        if code != ARRAY_EXT:
            raise Malformed(f"unknown ext type {code}")
        index = msgpack.unpackb(data)
        if not isinstance(index, int) or not 0 <= index < len(arrays):
            raise Malformed(f"array index {index!r} out of range")
        return arrays[index]

    try:
        body = msgpack.unpackb(frames[1], raw=False, ext_hook=ext_hook, strict_map_key=False)
    except Malformed:
        raise
    except Exception as exc:
        raise Malformed(f"body is not msgpack: {exc}") from None
    return header, body


class ForeignNode:
    def __init__(self):
        self.id = os.environ["FRAMEBUS_NODE_ID"]
        self.kernel_endpoint = os.environ["FRAMEBUS_KERNEL"]
        self.ctx = zmq.Context()
        self.state = "starting"
        self.heartbeat = 0.5
        self.grace = 3.0
        self.max_bytes = 64 * 1024 * 1024
        self.last_kernel = time.monotonic()
        self.welcomed = False
        self.routes = {}  # (src node, output) -> [my inputs]
        self.input_policy = {}
        self.out_edges = {}  # output -> [(dst, input, policy, size), ...]
        self.credits = {}  # (dst, input) -> int
        self.backlog = []  # (output, body, step, tp) waiting for credits
        self.peers = {}  # node id -> (socket, endpoint)
        self.seq = 0
        self.taps = []
        self.last_tap_flush = time.monotonic()
        self.stats = {"sent": {}, "send_dropped": {}, "decode_errors": {}, "inputs": {}}

    # sockets ---------------------------------------------------------------------------------
    def start(self):
        self.inbox = self.ctx.socket(zmq.ROUTER)
        self.inbox.setsockopt(zmq.LINGER, 0)
        self.inbox.setsockopt(zmq.ROUTER_HANDOVER, 1)
        tcp_host = os.environ.get("FRAMEBUS_TCP_HOST")
        if tcp_host:
            self.inbox.bind(f"tcp://{tcp_host}:0")
        else:
            self.inbox.bind(f"ipc://{os.environ.get('FRAMEBUS_IPC_DIR', '/tmp')}/{self.id}-{os.getpid()}.sock")
        self.inbox_endpoint = self.inbox.getsockopt_string(zmq.LAST_ENDPOINT)
        self.ctl = self.ctx.socket(zmq.DEALER)
        self.ctl.setsockopt(zmq.IDENTITY, self.id.encode())
        self.ctl.setsockopt(zmq.LINGER, 500)
        self.ctl.connect(self.kernel_endpoint)
        self.send_ctl("hello", {"pid": os.getpid(), "inbox": self.inbox_endpoint, "inputs": INPUTS,
                                "outputs": OUTPUTS, "services": SERVICES, "driver": False})

    def send_ctl(self, cmd, body):
        frames, _ = encode("ctl", self.id, cmd, body, dst="kernel")
        self.ctl.send_multipart(frames)

    def connect_peers(self, peers):
        for node, peer in peers.items():
            endpoint = peer["inbox"]
            if node == self.id:
                continue
            known = self.peers.get(node)
            if known is not None and known[1] == endpoint:
                continue
            if known is not None:
                known[0].close(linger=0)
                for dst, inp, policy, size in self.all_edges():
                    if dst == node and policy == "block":
                        self.credits[(dst, inp)] = size
            sock = self.ctx.socket(zmq.DEALER)
            sock.setsockopt(zmq.IDENTITY, self.id.encode())
            sock.setsockopt(zmq.LINGER, 0)
            sock.setsockopt(zmq.SNDHWM, 10000)
            sock.connect(endpoint)
            self.peers[node] = (sock, endpoint)
        self.flush_backlog()

    def all_edges(self):
        return [edge for edges in self.out_edges.values() for edge in edges]

    # main loop -------------------------------------------------------------------------------
    def run(self):
        self.start()
        while True:
            poller = zmq.Poller()
            poller.register(self.ctl, zmq.POLLIN)
            poller.register(self.inbox, zmq.POLLIN)
            for sock, _ in self.peers.values():
                poller.register(sock, zmq.POLLIN)
            ready = dict(poller.poll(100))
            if self.ctl in ready:
                while self.ctl.poll(0):
                    code = self.on_ctl(self.ctl.recv_multipart())
                    if code is not None:
                        return code
            if self.inbox in ready:
                while self.inbox.poll(0):
                    self.on_inbox(self.inbox.recv_multipart())
            for node, (sock, _) in list(self.peers.items()):
                if sock in ready:
                    while not sock.closed and sock.poll(0):
                        self.decode_or_count(sock.recv_multipart(), node)  # answers we never asked for
            now = time.monotonic()
            if now - self.last_tap_flush >= 0.1:
                self.flush_taps()
            limit = max(self.grace, 6 * self.heartbeat)
            if now - self.last_kernel > limit:
                log(f"{self.id}: no heartbeat from the kernel for {limit:.1f} s; exiting")
                self.close()
                return 75

    def decode_or_count(self, frames, source):
        try:
            return decode(frames, self.max_bytes)
        except Malformed as exc:
            counts = self.stats["decode_errors"]
            counts[source] = counts.get(source, 0) + 1
            log(f"{self.id}: dropped a malformed message from {source}: {exc}")
            return None

    def on_ctl(self, frames):
        self.last_kernel = time.monotonic()
        decoded = self.decode_or_count(frames, "kernel")
        if decoded is None:
            return None
        header, body = decoded
        kind, cmd = header["k"], header["topic"]
        if kind == "req":
            self.serve(header, body, lambda out: self.ctl.send_multipart(out))
            return None
        if kind != "ctl":
            return None
        body = body if isinstance(body, dict) else {}
        if cmd == "welcome" and not self.welcomed:
            self.configure(body)
            self.state = "ready"
            self.send_ctl("ready", {})
        elif cmd == "reject" and not self.welcomed:
            log(f"{self.id}: {body.get('error', 'rejected by the kernel')}")
            self.close()
            return 2
        elif cmd == "peers" and self.welcomed:
            self.connect_peers(body)
        elif cmd == "start":
            self.state = "running"
        elif cmd == "hb" and self.welcomed:
            self.send_ctl("hb", {"state": self.state, "stats": self.stats})
        elif cmd == "stop":
            self.state = "stopping"
            self.flush_taps()
            self.send_ctl("bye", {"stats": self.stats})
            self.close()
            return 0
        return None  # pause / resume / step and unknown commands: nothing to do here

    def configure(self, welcome):
        self.welcomed = True
        self.heartbeat = float(welcome.get("heartbeat", self.heartbeat))
        self.grace = float(welcome.get("grace", self.grace))
        self.max_bytes = int(welcome.get("max_message_bytes", self.max_bytes))
        for name, spec in (welcome.get("inputs") or {}).items():
            self.input_policy[name] = spec["policy"]
            for source in spec["sources"]:
                node, output = source.split("/", 1)
                self.routes.setdefault((node, output), []).append(name)
        # each reader of an output as a (dst, input, policy, size) tuple, from the welcome's edge maps
        self.out_edges = {output: [(e["dst"], e["input"], e["policy"], e["size"]) for e in edges]
                          for output, edges in (welcome.get("outputs") or {}).items()}
        for dst, inp, policy, size in self.all_edges():
            if policy == "block":
                self.credits[(dst, inp)] = size
        self.connect_peers(welcome.get("peers") or {})

    # node traffic ----------------------------------------------------------------------------
    def on_inbox(self, frames):
        identity, frames = frames[0], frames[1:]
        decoded = self.decode_or_count(frames, identity.decode(errors="replace"))
        if decoded is None:
            return
        header, body = decoded
        kind, src, topic = header["k"], header["src"], header["topic"]
        if kind == "req":
            self.serve(header, body, lambda out: self.inbox.send_multipart([identity, *out]))
        elif kind == "credit":
            if isinstance(body, dict) and isinstance(body.get("input"), str) and isinstance(body.get("n"), int):
                key = (src, body["input"])
                self.credits[key] = self.credits.get(key, 0) + body["n"]
                self.flush_backlog()
        elif kind == "data":
            inputs = self.routes.get((src, topic))
            if inputs is None:
                counts = self.stats["decode_errors"]
                counts[f"{src}/{topic} (not wired)"] = counts.get(f"{src}/{topic} (not wired)", 0) + 1
                return
            for name in inputs:
                per_src = self.stats["inputs"].setdefault(name, {}).setdefault(src, {"received": 0, "dropped": 0})
                per_src["received"] += 1
                if name == "in":
                    self.publish("out", {"echo": body}, header.get("step"), header.get("tp"))
                if self.input_policy.get(name) == "block":  # taken at once: give the credit back
                    peer = self.peers.get(src)
                    if peer is not None:
                        frames, _ = encode("credit", self.id, "credit", {"input": name, "n": 1}, dst=src)
                        peer[0].send_multipart(frames)

    def serve(self, header, body, reply):
        svc, src, cid, tp = header["topic"], header["src"], header.get("cid"), header.get("tp")
        if svc == "upper" and isinstance(body, str):
            frames, size = encode("rep", self.id, svc, body.upper(), dst=src, cid=cid, tp=tp)
            if size <= self.max_bytes:
                reply(frames)
                return
            error = {"error": f"reply of {size} bytes is over the limit", "type": "MessageTooLarge"}
        elif svc == "upper":
            error = {"error": f"upper needs a string, got {type(body).__name__}", "type": "TypeError"}
        else:
            error = {"error": f"node {self.id!r} has no service {svc!r}; it offers {SERVICES}", "type": "UnknownService"}
        frames, _ = encode("err", self.id, svc, error, dst=src, cid=cid, tp=tp)
        reply(frames)

    def publish(self, output, body, step, tp):
        if output not in self.out_edges:
            return  # declared but nobody reads it
        self.backlog.append((output, body, step, tp))
        self.flush_backlog()

    def flush_backlog(self):
        while self.backlog:
            output, body, step, tp = self.backlog[0]
            edges = self.out_edges[output]
            blocked = [(d, i) for d, i, policy, _ in edges if policy == "block"]
            if any(self.credits.get(key, 0) <= 0 for key in blocked):
                return  # wait for credits; keep the order
            self.backlog.pop(0)
            for key in blocked:
                self.credits[key] -= 1
            self.seq += 1
            frames, size = encode("data", self.id, output, body, seq=self.seq, step=step, tp=tp)
            if size > self.max_bytes:
                log(f"{self.id}: dropped a {size}-byte message on {output}: over the bus limit")
                continue
            nbytes = sum(len(f) for f in frames)
            for dst in sorted({edge[0] for edge in edges}):
                peer = self.peers.get(dst)
                try:
                    if peer is None:
                        raise zmq.Again()
                    peer[0].send_multipart(frames, flags=zmq.NOBLOCK)
                except zmq.Again:
                    key = f"{output}->{dst}"
                    self.stats["send_dropped"][key] = self.stats["send_dropped"].get(key, 0) + 1
                    continue
                self.taps.append(["data", dst, output, self.seq, time.time(), nbytes, tp])
            self.stats["sent"][output] = self.stats["sent"].get(output, 0) + 1

    def flush_taps(self):
        self.last_tap_flush = time.monotonic()
        if self.taps:
            taps, self.taps = self.taps, []
            frames, _ = encode("tap", self.id, "tap", taps, dst="kernel")
            self.ctl.send_multipart(frames)

    def close(self):
        for sock, _ in self.peers.values():
            sock.close(linger=0)
        self.inbox.close(linger=0)
        self.ctl.close(linger=500)
        self.ctx.term()


if __name__ == "__main__":
    sys.exit(ForeignNode().run())
