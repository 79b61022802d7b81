"""Exceptions of the round service, each with a stable ``code``; the API alone says which HTTP status each answers."""

from services.errors import Refusal
from services.ledger.errors import LedgerError


class RoundError(Refusal):
    code = "invalid_request"


class NotFoundError(RoundError):
    code = "not_found"


class BettingClosedError(RoundError):
    code = "betting_closed"


class TableHeldError(RoundError):
    """The table's last deck was not whole: no round opens until an operator acknowledges its report."""

    code = "table_held"


class WindowClosedError(RoundError):
    code = "window_closed"


class RecalculationRefusedError(RoundError):
    """A correction that would have changed the deal flow: the round must be voided instead."""

    code = "recalculation_refused"


class FlowChangedError(RecalculationRefusedError):
    """The corrected cards would have dealt the round differently (who draws, insurance, early settlement, a card
    the deck could not have held): only a void can put it right."""

    code = "flow_changed"


class FencedError(RoundError):
    """The writer no longer holds the table's lease (``RoundCore.fence``): the write is refused, nothing is kept."""

    code = "fenced"


class RoundInProgressError(RoundError):
    """A table's next round cannot open while its current one is unfinished."""

    code = "round_in_progress"


class AuthError(RoundError):
    code = "unauthorized"


class ForbiddenError(RoundError):
    code = "forbidden"


__all__ = [
    "AuthError",
    "BettingClosedError",
    "FencedError",
    "ForbiddenError",
    "LedgerError",
    "NotFoundError",
    "RecalculationRefusedError",
    "RoundError",
    "RoundInProgressError",
    "WindowClosedError",
]
