"""Exceptions of the ledger; each carries a stable ``code`` and the HTTP ``status`` the API answers."""


class LedgerError(ValueError):
    code = "ledger_error"


class InsufficientFundsError(LedgerError):
    code = "insufficient_funds"


class InvalidAmountError(LedgerError):
    code = "invalid_amount"


class IdempotencyConflictError(LedgerError):
    """The same idempotency key arrived with different content."""

    code = "idempotency_conflict"


class HoldStateError(LedgerError):
    """A hold that was already posted or voided, or a round with no holds to resolve."""

    code = "hold_state"
