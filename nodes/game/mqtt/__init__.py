"""Robots over MQTT: any device that speaks MQTT becomes part of a framebus graph.

* ``bridge.MqttBridge``: a generic node mapping bus inputs to MQTT topics and MQTT topics to bus
  outputs (codecs in ``codec``, params in ``config``), reconnecting with backoff;
* ``broker.LocalBroker``: a local mosquitto (loopback only) and the simulated devices behind it,
  for running without hardware;
* ``robot``: a simulated rover that speaks only MQTT (``python -m nodes.game.mqtt.robot``);
* ``robot_env.MqttRobotEnv``: the environment node that plays rover episodes through the bridge.

See docs/robots.md. This package imports nothing heavy on purpose: the device program imports it.
"""
