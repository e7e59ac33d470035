"""The VAB CSS pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="css",
    title="VAB CSS",
    source="VisualAgentBench's CSS task: fix a page's style to match a target",
    nodes=("css.env", "judge.css"),
    launch_prefixes=("css",),
    needs=("[browser]", "Chromium"),
)
