"""MageBench WebUI: task folders, rendering a page folder in a sandboxed Chromium, and the AES metric.

``task`` reads a task folder (``steps`` its interactions, ``magebench_folder`` MageBench's own
layout), ``render`` loads a page folder and collects its elements, ``aes`` is the metric on
collected elements (no browser), ``scoring`` drives a task's interactions on the ground truth and
on a generated page, ``python -m nodes.browser.webui score TASK PAGE`` is the CLI.
"""
