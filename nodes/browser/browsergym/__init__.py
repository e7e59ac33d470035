"""BrowserGym's tasks as environment nodes: ``browsergym.env`` (``node``) hosts BrowserGym's own
Gymnasium environment (MiniWoB++, WebArena, VisualWebArena, WorkArena, AssistantBench, as their
packages register them) on Debian's Chromium, and maps its observation to framebus's conventions
(``observation``)."""
