"""The Robots over MQTT pack as ``launch ls`` lists it (see kernel.sdk.catalogue)."""

from kernel.sdk.catalogue import Pack

PACK = Pack(
    name="mqtt",
    title="Robots over MQTT",
    source="framebus: any MQTT device as a node; a simulated rover",
    nodes=("mqtt.bridge", "mqtt.broker", "mqtt.rover"),
    launch_prefixes=("robot",),
    needs=("[mqtt]", "mosquitto"),
)
