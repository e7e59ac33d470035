"""The Gymnasium and PettingZoo worlds pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="gym",
    title="Gymnasium and PettingZoo worlds",
    source="Farama: Atari (ale-py), CartPole, Crafter (also on BALROG's protocol), highway-env, MiniGrid, PettingZoo classic",
    nodes=("gym.env", "pettingzoo.env"),
    launch_prefixes=("atari", "babyai", "cartpole", "crafter", "highway", "minigrid", "rps", "tictactoe"),
    needs=("[worlds]",),
)
