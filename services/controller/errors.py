"""Exceptions of the round controller, each with a stable ``code``; the process says them in one line and stops."""


class ControllerError(RuntimeError):
    code = "controller_error"


class LeaseHeldError(ControllerError):
    """Another controller is writing the table."""

    code = "lease_held"
