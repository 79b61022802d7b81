"""Posting a round's results against its holds: a handful of statements whatever the round's size.

Each stake's result resolves its holds (``hold_resolutions``: what of each went to the house, what the house paid
under it) and the money moves summed per player — a release, a loss, a win and a commission transfer at most. On
PostgreSQL the holds are claimed, the lines written, the transfers recorded and the balances changed by one
statement fed three arrays (``SETTLE``), after one that locks the accounts in id order; elsewhere the same lines are
computed here (``stake_lines``, the rule both follow) and written through ``holds.resolve``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from services.ledger.errors import HoldStateError
from services.ledger.holds import PendingHold, Resolution, pending_holds, resolve
from services.ledger.ledger import Ledger
from services.ledger.models import AccountKind, utcnow


@dataclass(frozen=True, slots=True)
class StakeResult:
    """The outcome of one held stake (a wager, or a player's insurance) as money."""

    player: str
    wager_id: str
    net: int  # change to the player's money, stake excluded; commission already deducted
    commission: int = 0
    beyond_hold: bool = False  # a loss past the hold is taken from the wallet, the rest recorded as debt


def settle_round(ledger: Ledger, round_id: str, results: Iterable[StakeResult]) -> int:
    """Resolve every pending hold of the round by its stake's result; returns the hold count.

    A loss goes to the house from the stake's holds in the order they were placed and the rest of each back to
    the wallet; a win releases every hold and the house pays the winnings, less commission, under the first. A
    result with no pending hold, a held stake with no result, a loss past the holds (unless ``beyond_hold``: the
    excess is then taken from the wallet, the rest recorded as debt) are refused before anything is kept: the round
    settles in the caller's one transaction or not at all.
    """
    results = list(results)
    for result in results:
        if result.commission < 0:
            raise HoldStateError(f"round {round_id}: stake {result.wager_id} pays commission {result.commission}")
    wagers = Counter(result.wager_id for result in results)
    if len(wagers) != len(results):
        twice = sorted(wager for wager, count in wagers.items() if count > 1)
        raise HoldStateError(f"round {round_id}: stake(s) {', '.join(twice)} settled twice in one batch")
    if ledger.postgres:
        resolved, excess, debtors = _settle_in_database(ledger, round_id, results)
    else:
        resolved, excess = _settle_here(ledger, round_id, results)
        debtors = ledger.debtors(result.player for result in results if result.net > 0)
    beyond = {result.wager_id: result for result in results if result.beyond_hold}
    for wager_id, (loss, held) in sorted(excess.items()):
        if wager_id not in beyond:
            raise HoldStateError(f"round {round_id}: stake {wager_id} loses {loss}, more than its hold {held}")
    for wager_id, (loss, held) in sorted(excess.items()):  # after the batch: what the round released is in the wallet
        ledger.take(beyond[wager_id].player, loss - held, "loss", round_id, wager_id, memo="loss beyond the hold")
    # A winner who owed before the round pays it back from the win. (A debt the take above just made leaves nothing
    # in the wallet to recover, so the debtors found before it are the ones to ask.)
    for player in debtors:
        ledger.recover_debt(player)
    return resolved


def stake_lines(result: StakeResult, holds: list[PendingHold]) -> list[Resolution]:
    """How a stake's result resolves its holds (a loss past them is not theirs: see ``settle_round``)."""
    lines: list[Resolution] = []
    loss = max(0, -result.net)
    for nth, hold in enumerate(holds):
        taken = min(loss, hold.amount)
        loss -= taken
        won = result.net + result.commission if nth == 0 and result.net >= 0 else 0
        lines.append(Resolution(hold, loss=taken, win=won, commission=result.commission if won else 0))
    return lines


# what each stake whose loss is past its holds loses, and holds: its wager id -> (loss, held)
Excess = dict[str, tuple[int, int]]


def _settle_here(ledger: Ledger, round_id: str, results: list[StakeResult]) -> tuple[int, Excess]:
    held: dict[str, list[PendingHold]] = defaultdict(list)
    for hold in pending_holds(ledger, round_id):
        held[hold.wager_id].append(hold)
    lines: list[Resolution] = []
    excess: Excess = {}
    for result in results:
        holds = held.pop(result.wager_id, None)
        if holds is None:
            raise HoldStateError(f"round {round_id}: stake {result.wager_id} has no pending hold to settle")
        lines += stake_lines(result, holds)
        total = sum(hold.amount for hold in holds)
        if -result.net > total:
            excess[result.wager_id] = (-result.net, total)
    if held:
        raise HoldStateError(f"round {round_id}: no result for held stake(s) {', '.join(sorted(held))}")
    resolve(ledger, round_id, lines)
    return len(lines), excess


# The accounts a settlement changes, locked in id order first (as every batch of transfers locks them), so a
# concurrent bet of one of its players cannot deadlock with it.
LOCK = text(
    "SELECT count(*) FROM (SELECT a.id FROM accounts a WHERE a.currency = :currency AND ("
    "(a.owner = '' AND a.kind IN ('house', 'commission')) OR (a.kind IN ('wallet', 'hold') AND a.owner IN "
    "(SELECT DISTINCT h.player FROM holds h WHERE h.round_id = :round_id AND h.currency = :currency))) "
    "ORDER BY a.id FOR UPDATE) AS locked"
)

# For this transaction only: the round's sorts and joins in memory, and no JIT (compiling the statement costs more
# than it saves). The round's holds and results meet in a FULL JOIN, which is hashed or merged, never a nested loop.
PLANNER = text("SET LOCAL work_mem = '64MB'; SET LOCAL jit = off")

# One statement: the round's pending holds fully joined to the results (a hold without a result, or a result without
# a hold, is a row too: what the caller refuses), each stake's loss taken from its holds in the order they were
# placed and its win under the first; one resolution row per hold, the movements summed per player and kind, the
# balances changed. Its one row is the tally: what was resolved and what a caller must refuse (a loss past a stake's
# holds is looked for only when some hold was lost in full: a sub-select in a CASE runs only if its branch is taken).
SETTLE = text(
    """
WITH m AS (
    SELECT j.*,
           LEAST(amount, GREATEST(0, -net - before)) AS loss,
           CASE WHEN nth = 1 AND net >= 0 THEN net + fee ELSE 0 END AS win,
           CASE WHEN nth = 1 AND net >= 0 THEN fee ELSE 0 END AS taken
    FROM (
        SELECT p.id, p.player, p.amount, coalesce(p.wager_id, r.wager_id) AS wager_id, r.n, r.net, r.fee,
               SUM(p.amount) OVER stake - p.amount AS before, row_number() OVER stake AS nth
        FROM (
            SELECT h.id, h.player, h.wager_id, h.amount FROM holds h
            WHERE h.round_id = :round_id AND h.currency = :currency
              AND (SELECT x.hold_id FROM hold_resolutions x WHERE x.hold_id = h.id LIMIT 1) IS NULL  -- a probe per hold
        ) AS p
        FULL JOIN unnest(
            string_to_array(:wagers, E'\\n'),
            CAST(string_to_array(:nets, ',') AS bigint[]),
            CAST(string_to_array(:fees, ',') AS bigint[])
        ) WITH ORDINALITY AS r(wager_id, net, fee, n) ON r.wager_id = p.wager_id
        WINDOW stake AS (PARTITION BY r.n ORDER BY p.id)  -- by the result's number: a sort on integers
    ) AS j
), lines AS (  -- run though not read: a WITH's writes always run
    INSERT INTO hold_resolutions (hold_id, status, loss, win, commission, created_at)
    SELECT id, 'posted', loss, win, taken, :now FROM m WHERE id IS NOT NULL AND n IS NOT NULL
), per AS (
    SELECT player, SUM(amount - loss) AS released, SUM(loss) AS lost, SUM(win) AS won, SUM(taken) AS fee,
           bool_or(net > 0) AS winner
    FROM m WHERE id IS NOT NULL AND n IS NOT NULL GROUP BY player
), owners AS (
    SELECT per.*, w.id AS wallet, e.id AS escrow FROM per
    JOIN accounts w ON w.kind = 'wallet' AND w.owner = per.player AND w.currency = :currency
    JOIN accounts e ON e.kind = 'hold' AND e.owner = per.player AND e.currency = :currency
), moves AS (
    SELECT escrow AS debit, wallet AS credit, released AS amount, 'release' AS kind, player FROM owners
        WHERE released > 0
    UNION ALL SELECT escrow, :house, lost, 'loss', player FROM owners WHERE lost > 0
    UNION ALL SELECT :house, wallet, won, 'win', player FROM owners WHERE won > 0
    UNION ALL SELECT wallet, :commission, fee, 'commission', player FROM owners WHERE fee > 0
), recorded AS (
    INSERT INTO transfers (debit_account_id, credit_account_id, amount, currency, kind, round_id, wager_id, hold_id,
                           request_key, memo, created_at)
    SELECT debit, credit, amount, :currency, kind, :round_id, NULL, NULL, :request_key, '', :now
    FROM moves ORDER BY player, kind
    RETURNING debit_account_id, credit_account_id, amount
), deltas AS (
    SELECT id, SUM(delta) AS delta FROM (
        SELECT debit_account_id AS id, -amount AS delta FROM recorded
        UNION ALL SELECT credit_account_id, amount FROM recorded
    ) AS d GROUP BY id
), applied AS (
    UPDATE accounts SET balance = accounts.balance + deltas.delta FROM deltas
    WHERE accounts.id = deltas.id AND deltas.delta <> 0
)
SELECT
    count(*) FILTER (WHERE id IS NOT NULL AND n IS NOT NULL) AS resolved,
    (SELECT count(*) FROM per) - (SELECT count(*) FROM owners) AS ownerless,
    array_agg(wager_id) FILTER (WHERE id IS NULL) AS unheld,
    array_agg(DISTINCT wager_id) FILTER (WHERE n IS NULL) AS unsettled,
    CASE WHEN bool_or(-net > before + amount) THEN (  -- some hold lost in full: is its stake's loss past them all?
        SELECT array_agg(ARRAY[b.wager_id, b.loss::text, b.held::text]) FROM (
            SELECT min(wager_id) AS wager_id, -min(net) AS loss, sum(amount) AS held FROM m
            WHERE id IS NOT NULL AND n IS NOT NULL GROUP BY n HAVING -min(net) > sum(amount)
        ) AS b
    ) END AS beyond,
    (SELECT array_agg(per.player ORDER BY per.player) FROM per  -- winners who owe: normally none
     JOIN accounts d ON d.kind = 'receivable' AND d.owner = per.player AND d.currency = :currency AND d.balance < 0
     WHERE per.winner) AS debtors
FROM m
"""
)


def _settle_in_database(ledger: Ledger, round_id: str, results: list[StakeResult]) -> tuple[int, Excess, list[str]]:
    wagers = [result.wager_id for result in results]
    broken = [wager for wager in wagers if not wager or "\n" in wager]
    if broken:  # the statement takes the ids one per line (and one empty line would be no id at all)
        raise HoldStateError(f"round {round_id}: stake id {broken[0]!r} is empty or holds a line break")
    connection = ledger.session.connection()
    currency = ledger.currency
    connection.execute(PLANNER)
    connection.execute(LOCK, {"currency": currency, "round_id": round_id})
    try:
        row = connection.execute(SETTLE, _settle_parameters(ledger, round_id, wagers, results)).one()
    except IntegrityError as error:  # a hold resolved by a concurrent void between the read and the insert
        raise HoldStateError(f"round {round_id}: a hold was resolved while settling; settle again") from error
    if row.unheld:
        first = next(wager for wager in wagers if wager in set(row.unheld))  # as the results name them
        raise HoldStateError(f"round {round_id}: stake {first} has no pending hold to settle")
    if row.unsettled:
        raise HoldStateError(f"round {round_id}: no result for held stake(s) {', '.join(sorted(row.unsettled))}")
    if row.ownerless:
        raise HoldStateError(f"round {round_id}: a held stake's player has no wallet")
    excess = {wager: (int(loss), int(held)) for wager, loss, held in row.beyond or []}
    return int(row.resolved), excess, list(row.debtors or [])


def _settle_parameters(
    ledger: Ledger, round_id: str, wagers: list[str], results: list[StakeResult]
) -> dict[str, object]:
    return {
        "wagers": "\n".join(wagers),  # as text: a list of 100,000 strings costs more to adapt than to join
        "nets": ",".join([str(result.net) for result in results]),
        "fees": ",".join([str(result.commission) for result in results]),
        "round_id": round_id,
        "currency": ledger.currency,
        "house": ledger.account(AccountKind.HOUSE),
        "commission": ledger.account(AccountKind.COMMISSION),
        "request_key": ledger.request_key,
        "now": utcnow(),
    }
