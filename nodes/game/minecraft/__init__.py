"""VAB-Minecraft on a real Minecraft world, offline: a flying-squid server and a mineflayer bot
(``js/``), VAB's 116 tasks (``data/``), and VAB's agent setting: reading replies (``parsing``), the
end rules (``guards``) and the step reward (``rewards``)."""
