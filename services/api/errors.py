"""The HTTP side of every refusal: which status each package's errors answer, and the JSON body they answer with.

The packages say *what* was refused (an exception with a stable ``code`` and a sentence); this module alone says how
HTTP carries it. A status is found by the error's class, nearest first, so a game's own error answers as the kind it
derives from (a Tiến Lên play out of turn is a ``NotExpectedError``: 409).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.cards import CardError
from services.errors import Refusal
from services.games.base import GameError, NotAllowedError, NotExpectedError
from services.ledger.errors import InsufficientFundsError, LedgerError
from services.rounds.checks import CheckError
from services.rounds.decks import DeckReportError
from services.rounds.errors import (
    AuthError,
    BettingClosedError,
    FencedError,
    FlowChangedError,
    ForbiddenError,
    NotFoundError,
    RoundError,
    RoundInProgressError,
    TableHeldError,
    WindowClosedError,
)
from services.rounds.manual import ManualCardRefusedError
from services.rounds.proposals import FourEyesRequiredError, ProposalRefusedError
from services.rounds.slips import SlipsStoppedError
from services.rounds.stakes import StakeChangedError, WalletNotConfiguredError
from services.wallet.errors import WalletError
from services.wallet.outbox import OutcomeUnknownError


class ConsoleUnavailableError(Exception):
    """The API has no broker connection, so it cannot relay the controller's dealer view."""

    code = "console_unavailable"


REFUSED = 422  # a rule broken or a value out of range: the base of every package
CONFLICT = 409  # refused in the state things are in now (betting closed, a proposal decided, funds short)

# The roots the API answers as refusals, and the statuses of the kinds below them.
REFUSALS: tuple[type[Exception], ...] = (RoundError, GameError, LedgerError, CardError, WalletError,
                                         ConsoleUnavailableError)  # fmt: skip
STATUS: Mapping[type[Exception], int] = {
    RoundError: REFUSED,
    NotFoundError: 404,
    AuthError: 401,
    ForbiddenError: 403,
    BettingClosedError: CONFLICT,
    RoundInProgressError: CONFLICT,
    TableHeldError: CONFLICT,
    WindowClosedError: CONFLICT,
    FlowChangedError: CONFLICT,
    FencedError: CONFLICT,
    ProposalRefusedError: CONFLICT,
    FourEyesRequiredError: CONFLICT,
    ManualCardRefusedError: CONFLICT,
    DeckReportError: CONFLICT,
    CheckError: CONFLICT,
    StakeChangedError: CONFLICT,
    WalletNotConfiguredError: 503,
    SlipsStoppedError: 503,
    GameError: REFUSED,
    NotExpectedError: CONFLICT,
    NotAllowedError: 403,
    LedgerError: REFUSED,
    InsufficientFundsError: CONFLICT,
    CardError: REFUSED,
    WalletError: CONFLICT,
    OutcomeUnknownError: 503,
    ConsoleUnavailableError: 503,
}


def status_of(error: Exception) -> int:
    """The HTTP status of a refusal: its nearest class's, else a plain refusal (422)."""
    for kind in type(error).__mro__:
        if kind in STATUS:
            return STATUS[kind]
    return REFUSED


def code_of(error: Exception) -> str:
    code = getattr(error, "code", "invalid_request")
    return code if isinstance(code, str) else "invalid_request"


def body_of(error: Exception) -> dict[str, Any]:
    """A refusal's JSON body: its ``code`` and ``message``; and, where the refusing package named it, the ``reason``
    (finer than the code) with its ``params``, from which a page says the refusal in its reader's language."""
    body: dict[str, Any] = {"code": code_of(error), "message": str(error)}
    if isinstance(error, Refusal) and error.reason:
        body |= {"reason": error.reason, "params": error.params}
    return body
