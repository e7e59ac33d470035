"""Real local web sites for the browser environment: Starlette apps on SQLite, seeded content.

Each site is server-rendered HTML over a SQLite database whose whole content comes from a seed;
its pictures are drawn in code and their visual attributes stored beside them, so a question about
an image has a known answer. ``node.py`` runs one site under uvicorn and supervises it."""
