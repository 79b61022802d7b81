"""Taking a stake (a bet slip, insurance) on a table of either wallet.

On an ``internal`` table the stake is one transaction: claim the idempotency key, hold the money, write the wager.
On an ``operator`` table (``services.wallet.seamless``) the operator's wallet is asked to debit it first and the
stake is placed only once it has accepted, with the debit's mirror in the placing transaction; a stake refused after
its debit is rolled back at once, and one that may have failed for another reason (the database) is rolled back by
the wallet sender when its round ends, if it was never placed.

That flow is written once (``stake``, over ``Steps``): priced with its debit recorded (one transaction), sent, placed
with the answer recorded (a second). A worker thread runs it inline, each step a plain call; the API's lane awaits it
on the event loop, priced and placed in the slip writer's batches with the call in flight beside the others'.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from services.db.unit_of_work import run_transaction
from services.games.base import GameError
from services.inline import inline
from services.ledger import idempotency
from services.ledger.errors import LedgerError
from services.ledger.ledger import Ledger, Locked
from services.rounds.core import RoundCore
from services.rounds.errors import RoundError
from services.rounds.records import table_of_round
from services.wallet.errors import WalletError
from services.wallet.models import PENDING, STAKE, WalletCallRecord
from services.wallet.outbox import OutcomeUnknownError, SeamlessWallet
from services.wallet.protocol import WalletAnswer
from services.wallet.seamless import (
    OPERATOR,
    is_rolled_back,
    mirror_stake,
    new_call,
    rolled_back_words,
    stake_transaction,
)

log = logging.getLogger("studio.wallet")
REFUSALS = (RoundError, GameError, LedgerError, WalletError)  # raised before the commit: nothing was placed
T = TypeVar("T")


class WalletNotConfiguredError(RoundError):
    """A round stakes through the operator's wallet and this process has none configured."""

    code = "wallet_unavailable"


class StakeChangedError(RoundError):
    """The stake changed, or its debit was rolled back, while the operator's wallet answered."""

    code = "stake_changed"


@dataclass(frozen=True)
class Debit:
    """The operator's accepted debit of a stake, to be mirrored where the stake is placed."""

    transaction: str
    amount: int
    balance: int | None  # the player's balance at the operator after it

    def check(self, holding: int) -> None:
        """Refused if the stake now holds other than what was debited (it changed while the operator answered)."""
        if holding != self.amount:
            raise StakeChangedError(
                f"the stake changed while the operator's wallet answered: {self.amount} was debited, it now holds "
                f"{holding}; the debit is rolled back, send the request again with a new idempotency key"
            )

    def mirror(
        self, session: Session, ledger: Ledger, player: str, round_id: str, wallet: int, locked: dict[int, Locked],
        holding: int,
    ) -> dict[int, Locked]:  # fmt: skip
        self.check(holding)
        return mirror_stake(session, ledger, player, round_id, self.transaction, self.amount, wallet, locked)


Place = Callable[[Session, "Debit | None"], dict[str, Any]]


@dataclass(frozen=True)
class Debited:
    """The operator's accepted debit of a stake, with what its outbox row still needs: the answer (and the attempts
    it took: 0 when recorded before), then the mirror, in the transaction that places the stake."""

    debit: Debit
    request_id: str
    answer: WalletAnswer
    tries: int


