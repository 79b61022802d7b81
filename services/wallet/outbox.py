"""Calls to an operator's wallet that survive failures: recorded before they are first sent, sent again with the same
ids until the operator gives a final answer, answered once.

``SeamlessWallet.submit`` writes the call (its exact signed body) to ``wallet_calls`` and commits, then sends it; a
final answer (``ok`` or ``refused``) is recorded and returned; after ``config.attempts`` failed attempts the call
stays ``pending`` and ``OutcomeUnknownError`` is raised — ``drain()`` (run by the studio in the background, and by
anyone after a restart) sends every pending call again. The same ``transaction_id`` submitted again returns the
recorded answer, or resends the recorded body: a movement is never sent under two ids. A rollback is sent only for a
debit the operator accepted (an unknown debit is first resolved by asking again; a refused one needs no rollback).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

import httpx
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from services.db.unit_of_work import run_transaction
from services.inline import inline
from services.ledger.models import utcnow
from services.observability import metrics
from services.wallet.credits import MAX_CREDITS, PATH, UNSUPPORTED, answers_from, batch_body
from services.wallet.errors import WalletError
from services.wallet.models import OK, PAYOUT, PENDING, REFUSED, ROLLBACK, STAKE, WalletCallRecord
from services.wallet.protocol import WalletAnswer, WalletCall, WalletConfig, answer_from, signature
from services.wallet.seamless import new_call, record_of, rollback_of
from services.wallet.wire import Answered, Wire, WireError

log = logging.getLogger("studio.wallet")
T = TypeVar("T")
CONNECTIONS = 128  # kept open to the operator's wallet from the event loop (a betting window's calls in flight)


class WalletRefusedError(WalletError):
    """The operator refused the movement (final): insufficient funds, a blocked player, …"""

    code = "wallet_refused"

    def __init__(self, answer: WalletAnswer) -> None:
        super().__init__(f"the operator's wallet refused it: {answer.code} {answer.message}".strip())
        self.answer = answer


class OutcomeUnknownError(WalletError):
    """No final answer yet: the call stays in the outbox and is sent again until the operator answers."""

    code = "wallet_unavailable"


class SeamlessWallet:
    def __init__(
        self,
        sessions: sessionmaker[Session],
        config: WalletConfig,
        http: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.sessions = sessions
        self.config = config
        self.http = http or httpx.Client(timeout=config.timeout_s)
        self.sleep = sleep
        self._loop_wire: tuple[asyncio.AbstractEventLoop, Wire] | None = None
        self._batches = config.batch_credits  # credits sent together (until the wallet says it takes no batch)

    # ---- the movements ------------------------------------------------------------------------

    def debit(
        self,
        player: str,
        amount: int,
        currency: str,
        round_id: str,
        transaction_id: str,
        reason: str = "",
        purpose: str = STAKE,
    ) -> WalletAnswer:
        return self.submit(new_call("debit", player, amount, currency, round_id, transaction_id, reason), purpose)

    def credit(
        self, player: str, amount: int, currency: str, round_id: str, transaction_id: str, reason: str = ""
    ) -> WalletAnswer:
        call = new_call("credit", player, amount, currency, round_id, transaction_id, reason)
        return self.submit(call, PAYOUT)

    def rollback(self, original_transaction_id: str, reason: str = "") -> WalletAnswer | None:
        """Undo a debit the studio never mirrored (a stake that was not placed): sent only if the operator accepted
        it (None: it never took effect, nothing to undo). Placed stakes are rolled back with their mirror
        (``seamless.roll_back_stakes``)."""
        with self.sessions() as session:
            original = session.scalar(
                select(WalletCallRecord).where(WalletCallRecord.transaction_id == original_transaction_id)
            )
        if original is None or original.kind != "debit":
            raise WalletError(f"no debit {original_transaction_id!r} was sent to the operator's wallet")
        if original.status == PENDING:  # unknown: ask again (same ids) until the operator says what happened
            try:
                self.submit(WalletCall.model_validate_json(original.body), original.purpose)
            except WalletRefusedError:
                return None
        elif original.status == REFUSED:
            return None
        call = new_call(
            "rollback", original.player, original.amount, original.currency, original.round_id,
            rollback_of(original_transaction_id), reason, original=original_transaction_id,
        )  # fmt: skip

        def unless_placed(session: Session) -> WalletCallRecord | None:
            """The rollback's row, recorded under the debit's lock only if no stake mirrored it meanwhile (another
            request with the same key may have placed it): a mirror and a rollback of one debit never both happen."""
            debit = session.scalar(
                select(WalletCallRecord)
                .where(WalletCallRecord.transaction_id == original_transaction_id)
                .with_for_update()
            )
            if debit is not None and debit.mirrored_at is not None:
                return None
            return self.recorded(session, call, ROLLBACK, mirrored=True)  # nothing mirrored: nothing to reverse

        record = self._recording(unless_placed)
        if record is None:
            log.info("no rollback of %s: a stake was placed with it", original_transaction_id)
            return None
        return self.final(record) if record.status != PENDING else self._send(record)

    # ---- the outbox ---------------------------------------------------------------------------

    def submit(self, call: WalletCall, purpose: str, mirrored: bool = False) -> WalletAnswer:
        """Record the call (or find it: the same transaction is never sent under new ids), then send it until the
        operator answers or the attempts run out."""
        record = self._record(call, purpose, mirrored)
        if record.status != PENDING:
            return self.final(record)
        return self._send(record)

    def drain(self) -> int:
        """Send every pending call again (oldest first); returns how many are still pending. A stake's debit is left
        to the request that recorded it until that request gave up (it counts its attempts then) or may no longer be
        sending it (``WalletConfig.in_flight_s``: its process died): sent twice at once, the operator would answer it
        twice for nothing."""
        sent_by_request = utcnow() - timedelta(seconds=self.config.in_flight_s)
        ours = or_(
            WalletCallRecord.purpose != STAKE,
            WalletCallRecord.attempts > 0,
            WalletCallRecord.created_at < sent_by_request,
        )
        with self.sessions() as session:
            pending = session.scalars(
                select(WalletCallRecord)
                .where(WalletCallRecord.status == PENDING)
                .where(ours)
                .order_by(WalletCallRecord.created_at)
            ).all()
        left, alone = 0, list(pending)
        if self._batches:  # each round's credits together (``services.wallet.credits``), while the wallet takes them
            credits: dict[str, list[WalletCallRecord]] = {}
            for record in pending:
                if record.kind == "credit":
                    credits.setdefault(record.round_id, []).append(record)
            settled: set[str] = set()
            for records in credits.values():
                for start in range(0, len(records), MAX_CREDITS):
                    if not self._batches:  # the wallet said it takes no batch: the rest one by one
                        break
                    chunk = records[start : start + MAX_CREDITS]
                    settled.update(self.send_credits(chunk))
            alone = [record for record in pending if record.request_id not in settled]
        for record in alone:
            try:
                self._send(record, attempts=1)
            except OutcomeUnknownError:
                left += 1
            except WalletRefusedError:
                pass
        metrics.WALLET_PENDING.set(left)
        return left

    def send_credits(self, records: list[WalletCallRecord]) -> set[str]:
        """Send pending credits as one request (one attempt; its timeout grows with its size) and record each final
        answer in one transaction: the request ids answered. The rest — left out of the answers, or all of them when
        no trusted answer came — the caller sends one by one; a wallet without the endpoint gets every credit one by
        one from then on."""
        body = batch_body(records)
        headers = self._signed(body, uuid.uuid4().hex)
        started, answers, error = time.perf_counter(), None, ""
        try:
            timeout = self.config.timeout_s * (1 + len(records) / 50)
            response = self.http.post(self.config.url(PATH), content=body, headers=headers, timeout=timeout)
        except httpx.HTTPError as failure:
            error = f"{type(failure).__name__}: {failure}"
        else:
            if response.status_code in UNSUPPORTED:
                log.info("the operator's wallet takes no batch of credits (HTTP %d): one by one", response.status_code)
                self._batches = False
                return set()
            answers = answers_from(response.content, response.headers, self.config)
            error = f"HTTP {response.status_code}: no signed final answers"
        metrics.WALLET_CALL_SECONDS.labels(PATH).observe(time.perf_counter() - started)
        answered = {record.request_id: answer for record in records
                    if (answer := (answers or {}).get(record.transaction_id)) is not None}  # fmt: skip
        if answered:

            def write(session: Session) -> None:
                for request_id, answer in answered.items():
                    self.answered(session, request_id, answer, 1)
                    metrics.WALLET_CALLS.labels("credit", "ok" if answer.status == "ok" else "refused").inc()

            run_transaction(self.sessions, write)
        if len(answered) < len(records):
            log.warning("a batch of %d credits: %d without a final answer (%s): sent one by one", len(records),
                        len(records) - len(answered), error if answers is None else "left out")  # fmt: skip
        return set(answered)

    def _record(self, call: WalletCall, purpose: str, mirrored: bool) -> WalletCallRecord:
        return self._recording(lambda session: self.recorded(session, call, purpose, mirrored))

    def _recording(self, write: Callable[[Session], T]) -> T:
        """``write`` (a call's row recorded) in a transaction; once more if another sender recorded it meanwhile."""
        try:
            return run_transaction(self.sessions, write)
        except IntegrityError:  # the row is found this time
            return run_transaction(self.sessions, write)

    @staticmethod
    def recorded(session: Session, call: WalletCall, purpose: str, mirrored: bool = False) -> WalletCallRecord:
        """The call's outbox row in the caller's transaction: written, or (the same transaction id) the one there."""
        found = session.scalar(select(WalletCallRecord).where(WalletCallRecord.transaction_id == call.transaction_id))
        if found is not None:
            return the_same(found, call)
        record = record_of(call, purpose, mirrored)
        session.add(record)
        session.flush()
        return record

    def _send(self, record: WalletCallRecord, attempts: int | None = None) -> WalletAnswer:
        answer, tries, error = self.call(record, attempts)
        if answer is None:
            self.attempted(record.request_id, tries, error)
            raise OutcomeUnknownError(
                f"the operator's wallet has not answered {record.kind} {record.transaction_id} ({error}); "
                "it is asked again until it does"
            )
        return self.final(run_transaction(self.sessions, lambda session: self.answered(session, record.request_id,
                                                                                         answer, tries)))  # fmt: skip

    def call(self, record: WalletCallRecord, attempts: int | None = None) -> tuple[WalletAnswer | None, int, str]:
        """Send the recorded call until the operator gives a final answer (nothing written): the answer (None: none
        came), the attempts it took, the last failure."""

        async def post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
            return self.http.post(url, content=body, headers=headers)

        async def sleep(seconds: float) -> None:
            self.sleep(seconds)

        return inline(self._calling(record, attempts, post, sleep))

    async def call_soon(
        self, record: WalletCallRecord, attempts: int | None = None
    ) -> tuple[WalletAnswer | None, int, str]:
        """``call`` on the running event loop: the calls of many requests in flight together, no thread each."""
        loop = asyncio.get_running_loop()
        if self._loop_wire is None or self._loop_wire[0] is not loop:  # one pool per loop (a test's own)
            self._loop_wire = (loop, Wire(self.config.base_url, self.config.timeout_s, CONNECTIONS))
        return await self._calling(record, attempts, self._loop_wire[1].post, asyncio.sleep)

    def close_soon(self) -> None:
        """Close the event loop's connections (the API's shutdown)."""
        if self._loop_wire is not None:
            self._loop_wire[1].close()
            self._loop_wire = None

    def _signed(self, body: bytes, request_id: str) -> dict[str, str]:
        """The headers of a request to the operator's wallet: the body's signature, the request's id."""
        return {
            "Content-Type": "application/json",
            self.config.signature_header: signature(body, self.config.secret),
            "X-Studio-Request-Id": request_id,
        }

    async def _calling(
        self,
        record: WalletCallRecord,
        attempts: int | None,
        post: Callable[[str, bytes, dict[str, str]], Awaitable[httpx.Response | Answered]],
        sleep: Callable[[float], Awaitable[None]],
    ) -> tuple[WalletAnswer | None, int, str]:
        body = record.body.encode()
        headers = self._signed(body, record.request_id)
        delay, error, tries = self.config.backoff_s, "", attempts or self.config.attempts
        for attempt in range(tries):
            if attempt:
                await sleep(delay)
                delay *= 2
            started, answer = time.perf_counter(), None
            try:
                response = await post(self.config.url(record.kind), body, headers)
            except (httpx.HTTPError, WireError) as failure:
                error = f"{type(failure).__name__}: {failure}"
            else:
                answer = answer_from(response.content, response.headers, self.config)
                error = f"HTTP {response.status_code}: no signed final answer"
            metrics.WALLET_CALL_SECONDS.labels(record.kind).observe(time.perf_counter() - started)  # timed out too
            if answer is not None and answer.transaction_id == record.transaction_id:
                metrics.WALLET_CALLS.labels(record.kind, "ok" if answer.status == "ok" else "refused").inc()
                return answer, attempt + 1, ""
            metrics.WALLET_CALLS.labels(record.kind, "no_answer").inc()
            log.warning("wallet call %s (%s %s): %s", record.request_id, record.kind, record.transaction_id, error)
        return None, tries, error

    @staticmethod
    def answered(session: Session, request_id: str, answer: WalletAnswer, attempts: int) -> WalletCallRecord:
        """The operator's final answer to the call, recorded in the caller's transaction (the first one counts)."""
        row = session.get(WalletCallRecord, request_id, with_for_update=True)
        assert row is not None
        first = first_answer(row.request_id, row.status, row.answer, answer)
        if first is not None:
            row.status, row.answer = first
            row.answered_at = utcnow()
        row.attempts += attempts
        session.flush()
        return row

    def attempted(self, request_id: str, attempts: int, error: str) -> None:
        """Attempts that got no final answer, counted (the call stays pending: the sender asks again)."""

        def write(session: Session) -> None:
            row = session.get(WalletCallRecord, request_id, with_for_update=True)
            if row is not None:
                row.attempts += attempts
                row.last_error = error[:500]

        run_transaction(self.sessions, write)

    @staticmethod
    def final(record: WalletCallRecord) -> WalletAnswer:
        assert record.answer is not None
        answer = WalletAnswer.model_validate_json(record.answer)
        if answer.status == "refused":
            raise WalletRefusedError(answer)
        return answer


def the_same(found: WalletCallRecord, call: WalletCall) -> WalletCallRecord:
    """The row recorded for the call's transaction, if it records the same movement (one id names one movement)."""
    sent = (found.kind, found.player, found.amount, found.currency, found.round_id, found.original_transaction_id)
    if sent != (call.kind, call.player, call.amount, call.currency, call.round_id, call.original_transaction_id):
        raise WalletError(
            f"transaction {call.transaction_id} was sent as a {found.kind} of {found.amount} {found.currency} for "
            f"{found.player}: one id names one movement"
        )
    return found


def first_answer(request_id: str, status: str, kept: str | None, answer: WalletAnswer) -> tuple[str, str] | None:
    """The status and answer to record for a call that had ``status`` and ``kept``: the answer if the call had none
    (the first final answer is the answer); else None — a second one changes nothing (logged if it differs)."""
    given = answer.model_dump_json()
    if status == PENDING:
        return (OK if answer.status == "ok" else REFUSED), given
    if kept != given:
        log.error("wallet call %s answered twice, differently: kept %s, got %s", request_id, kept, given)
    return None
