"""The Sokoban pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="sokoban",
    title="Sokoban",
    source="MageBench (Zhang et al.): its 182-level Sokoban set",
    nodes=("sokoban.env", "sokoban.judge"),
    launch_prefixes=("sokoban",),
    needs=("[games]",),
)
