"""The Models pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="model",
    title="Models",
    source="framebus: any OpenAI-compatible server, the embedded model, oracles",
    nodes=("model.chat", "model.oracle"),
    needs=("[model]",),
    param_needs={"api_key_env": "${value}", "serve": "embedded model"},
)
