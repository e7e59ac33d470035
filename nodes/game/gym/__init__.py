"""Gymnasium worlds on the bus: ``gym.env`` (``node``) plays any Gymnasium env id as an
environment node; ``spaces`` maps spaces to bus values; ``worlds`` knows which package registers
which ids (and adapts Crafter); ``policies`` holds scripted policies for the ``oracle`` param."""
