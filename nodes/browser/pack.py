"""The Browser pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="browser",
    title="Browser",
    source="framebus: Chromium through Playwright, and the local sites",
    nodes=("browser.env", "browser.site"),
    needs=("[browser]", "Chromium"),
)
