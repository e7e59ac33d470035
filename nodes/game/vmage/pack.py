"""The V-MAGE games pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="vmage",
    title="V-MAGE games",
    source="V-MAGE: Pong, FlappyBird, RaceGame, TempestRun, SuperMario",
    nodes=("vmage.env", "judge.vmage", "judge.vmage_elo"),
    launch_prefixes=("vmage",),
    needs=("[games]",),
)
