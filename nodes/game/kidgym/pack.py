"""The KidGym pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="kidgym",
    title="KidGym",
    source="KidGym (ICLR 2026): 12 tasks x 3 levels",
    nodes=("kidgym.env", "kidgym.judge"),
    launch_prefixes=("kidgym",),
    needs=("[games]",),
)
