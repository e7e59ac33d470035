"""The OpenEnv environments pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="openenv",
    title="OpenEnv environments",
    source="OpenEnv (openenv-core): any environment server as a node",
    nodes=("openenv.env",),
    needs=("[train]",),
)
