"""One node process: the wire protocol, sockets, input queues, shared memory, CURVE, tracing, logs and the runtime."""
