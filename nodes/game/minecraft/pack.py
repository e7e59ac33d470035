"""The VAB Minecraft pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="minecraft",
    title="VAB Minecraft",
    source="VisualAgentBench's Minecraft tasks, on flying-squid + mineflayer (offline)",
    nodes=("minecraft.env", "minecraft.judge"),
    launch_prefixes=("vab_minecraft",),
    needs=("Node.js", "[browser]", "Chromium"),
)
