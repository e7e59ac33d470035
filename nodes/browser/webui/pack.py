"""The WebUI pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="webui",
    title="WebUI",
    source="MageBench (Zhang et al.): WebUI page generation, AES metric",
    nodes=("webui.env", "judge.webui"),
    launch_prefixes=("webui",),
    needs=("[browser]", "Chromium"),
)
