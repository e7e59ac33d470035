"""The launch process: the kernel, episodes, the results store, the supervisor, backends, keys and the runner."""
