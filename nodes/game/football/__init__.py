"""The Google Research Football pack: MageBench's football benchmark (and gfootball's own levels) on the bus.

Modules, smallest first: ``actions`` (names <-> engine codes), ``seats`` (which agent plays which
footballer), ``scenarios`` (levels built from the shared data), ``raw_state`` (the state as plain
data), ``text_view`` (the state in words), ``autorender`` (one decision, several frames),
``oracle`` (a scripted attacker), ``engine`` (the gfootball engine) and ``node`` (the environment
node). The reward judge lives in ``nodes.judge.football``. gfootball itself is installed by
``scripts/install_football.sh``; nothing here imports it until a match starts.
"""
