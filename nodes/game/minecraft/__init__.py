"""VAB-Minecraft on a real Minecraft 1.16.5 world, offline: a flying-squid server and a mineflayer bot in a
Node.js sidecar (``js/``, driven through ``sidecar``), and VAB's 116 tasks (``data/``)."""
