"""The NetHack pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="nethack",
    title="NetHack (BALROG)",
    source="BALROG (Paglieri et al., 2024) on the NetHack Learning Environment (nle 1.3.0) and MiniHack (1.0.2)",
    nodes=("nethack.env", "nethack.judge"),
    launch_prefixes=("nethack", "minihack"),
    needs=("nle",),  # setup.sh installs nle==1.3.0 with --no-deps (its metadata pins an older gymnasium)
)
