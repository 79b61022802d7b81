"""The message bus: MQTT topic names, versioned payloads, the embedded broker, a client wrapper."""
