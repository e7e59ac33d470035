"""The VisualWebArena and WebArena-Lite pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="vwa",
    title="VisualWebArena and WebArena-Lite",
    source="VisualWebArena (Koh et al.) on local sites; VisualAgentBench's WebArena-Lite",
    nodes=("judge.vwa",),
    launch_prefixes=("vwa", "forge", "vab_webarena_lite"),
    needs=("[browser]", "Chromium"),
)
