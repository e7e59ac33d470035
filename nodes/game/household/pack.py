"""The VAB household pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="household",
    title="VAB household",
    source="VisualAgentBench's OmniGibson tasks, on BEHAVIOR's BDDL definitions (symbolic, offline)",
    nodes=("household.env", "household.judge"),
    launch_prefixes=("vab_household",),
    needs=("[worlds]",),
)
