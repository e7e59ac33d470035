"""Built on the public core only: the CLI, graph view, export, progress, record, replay, report, the Ray backend."""
