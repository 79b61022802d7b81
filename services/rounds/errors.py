"""Exceptions of the round service, each with a stable ``code`` and the HTTP ``status`` the API answers."""

from services.ledger.errors import LedgerError


class RoundError(ValueError):
    code = "invalid_request"
    status = 422


class NotFoundError(RoundError):
    code = "not_found"
    status = 404


class BettingClosedError(RoundError):
    code = "betting_closed"
    status = 409


class TableHeldError(RoundError):
    """The table's last deck was not whole: no round opens until an operator acknowledges its report."""

    code = "table_held"
    status = 409


class WindowClosedError(RoundError):
    code = "window_closed"
    status = 409


class RecalculationRefusedError(RoundError):
    """A correction that would have changed the deal flow: the round must be voided instead."""

    code = "recalculation_refused"


class FlowChangedError(RecalculationRefusedError):
    """The corrected cards would have dealt the round differently (who draws, insurance, early settlement, a card
    the deck could not have held): only a void can put it right."""

    code = "flow_changed"
    status = 409


class AuthError(RoundError):
    code = "unauthorized"
    status = 401


class ForbiddenError(RoundError):
    code = "forbidden"
    status = 403


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
