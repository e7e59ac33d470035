"""VisualAgentBench's Minecraft (VAB-Minecraft) on a real Minecraft 1.16.5 world served offline by
flying-squid, with a mineflayer bot as the agent's body (``js/``, started by ``sidecar``) and its
first-person view rendered by prismarine-viewer in headless Chromium (``view``).

The pure-Python side: minecraft-data's facts (``mcdata``), recipes with tags resolved (``recipes``),
how raw materials are gathered (``sources``), the recipe look-up the agent can call (``lookup``), VAB's
116 tasks (``tasks``), a recipe-tree planner for the scripted solver (``planner``), and VAB's agent
setting: reading replies (``parsing``), the end rules (``guards``) and the step reward (``rewards``)."""
