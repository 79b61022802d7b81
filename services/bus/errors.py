"""The root of the message bus's exceptions (the broker, its clients, the messages), each with a stable ``code``."""


class BusError(Exception):
    code = "bus_error"
