"""V-MAGE for framebus: pygame games paused while the model thinks (spec: shared/specs/vmage.md).

Modules, by what they hold:

* ``base``: the level record, the fixed 30 fps logic clock, a decision of sample frames, frames
  scaled to 360 px high, and one in-process episode (tests, benchmarks);
* ``pong`` / ``flappy``: the games, drawn in code, each with a text view and a scripted policy;
* ``race`` / ``tempest`` / ``mario``: three more, each in parts: its rules with the text view
  (``*_rules``), its picture (``*_view``) and the game class that joins them, above both; Race's
  and TempestRun's rules hold their scripted policy, SuperMario's is ``mario_policy``;
* ``catalog``: the games by name, the (game, level) cells a run deals, the prompt template per level;
* ``paper``: the paper's per-level averages, printed beside ours;
* ``node``: the framebus environment node (``vmage.env``).
"""
