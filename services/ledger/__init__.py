"""The double-entry ledger: accounts, transfers, holds, settlement, adjustments and debts."""

from services.ledger.errors import (
    HoldStateError,
    IdempotencyConflictError,
    InsufficientFundsError,
    InvalidAmountError,
    LedgerError,
)
from services.ledger.holds import void_holds
from services.ledger.ledger import Ledger, Movement
from services.ledger.models import AccountKind, HoldStatus
from services.ledger.settlement import StakeResult, settle_round

__all__ = [
    "AccountKind",
    "HoldStateError",
    "HoldStatus",
    "IdempotencyConflictError",
    "InsufficientFundsError",
    "InvalidAmountError",
    "Ledger",
    "LedgerError",
    "Movement",
    "StakeResult",
    "settle_round",
    "void_holds",
]
