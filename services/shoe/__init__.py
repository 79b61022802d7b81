"""The shoe daemon (device → MQTT) and the feed that reads it back exactly once, in order."""
