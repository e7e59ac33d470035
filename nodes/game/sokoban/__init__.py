"""MageBench's Sokoban for framebus: rules, levels (XSB), a move-optimal solver, the 182-level
benchmark in eight tiers, rendering, scoring, the bus node, and a Gymnasium env.

Modules, by what they hold:

* ``levels``: the immutable :class:`Level` and the XSB text format;
* ``rules``: moves, pushes and MageBench's per-step reward;
* ``solver``: shortest solutions (A* over pushes, costed in steps);
* ``generator`` / ``tiers`` / ``benchmark``: making levels, the eight tiers, the stored benchmark set;
* ``render``: tiles, frames and the text view;
* ``scoring`` / ``game``: the episode score and one episode's bookkeeping;
* ``node``: the framebus environment node; ``gym_env``: ``framebus/Sokoban-v0``;
* ``baselines``: idle and random, in one process.
"""
