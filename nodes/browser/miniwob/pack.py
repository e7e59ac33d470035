"""The MiniWoB++ pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="miniwob",
    title="MiniWoB++",
    source="Farama's miniwob package: its task pages served offline, played through the browser node",
    nodes=("miniwob.env", "miniwob.site"),
    launch_prefixes=("miniwob",),
    needs=("[browser]", "Chromium"),
)
