"""Browser environments: Chromium through Playwright, local web sites and VisualWebArena's tasks."""
