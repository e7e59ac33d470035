"""VisualAgentBench's CSS task (VAB-CSS): front-end projects, rule edits, the four tools, rendering,
SSIM, the instance generator and a scripted solver. The environment node is built elsewhere on top.
"""

from pathlib import Path

PROJECTS_DIR = Path(__file__).parent / "projects"
INSTANCES_PATH = Path(__file__).parent / "data" / "instances.json"

__all__ = ["INSTANCES_PATH", "PROJECTS_DIR"]
