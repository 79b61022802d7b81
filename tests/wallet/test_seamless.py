"""The seamless-wallet outbox against a real operator's wallet server that times out, fails, loses its answers,
answers unsigned or twice: every movement reaches the operator once, each call is recorded before it is sent and
kept until it has a final answer, nothing is guessed, and a rollback undoes only a debit that happened."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import Engine, select, update

from services.db import session_factory
from services.ledger.models import utcnow
from services.wallet.errors import WalletError
from services.wallet.models import PAYOUT, STAKE, WalletCallRecord
from services.wallet.outbox import OutcomeUnknownError, SeamlessWallet, WalletRefusedError
from services.wallet.protocol import SIGNATURE_HEADER, WalletConfig, WalletSettingsError, config_from, signature
from services.wallet.reference import SECRET, OperatorWallet, serving
from services.wallet.seamless import new_call

pytestmark = pytest.mark.db


@pytest.fixture
def operator() -> Iterator[tuple[OperatorWallet, str]]:
    wallet = OperatorWallet(balances={"ana": 1_000, "binh": 50}, slow_s=2.0)
    with serving(wallet) as url:
        yield wallet, url


def studio_side(database: Engine, url: str, attempts: int = 5) -> SeamlessWallet:
    # 1 s an attempt: a loaded CI machine answers within it (the slow fault answers after 2 s)
    config = WalletConfig(url, SECRET, timeout_s=1.0, attempts=attempts, backoff_s=0.01)
    return SeamlessWallet(session_factory(database), config)


def records(database: Engine) -> dict[str, tuple[str, int]]:
    with session_factory(database)() as session:
        rows = session.scalars(select(WalletCallRecord))
        return {row.transaction_id: (row.status, row.attempts) for row in rows}


def test_a_debit_and_a_credit_move_the_players_money_at_the_operator_once(
    database: Engine, operator: tuple[OperatorWallet, str]
) -> None:
    wallet, url = operator
    studio = studio_side(database, url)
    answer = studio.debit("ana", 300, "THB", "T1-1", "bet:T1-1:k1", "bet")
    assert answer.status == "ok" and answer.balance == 700 and wallet.balances["ana"] == 700
    assert studio.debit("ana", 300, "THB", "T1-1", "bet:T1-1:k1", "bet") == answer  # the recorded answer again
    assert wallet.received["bet:T1-1:k1"] == 1, "a movement already answered is not sent again"
    studio.credit("ana", 550, "THB", "T1-1", "win:T1-1:w1", "settlement")
    assert wallet.balances["ana"] == 1_250
    assert records(database) == {"bet:T1-1:k1": ("ok", 1), "win:T1-1:w1": ("ok", 1)}
    with pytest.raises(WalletError, match="was sent as a debit of 300 THB for ana: one id names one movement"):
        studio.credit("ana", 300, "THB", "T1-1", "bet:T1-1:k1", "a different movement under a used id")
    assert wallet.balances["ana"] == 1_250


def test_a_refused_debit_is_final_and_says_why(database: Engine, operator: tuple[OperatorWallet, str]) -> None:
    wallet, url = operator
    studio = studio_side(database, url)
    with pytest.raises(WalletRefusedError, match="insufficient_funds binh has 50, 300 asked"):
        studio.debit("binh", 300, "THB", "T1-1", "bet:T1-1:k2", "bet")
    wallet.blocked.add("ana")
    with pytest.raises(WalletRefusedError, match="player_blocked"):
        studio.debit("ana", 10, "THB", "T1-1", "bet:T1-1:k3", "bet")
    assert wallet.balances == {"ana": 1_000, "binh": 50}
    assert records(database) == {"bet:T1-1:k2": ("refused", 1), "bet:T1-1:k3": ("refused", 1)}


@pytest.mark.parametrize("fault", ["slow", "error", "lose", "unsigned"])
def test_a_call_without_a_final_answer_is_asked_again_with_the_same_ids_and_applied_once(
    database: Engine, operator: tuple[OperatorWallet, str], fault: str
) -> None:
    wallet, url = operator
    wallet.faults[fault] = 2  # two attempts go wrong; the third gets the answer
    answer = studio_side(database, url).debit("ana", 300, "THB", "T1-1", "bet:T1-1:k4", "bet")
    assert answer.status == "ok" and wallet.balances["ana"] == 700
    assert wallet.applications["bet:T1-1:k4"] == 1, "applied once, however often it was asked"
    assert wallet.received["bet:T1-1:k4"] == 3  # the same transaction, asked three times
    assert records(database)["bet:T1-1:k4"] == ("ok", 3)


def test_an_operator_that_does_not_answer_leaves_the_call_pending_until_it_does(
    database: Engine, operator: tuple[OperatorWallet, str]
) -> None:
    wallet, url = operator
    wallet.faults["lose"] = 4  # applied at the first attempt, its answer lost four times
    studio = studio_side(database, url, attempts=2)
    with pytest.raises(OutcomeUnknownError, match="has not answered debit bet:T1-1:k5"):
        studio.debit("ana", 300, "THB", "T1-1", "bet:T1-1:k5", "bet")
    assert records(database)["bet:T1-1:k5"] == ("pending", 2)  # recorded, not guessed either way
    assert studio.drain() == 1  # still no answer (one attempt per pass): still pending
    restarted = studio_side(database, url)  # a restart: the outbox is in the database
    assert restarted.drain() == 1  # the fourth answer lost
    assert restarted.drain() == 0
    assert records(database)["bet:T1-1:k5"][0] == "ok"
    assert wallet.applications["bet:T1-1:k5"] == 1 and wallet.balances["ana"] == 700


def test_a_second_different_answer_does_not_change_the_first(
    database: Engine, operator: tuple[OperatorWallet, str]
) -> None:
    wallet, url = operator
    wallet.faults["lose"] = 1
    wallet.faults["twice"] = 1  # the repeat after the lost answer is answered "refused": the first answer stands
    studio = studio_side(database, url)
    with pytest.raises(WalletRefusedError, match="duplicate"):
        studio.debit("ana", 300, "THB", "T1-1", "bet:T1-1:k6", "bet")  # the only answer the studio ever got
    assert wallet.balances["ana"] == 700 and records(database)["bet:T1-1:k6"][0] == "refused"
    with pytest.raises(WalletRefusedError):
        studio.debit("ana", 300, "THB", "T1-1", "bet:T1-1:k6", "bet")  # recorded: not sent a third time
    assert wallet.received["bet:T1-1:k6"] == 2


def test_a_rollback_undoes_only_a_debit_that_happened(database: Engine, operator: tuple[OperatorWallet, str]) -> None:
    wallet, url = operator
    studio = studio_side(database, url, attempts=1)
    studio.debit("ana", 300, "THB", "T1-2", "bet:T1-2:a", "bet")
    assert studio.rollback("bet:T1-2:a", "void") is not None and wallet.balances["ana"] == 1_000
    assert studio.rollback("bet:T1-2:a", "void") is not None and wallet.balances["ana"] == 1_000  # once
    with pytest.raises(WalletRefusedError):
        studio.debit("binh", 500, "THB", "T1-2", "bet:T1-2:b", "bet")
    assert studio.rollback("bet:T1-2:b", "void") is None  # refused: nothing happened, nothing to undo
    wallet.faults["lose"] = 1  # the debit happened but its answer was lost: the rollback first asks again
    with pytest.raises(OutcomeUnknownError):
        studio.debit("ana", 200, "THB", "T1-2", "bet:T1-2:c", "bet")
    assert wallet.balances["ana"] == 800
    assert studio.rollback("bet:T1-2:c", "void") is not None and wallet.balances["ana"] == 1_000
    with pytest.raises(WalletError, match="no debit 'bet:T1-2:never'"):
        studio.rollback("bet:T1-2:never", "void")
    assert sum(wallet.applications.values()) == 4  # two debits, two rollbacks; nothing twice


def test_the_operator_refuses_an_unsigned_or_forged_call(operator: tuple[OperatorWallet, str]) -> None:
    wallet, url = operator
    body = b'{"kind":"credit"}'
    assert httpx.post(f"{url}/credit", content=body).status_code == 401
    forged = {SIGNATURE_HEADER: signature(body, b"not the secret")}
    assert httpx.post(f"{url}/credit", content=body, headers=forged).status_code == 401
    assert wallet.balances == {"ana": 1_000, "binh": 50}


def test_the_sender_leaves_a_fresh_stake_debit_to_the_request_sending_it(
    database: Engine, operator: tuple[OperatorWallet, str]
) -> None:
    """A stake's debit just recorded is being sent by its request: the sender does not send it too — until the
    request gave up (its attempts counted) or could no longer be sending it (``in_flight_s``: its process died)."""
    wallet, url = operator
    studio = studio_side(database, url)
    fresh = [studio._record(new_call("debit", "ana", 10, "THB", "T1-1", f"s{n}", "bet"), STAKE, False)
             for n in range(3)]  # fmt: skip
    payout = studio._record(new_call("credit", "ana", 5, "THB", "T1-1", "p1", "settlement"), PAYOUT, True)
    assert studio.drain() == 0 and set(wallet.received) == {payout.transaction_id}, "only the payout, at once"
    studio.attempted(fresh[1].request_id, 2, "timed out")  # that request gave up
    with session_factory(database).begin() as session:  # that one's process died long ago
        session.execute(update(WalletCallRecord).where(WalletCallRecord.request_id == fresh[2].request_id)
                        .values(created_at=utcnow() - timedelta(seconds=studio.config.in_flight_s + 1)))  # fmt: skip
    assert studio.drain() == 0
    assert set(wallet.received) == {"p1", "s1", "s2"} and records(database)["s0"] == ("pending", 0)


def test_the_wallet_settings_are_read_from_the_environment_or_refused_saying_which() -> None:
    good = {"STUDIO_WALLET_URL": "https://wallet.example/studio", "STUDIO_WALLET_SECRET": "s" * 16}
    assert config_from({}) is None, "no URL: every table keeps its money in the studio's ledger"
    config = config_from(good)
    assert config is not None and config.batch_credits and config.url("debit") == "https://wallet.example/studio/debit"
    off = config_from(good | {"STUDIO_WALLET_BATCH_CREDITS": "0"})
    assert off is not None and not off.batch_credits
    for change, words in (
        ({"STUDIO_WALLET_URL": "wallet.example"}, "STUDIO_WALLET_URL must be an http:// or https:// address"),
        ({"STUDIO_WALLET_SECRET": "short"}, "STUDIO_WALLET_SECRET must be set, at least 16 characters"),
        ({"STUDIO_WALLET_SIGNATURE_HEADER": "X Sig"}, "STUDIO_WALLET_SIGNATURE_HEADER must be a header name"),
        ({"STUDIO_WALLET_BATCH_CREDITS": "yes"}, "STUDIO_WALLET_BATCH_CREDITS must be 1 \\(the default\\) or 0"),
    ):
        with pytest.raises(WalletSettingsError, match=words):
            config_from(good | change)
