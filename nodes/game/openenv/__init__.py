"""OpenEnv environments on the bus: ``openenv.env`` (``node``) plays any OpenEnv environment server,
one already running on this machine or one it starts from an environment package."""