class Steps:
    """How a stake's flow (``stake``) runs: here, each step a plain call in the caller's thread (a worker thread's
    request; ``inline``) — or, given the slip writer's steps (``services.rounds.slips``), awaited on the event loop."""

    async def price(self) -> dict[str, Any] | WalletCallRecord:
        """The first step: a finished request's answer, or the slip priced and its debit recorded."""
        raise NotImplementedError

    async def call(self, record: WalletCallRecord) -> tuple[WalletAnswer | None, int, str]:
        """The recorded debit sent to the operator (``SeamlessWallet.call``)."""
        raise NotImplementedError

    async def blocking(self, work: Callable[[], T]) -> T:
        """Work that waits for the database (a refusal's paperwork): where it may block."""
        return work()

    async def place(self, debited: Debited, alone: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The second step: the stake placed with its debit's mirror (``alone``: in a transaction of its own)."""
        return alone()


# Where a debited stake is placed instead of a transaction of its own: the API's slip writer, with the stake's own
# transaction to fall back on (``alone``). Either way: the stake's answer, or the refusal raised.
Together = Callable[[Debited, Callable[[], dict[str, Any]]], dict[str, Any]]
Price = Callable[[Session], "dict[str, Any] | WalletCallRecord"]


class _Here(Steps):
    def __init__(self, service: RoundCore, wallet: SeamlessWallet, price: Price, together: Together | None) -> None:
        self.service, self.wallet, self._price, self.together = service, wallet, price, together

    async def price(self) -> dict[str, Any] | WalletCallRecord:
        return priced_alone(self.service, self._price)

    async def call(self, record: WalletCallRecord) -> tuple[WalletAnswer | None, int, str]:
        return self.wallet.call(record)

    async def place(self, debited: Debited, alone: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return alone() if self.together is None else self.together(debited, alone)


def staked(
    service: RoundCore,
    player: str,
    round_id: str,
    key: str,
    request: dict[str, Any],
    amount: Callable[[Session], int],
    place: Place,
    reason: str,
    together: Together | None = None,
) -> dict[str, Any]:
    """``place(session, None)`` in one transaction on an internal table; on an operator's-wallet table, ``amount``
    priced and its debit recorded, sent to the operator, then ``place(session, debit)`` with the answer recorded —
    in a transaction of its own, or handed to ``together`` (placed with other slips)."""
    table = service.table_info(table_of_round(round_id))
    if table.wallet != OPERATOR:
        return service.run(lambda session: place(session, None))
    wallet = wallet_of(service, round_id)
    steps = _Here(service, wallet, one_price(wallet, table.currency, player, round_id, key, request, amount, reason),
                  together)  # fmt: skip
    return inline(stake(service, wallet, stake_transaction(round_id, player, key), place, steps))


def wallet_of(service: RoundCore, round_id: str) -> SeamlessWallet:
    """The process's operator's wallet, for a stake of ``round_id`` (refused if it has none)."""
    if service.wallet is None:
        raise WalletNotConfiguredError(
            f"round {round_id} stakes through the operator's wallet, and this process has none configured "
            "(STUDIO_WALLET_URL, STUDIO_WALLET_SECRET)"
        )
    return service.wallet


def one_price(
    wallet: SeamlessWallet, currency: str, player: str, round_id: str, key: str, request: dict[str, Any],
    amount: Callable[[Session], int], reason: str,
) -> Price:  # fmt: skip
    """The first step of one stake, in its own transaction: a finished request's answer; or the stake priced and its
    debit recorded, to be sent (the slip writer prices many at once: ``services.rounds.slip_prices``)."""
    transaction = stake_transaction(round_id, player, key)

    def price(session: Session) -> dict[str, Any] | WalletCallRecord:
        stored = idempotency.stored(session, key, player, request)
        if stored is not None:
            return stored
        if is_rolled_back(session, transaction):
            raise StakeChangedError(rolled_back_words(transaction))
        call = new_call("debit", player, amount(session), currency, round_id, transaction, reason)
        return wallet.recorded(session, call, STAKE)

    return price


def priced_alone(service: RoundCore, price: Price) -> dict[str, Any] | WalletCallRecord:
    try:
        return service.run(price)
    except IntegrityError:  # the same request recorded meanwhile (a retry racing itself): its row is found now
        return service.run(price)


async def stake(
    service: RoundCore, wallet: SeamlessWallet, transaction: str, place: Place, steps: Steps
) -> dict[str, Any]:
    """An operator's-wallet stake: priced, sent, placed — each step as ``steps`` takes it."""
    priced = await steps.price()
    if isinstance(priced, dict):
        return priced
    record = priced
    tries = 0
    answer: WalletAnswer

    def kept() -> WalletCallRecord:
        """The operator's answer recorded in a transaction of its own (when it is not kept with the placing)."""
        return run_transaction(service.sessions, lambda s: wallet.answered(s, record.request_id, answer, tries))

    if record.status == PENDING:
        sent, tries, error = await steps.call(record)
        if sent is None:
            await steps.blocking(lambda: wallet.attempted(record.request_id, tries, error))
            raise OutcomeUnknownError(
                f"the operator's wallet has not answered the debit {transaction} ({error}); it is asked again "
                "until it does"
            )
        answer = sent
        if answer.status != "ok":  # refused: recorded, and said
            wallet.final(await steps.blocking(kept))
    else:
        answer = wallet.final(record)  # a debit answered before (a retry): its answer, or its refusal
    debit = Debit(transaction, record.amount, answer.balance)

    def placed(session: Session) -> dict[str, Any]:
        """The second step: the operator's answer recorded and the stake placed with its mirror, together."""
        if tries:
            wallet.answered(session, record.request_id, answer, tries)
        return place(session, debit)

    def unplaced(refusal: Exception) -> None:
        """Refused inside the placing: nothing was placed, the debit goes back (unless another request with the same
        key placed the stake with it meanwhile)."""
        if tries:  # the answer was not kept (only a placed stake's is): kept now, so the rollback needs not ask again
            kept()
        try:
            wallet.rollback(transaction, f"the stake was not placed: {refusal}")
        except WalletError as error:
            log.warning("rollback of %s: %s (the sender sends it again)", transaction, error)

    def left() -> None:
        """Not placed for another reason (the database): the answer kept if it can be, the debit left to the sender,
        which rolls it back when the round ends if it was never placed."""
        if tries:
            try:
                kept()
            except Exception as error:  # the database still away: the sender asks the operator again
                log.warning("the answer to %s not kept: %s", transaction, " ".join(str(error).split())[:200])

    try:
        return await steps.place(Debited(debit, record.request_id, answer, tries), lambda: service.run(placed))
    except REFUSALS as refusal:
        await steps.blocking(functools.partial(unplaced, refusal))
        raise
    except Exception:
        await steps.blocking(left)
        raise


_RUNNING: set[asyncio.Task[Any]] = set()  # flows whose requests stopped waiting, kept until they end


async def to_the_end(flow: Coroutine[Any, Any, T]) -> T:
    """``flow``'s value, the flow run to its end even if the request awaiting it is cancelled (a client gone, the
    server stopping): a stake's flow, once priced, must see its debit placed or rolled back — as a worker thread's
    does, which no one cancels."""
    task = asyncio.ensure_future(flow)
    _RUNNING.add(task)
    task.add_done_callback(_ended)
    return await asyncio.shield(task)


async def flows_ended(timeout_s: float) -> int:
    """Wait, at most ``timeout_s``, for the stake flows still running on this loop (the API stopping: before its
    writer stops); how many had not ended."""
    running = {task for task in _RUNNING if task.get_loop() is asyncio.get_running_loop()}
    if not running:
        return 0
    _, pending = await asyncio.wait(running, timeout=timeout_s)
    return len(pending)


def _ended(task: asyncio.Task[Any]) -> None:
    _RUNNING.discard(task)
    if not task.cancelled() and task.exception() is not None:  # (retrieved: also said to the request, if it waits)
        log.debug("a stake's flow ended with %r", task.exception())
