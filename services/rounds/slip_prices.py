"""The first step of operator's-wallet bet slips, many at once (``services.rounds.stakes.one_price`` prices one): in
the slip writer's transaction, each slip's finished answer looked up (a retry), its debit's outbox row and any
rollback of it read, its round read under the shared lock and its player's wagers so far, all by one statement each;
each slip priced by its game's rules in Python; the new debits recorded by one statement. A slip is refused alone, in
the one-slip path's order and words: a key used for another request, a debit already rolled back, betting closed, a
rule of the game, a transaction id recorded for another movement.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from services.ledger import idempotency
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.slip_writes import OwnWager, betting_rounds, found_calls, insert_calls, own_wagers
from services.rounds.stakes import REFUSALS, StakeChangedError
from services.wallet.models import STAKE, WalletCallRecord
from services.wallet.outbox import the_same
from services.wallet.seamless import new_call, rollback_of, rolled_back_words, row_of, stake_transaction

REASON = "bet"


def priced(service: RoundCore, session: Session, batch: list[Any]) -> list[Any]:
    """Each slip's outcome in batch order: its finished answer (a dict), its debit's outbox row (recorded now, or
    before by the same request), or its refusal. Each slip has ``adapter``, ``player``, ``round_id``, ``bets``,
    ``key`` and ``request`` (``services.rounds.slips.Pending``)."""
    outcomes: list[Any] = list(idempotency.stored_many(session, [(s.key, s.player, s.request) for s in batch]))
    transactions = [stake_transaction(s.round_id, s.player, s.key) for s in batch]
    live = [i for i, outcome in enumerate(outcomes) if outcome is None]
    wanted = [transactions[i] for i in live] + [rollback_of(transactions[i]) for i in live]
    rows = {row.transaction_id: row for row in found_calls(session.connection(), wanted)}
    for i in live:
        if rollback_of(transactions[i]) in rows:
            outcomes[i] = StakeChangedError(rolled_back_words(transactions[i]))
        elif not batch[i].bets:
            outcomes[i] = RoundError("a bet slip needs at least one bet")
    live = [i for i in live if outcomes[i] is None]
    rounds = betting_rounds(service, session, batch, live, outcomes)
    live = [i for i in live if outcomes[i] is None]
    owns = own_wagers(session, [(batch[i].round_id, batch[i].player) for i in live])
    now = service.clock.now()
    new: list[dict[str, Any]] = []
    for i in live:
        slip, round_ = batch[i], rounds[batch[i].round_id]
        try:
            settings = service.round_settings(slip.round_id, round_.settings, slip.adapter.game)
            own: list[OwnWager] = owns[(slip.round_id, slip.player)]
            amount = slip.adapter._plan(settings, slip.player, slip.round_id, own, slip.bets, now).holding()
            currency = service.table(session, round_.table_id).currency
            call = new_call("debit", slip.player, amount, currency, slip.round_id, transactions[i], REASON)
            found = rows.get(transactions[i])
            if found is not None:
                outcomes[i] = the_same(WalletCallRecord(**found._asdict()), call)
                continue
        except REFUSALS as refusal:
            outcomes[i] = refusal
            continue
        new.append(row_of(call, STAKE))
        outcomes[i] = WalletCallRecord(**new[-1])  # (as recorded; not in the session)
    if new:
        insert_calls(session.connection(), new)
    return outcomes
