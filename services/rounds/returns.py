"""The return-to-player guard: the house's bets must return less than they take.

A table whose settings give any bet the house takes an expected return of 100 % or more — or one not shown to be
under 100 %: the upper end of its 95 % interval — is refused when it is created or its settings change, with an
error that states the return, unless the operator sets ``allow_return_over_100`` (recorded with the table, shown on
the operator's page). Games where the players play each other have no such bet.
"""

from __future__ import annotations

from typing import Any, Final

from services.rounds.adapters import Adapter
from services.rounds.errors import RoundError

# The commission the studio's own tools (``studio up``, the demo, a table ``studio controller`` creates) take on wins
# at their Pok Deng tables: at the rules' default of none the banker side returns 100.9 %.
HOUSE_SETTINGS: Final[dict[str, Any]] = {"commission_bps": 500}


class ReturnOver100Error(RoundError):
    code = "return_over_100"


def table_returns(adapter: Adapter, settings: Any) -> dict[str, Any] | None:
    """The table's bets and their returns (None: the house takes no bet at this game)."""
    return adapter.returns(settings)


def check_returns(table_id: str, adapter: Adapter, settings: Any, allow_return_over_100: bool) -> None:
    """Refuse settings that let a house bet return 100 % or more, naming the bets and their returns."""
    found = table_returns(adapter, settings)
    if found is None or allow_return_over_100:
        return
    over = {name: bet for name, bet in found["bets"].items() if bet["ci95"][1] >= 1}
    if not over:
        return
    named = ", ".join(f"{name} {bet['rtp']:.2%} ({_precision(bet)})" for name, bet in over.items())
    fix = f"; {found['fix']}" if found["fix"] else ""
    raise ReturnOver100Error(
        f"table {table_id}: its settings let bets return 100 % or more of what they take — {named}{fix}; "
        "or set allow_return_over_100 to run it so"
    )


def _precision(bet: dict[str, Any]) -> str:
    low, high = bet["ci95"]
    return "exact" if low == high else f"95 % interval {low:.2%}–{high:.2%}"
