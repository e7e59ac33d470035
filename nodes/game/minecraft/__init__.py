"""VisualAgentBench's Minecraft (VAB-Minecraft) on a real Minecraft 1.16.5 world served offline by
flying-squid, with a mineflayer bot as the agent's body. The pure-Python side: minecraft-data's facts
(``mcdata``), recipes with tags resolved (``recipes``), how raw materials are gathered (``sources``),
the recipe look-up the agent can call (``lookup``), VAB's 116 tasks (``tasks``) and a recipe-tree
planner for the scripted solver (``planner``)."""
