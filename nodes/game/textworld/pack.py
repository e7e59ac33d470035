"""The TextWorld pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="textworld",
    title="TextWorld (BALROG)",
    source="BALROG (Paglieri et al., 2024): Treasure Hunter, The Cooking Game, Coin Collector, generated "
           "locally by TextWorld 1.7 (Côté et al.)",
    nodes=("textworld.env", "textworld.judge"),
    launch_prefixes=("textworld",),
    needs=("[worlds]",),
)
