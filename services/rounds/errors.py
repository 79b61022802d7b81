"""Exceptions of the round service, each with a stable ``code`` for API error bodies."""

from services.ledger.errors import LedgerError


class RoundError(ValueError):
    code = "round_error"


class NotFoundError(RoundError):
    code = "not_found"


class BettingClosedError(RoundError):
    code = "betting_closed"


class WindowClosedError(RoundError):
    code = "window_closed"


class RecalculationRefusedError(RoundError):
    """A correction that would have changed the deal flow: the round must be voided instead."""

    code = "recalculation_refused"


class AuthError(RoundError):
    code = "unauthorized"


class ForbiddenError(RoundError):
    code = "forbidden"


__all__ = [
    "AuthError",
    "BettingClosedError",
    "ForbiddenError",
    "LedgerError",
    "NotFoundError",
    "RecalculationRefusedError",
    "RoundError",
    "WindowClosedError",
]
