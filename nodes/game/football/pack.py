"""The Google Research Football pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="football",
    title="Google Research Football",
    source="MageBench (Zhang et al.): its football levels; gfootball's own scenarios",
    nodes=("football.env", "football.judge"),
    launch_prefixes=("football",),
    needs=("[football]",),
)
