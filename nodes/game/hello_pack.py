"""The Hello pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="hello",
    title="Hello",
    source="framebus: a countdown to zero, the smallest graph (env, agent, judge)",
    nodes=("hello.env", "hello.agent", "hello.judge"),
    launch_prefixes=("hello",),
)
