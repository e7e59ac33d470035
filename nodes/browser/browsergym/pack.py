"""The BrowserGym pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="browsergym",
    title="BrowserGym",
    source="BrowserGym (ServiceNow): any of its registered tasks, its own environment hosted in the node",
    nodes=("browsergym.env",),
    launch_prefixes=("browsergym",),
    needs=("[browser]", "Chromium", "browsergym-core"),  # setup.sh installs it with --no-deps (it pins playwright)
)
