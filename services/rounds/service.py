"""The round service: the one place that changes a round and moves its money, for every game.

The API, operator tools and the round controller all call it. It is its topics, one module each on a shared core
(``services.rounds.core``: the one command path and its transaction): ``tables``, ``commands``, ``reads``,
``corrections`` and ``card_checks``. What a game adds (its player actions, what the end of a window means, what it
stores at settlement) is its ``Adapter`` (``services.rounds.adapters``); the engine itself is reached only through the
game port (``services.games.base``); the games themselves come from the catalog the service is given
(``services.catalog``).
"""

from __future__ import annotations

from services.rounds.card_checks import CardChecks
from services.rounds.commands import Commands
from services.rounds.corrections import Corrections
from services.rounds.reads import Reads
from services.rounds.records import (
    Along,
    Applied,
    as_seen,
    result_nets,
    state_header,
    stored_result,
    stored_round,
    table_of_round,
)
from services.rounds.tables import TableRounds

__all__ = [
    "Along",
    "Applied",
    "RoundService",
    "as_seen",
    "result_nets",
    "state_header",
    "stored_result",
    "stored_round",
    "table_of_round",
]


class RoundService(TableRounds, Commands, Reads, Corrections, CardChecks):
    """Every topic of the round service on one core: what the API, the tools and the controller hold."""
