"""The ledger against a real database: double entry, never-negative wallets, holds, debts."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from services.db.unit_of_work import run_transaction
from services.ledger import (
    AccountKind,
    HoldStateError,
    HoldStatus,
    InsufficientFundsError,
    InvalidAmountError,
    Ledger,
    Movement,
    StakeResult,
    settle_round,
    void_holds,
)
from services.ledger.holds import RESOLVED, Resolution, pending_holds, resolve
from services.ledger.models import Account, Hold, HoldResolution, Transfer

THB = "THB"


def transfer_count(session: Session) -> int:
    return int(session.scalar(select(func.count()).select_from(Transfer)) or 0)


def balances_from_transfers(session: Session) -> dict[int, int]:
    """Every account's balance recomputed from the transfers alone (not by the code under test)."""
    balances: dict[int, int] = {}
    for debit, credit, amount in session.execute(
        select(Transfer.debit_account_id, Transfer.credit_account_id, Transfer.amount)
    ):
        balances[debit] = balances.get(debit, 0) - amount
        balances[credit] = balances.get(credit, 0) + amount
    return balances


def assert_books_balance(session: Session) -> None:
    stored = {row[0]: row[1] for row in session.execute(select(Account.id, Account.balance))}
    recomputed = balances_from_transfers(session)
    assert {k: v for k, v in stored.items() if v} == {k: v for k, v in recomputed.items() if v}
    assert sum(stored.values()) == 0


def test_deposit_and_withdraw_move_money_between_cash_and_wallet(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 1_000)
        ledger.withdraw("ana", 300)
        assert ledger.wallet("ana") == 700
        assert ledger.balance(AccountKind.CASH) == -700
        assert_books_balance(session)


def test_a_withdrawal_beyond_the_wallet_is_refused_and_writes_nothing(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        Ledger(session, THB).deposit("ana", 100)
    with pytest.raises(InsufficientFundsError, match=r"ana wallet holds 100 THB, 101 needed"), sessions.begin() as s:
        Ledger(s, THB).withdraw("ana", 101)
    with sessions() as session:
        assert Ledger(session, THB).wallet("ana") == 100
        assert transfer_count(session) == 1


def test_a_transfer_naming_an_account_that_does_not_exist_is_refused_and_writes_nothing(
    sessions: sessionmaker[Session],
) -> None:
    """Transfers carry no foreign keys (migration 0013): the ledger itself refuses an id it did not lock and read."""
    with sessions.begin() as session:
        Ledger(session, THB).deposit("ana", 100)
    with pytest.raises(InvalidAmountError, match="no account with id 999999"), sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.post(Movement(ledger.account(AccountKind.WALLET, "ana"), 999_999, 10, "stray"))
    with sessions() as session:
        assert Ledger(session, THB).wallet("ana") == 100 and transfer_count(session) == 1


@pytest.mark.parametrize("amount", [0, -5, 1.5, "10"])
def test_amounts_must_be_positive_whole_numbers(sessions: sessionmaker[Session], amount: object) -> None:
    with pytest.raises(InvalidAmountError, match="positive whole number"), sessions.begin() as session:
        Ledger(session, THB).deposit("ana", amount)  # type: ignore[arg-type]


def test_currency_is_validated() -> None:
    with pytest.raises(InvalidAmountError, match="invalid currency: 'baht'"):
        Ledger(None, "baht")  # type: ignore[arg-type]


def test_the_database_refuses_a_negative_wallet_even_without_the_code(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        Ledger(session, THB).deposit("ana", 10)
    with pytest.raises(DBAPIError), sessions.begin() as session:
        session.execute(text("UPDATE accounts SET balance = -1 WHERE kind = 'wallet'"))


def test_transfers_are_append_only_in_the_database(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        Ledger(session, THB).deposit("ana", 10)
    for statement in ("UPDATE transfers SET amount = 5", "DELETE FROM transfers"):
        with pytest.raises(DBAPIError, match="append-only"), sessions.begin() as session:
            session.execute(text(statement))


def test_holds_settle_wins_losses_ties_and_commission(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        for player in ("ana", "binh", "chai"):
            ledger.deposit(player, 1_000)
        ledger.hold("ana", 300, "r1", "w1")  # stake 100, 3× hold
        ledger.hold("binh", 150, "r1", "w2")
        ledger.hold("chai", 60, "r1", "w3")
        ledger.hold("ana", 100, "r1", "insurance:ana")
        assert ledger.wallet("ana") == 600 and ledger.balance(AccountKind.HOLD, "ana") == 400
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        results = [
            StakeResult("ana", "w1", 285, commission=15),  # won 300, 5% commission
            StakeResult("binh", "w2", -150),  # lost 3×: the whole hold
            StakeResult("chai", "w3", 0),  # tie
            StakeResult("ana", "insurance:ana", -100),
        ]
        assert settle_round(ledger, "r1", results) == 4
        assert ledger.wallet("ana") == 1_000 + 285 - 100
        assert ledger.wallet("binh") == 850
        assert ledger.wallet("chai") == 1_000
        assert ledger.balance(AccountKind.COMMISSION) == 15
        assert ledger.balance(AccountKind.HOUSE) == -300 + 150 + 100
        assert all(ledger.balance(AccountKind.HOLD, p) == 0 for p in ("ana", "binh", "chai"))
        assert_books_balance(session)
    with pytest.raises(HoldStateError, match="w1 has no pending hold"), sessions.begin() as session:
        settle_round(Ledger(session, THB), "r1", results)  # settling twice is refused


def test_settlement_refuses_partial_results_and_writes_nothing(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 1_000)
        ledger.hold("ana", 300, "r1", "w1")
        ledger.hold("ana", 300, "r1", "w2")
    with pytest.raises(HoldStateError, match=r"no result for held stake\(s\) w2"), sessions.begin() as session:
        settle_round(Ledger(session, THB), "r1", [StakeResult("ana", "w1", 100)])
    with pytest.raises(HoldStateError, match="loses 400, more than its hold 300"), sessions.begin() as session:
        settle_round(Ledger(session, THB), "r1", [StakeResult("ana", "w1", -400), StakeResult("ana", "w2", 0)])
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(HoldResolution)) == 0  # both holds still pending
        assert [hold.wager_id for hold in pending_holds(Ledger(session, THB), "r1")] == ["w1", "w2"]
        assert Ledger(session, THB).wallet("ana") == 400


@pytest.mark.parametrize(
    ("results", "refusal"),
    [
        ([("w1", -500), ("w2", 0)], "w1 loses 500, more than its hold 400"),  # past both holds of a raised stake
        ([("w1", 0), ("w2", 0), ("w1", 0)], r"stake\(s\) w1 settled twice in one batch"),
        ([("w1", 0), ("w2", 0), ("w3", 0)], "w3 has no pending hold"),
        ([("w1", 0), ("w2\nw3", 0)], "line break|w2\nw3 has no pending hold"),
        ([("w1", 0), ("w2", 0), ("", 0)], "empty or holds a line break|stake  has no pending hold"),
    ],
)
def test_settlement_refuses_a_batch_it_cannot_match_and_writes_nothing(
    sessions: sessionmaker[Session], results: list[tuple[str, int]], refusal: str
) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 1_000)
        ledger.hold("ana", 300, "r1", "w1")
        ledger.hold("ana", 100, "r1", "w1")  # raised
        ledger.hold("ana", 200, "r1", "w2")
    with pytest.raises(HoldStateError, match=refusal), sessions.begin() as session:
        settle_round(Ledger(session, THB), "r1", [StakeResult("ana", wager, net) for wager, net in results])
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(HoldResolution)) == 0
        assert (
            Ledger(session, THB).wallet("ana") == 400 and Ledger(session, THB).balance(AccountKind.HOLD, "ana") == 600
        )


def test_a_resolution_cannot_take_more_than_its_hold(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 500)
        ledger.hold("ana", 300, "r1", "w1")
        (pending,) = pending_holds(ledger, "r1")
    with (
        pytest.raises(HoldStateError, match=f"hold\\(s\\) {pending.id} lose more than they hold"),
        sessions.begin() as s,
    ):
        resolve(Ledger(s, THB), "r1", [Resolution(pending, loss=301)])


def test_a_loss_allowed_past_its_hold_takes_the_wallet_then_records_a_debt(sessions: sessionmaker[Session]) -> None:
    """Tiến Lên rooms hold a fixed number of units; a rare larger loss is paid from the wallet, never dropped."""
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        for player in ("ana", "binh", "chai"):
            ledger.deposit(player, 200)
            ledger.hold(player, 80, "r1", f"seat:{player}")
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        results = [
            StakeResult("ana", "seat:ana", 300),  # the winner: paid by the house, as every stake is
            StakeResult("binh", "seat:binh", -100, beyond_hold=True),  # 80 held + 20 from the wallet (120 left)
            StakeResult("chai", "seat:chai", -200, beyond_hold=True),  # 80 held + the whole wallet (120)
        ]
        settle_round(ledger, "r1", results)
        assert (ledger.wallet("binh"), ledger.debt("binh")) == (100, 0)
        assert (ledger.wallet("chai"), ledger.debt("chai")) == (0, 0)
        assert ledger.wallet("ana") == 500 and ledger.balance(AccountKind.HOUSE) == -300 + 100 + 200
        assert_books_balance(session)
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.hold("binh", 80, "r2", "seat:binh")
        settle_round(ledger, "r2", [StakeResult("binh", "seat:binh", -150, beyond_hold=True)])
        assert (ledger.wallet("binh"), ledger.debt("binh")) == (0, 50)  # 80 held + 20 left in the wallet; 50 owed
        kinds = session.scalars(select(Transfer.kind).where(Transfer.round_id == "r2").order_by(Transfer.id)).all()
        assert kinds == ["hold", "loss", "loss", "debt"]
        assert_books_balance(session)


def test_a_raise_adds_a_second_hold_to_the_same_wager(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 1_000)
        ledger.hold("ana", 300, "r1", "w1")
        ledger.hold("ana", 150, "r1", "w1")
        settle_round(ledger, "r1", [StakeResult("ana", "w1", -450)])
        assert ledger.wallet("ana") == 550
        assert_books_balance(session)


@pytest.mark.parametrize(
    ("net", "wallet", "lines"),
    [
        (-350, 650, [(300, 0, 0), (50, 0, 0)]),  # the loss taken from the holds in the order they were placed
        (200, 1_200, [(0, 210, 10), (0, 0, 0)]),  # the win (gross, its commission beside it) under the first
        (0, 1_000, [(0, 0, 0), (0, 0, 0)]),
    ],
)
def test_each_hold_of_a_raised_wager_is_resolved_by_its_own_row(
    sessions: sessionmaker[Session], net: int, wallet: int, lines: list[tuple[int, int, int]]
) -> None:
    """One resolution row per hold (loss, win, commission); the transfers move their sums, per player and kind."""
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 1_000)
        first = ledger.hold("ana", 300, "r1", "w1")
        second = ledger.hold("ana", 150, "r1", "w1")
        settle_round(ledger, "r1", [StakeResult("ana", "w1", net, commission=10 if net > 0 else 0)])
        assert ledger.wallet("ana") == wallet
        rows = session.execute(
            select(HoldResolution.hold_id, HoldResolution.loss, HoldResolution.win, HoldResolution.commission)
            .join(Hold, Hold.id == HoldResolution.hold_id)
            .where(Hold.round_id == "r1")
            .order_by(HoldResolution.hold_id)
        ).all()
        assert [tuple(row) for row in rows] == [(first, *lines[0]), (second, *lines[1])]
        moved = dict(
            session.execute(
                select(Transfer.kind, func.sum(Transfer.amount))
                .where(Transfer.round_id == "r1", Transfer.kind != "hold")
                .group_by(Transfer.kind)
            ).all()
        )
        loss = sum(line[0] for line in lines)
        expected = {"release": 450 - loss, "loss": loss, "win": lines[0][1], "commission": lines[0][2]}
        assert moved == {kind: amount for kind, amount in expected.items() if amount}
        assert_books_balance(session)


def test_a_round_settles_to_the_same_rows_on_either_database(sessions: sessionmaker[Session]) -> None:
    """The rule settlement follows, pinned row by row: PostgreSQL runs it as one statement, SQLite here in Python
    (CI runs this test on both)."""
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        for player in ("ana", "binh", "chai"):
            ledger.deposit(player, 1_000)
        ana = [
            ledger.hold("ana", 100, "r1", "a1"),
            ledger.hold("ana", 50, "r1", "a1"),
            ledger.hold("ana", 40, "r1", "a2"),
        ]
        binh = [ledger.hold("binh", 300, "r1", "b1"), ledger.hold("binh", 60, "r1", "insurance:binh")]
        chai = [ledger.hold("chai", 80, "r1", "c1")]
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        resolved = settle_round(
            ledger,
            "r1",
            [
                StakeResult("ana", "a1", -120),  # 100 of the first hold, 20 of the raise
                StakeResult("ana", "a2", 76, commission=4),
                StakeResult("binh", "b1", -300),
                StakeResult("binh", "insurance:binh", 120),
                StakeResult("chai", "c1", -130, beyond_hold=True),  # 80 held, 50 from the wallet
            ],
        )
        assert resolved == 6
        rows = [
            (r.hold_id, r.wager_id, r.player, r.amount, r.status, r.loss, r.win, r.commission)
            for r in session.execute(RESOLVED.order_by(Hold.id))
        ]
        assert rows == [
            (ana[0], "a1", "ana", 100, "posted", 100, 0, 0),
            (ana[1], "a1", "ana", 50, "posted", 20, 0, 0),
            (ana[2], "a2", "ana", 40, "posted", 0, 80, 4),
            (binh[0], "b1", "binh", 300, "posted", 300, 0, 0),
            (binh[1], "insurance:binh", "binh", 60, "posted", 0, 120, 0),
            (chai[0], "c1", "chai", 80, "posted", 80, 0, 0),
        ]
        moved = session.execute(
            select(Account.owner, Transfer.kind, Transfer.amount, Transfer.wager_id)
            .join(Account, Account.id == Transfer.credit_account_id)
            .where(Transfer.round_id == "r1", Transfer.kind != "hold")
            .order_by(Transfer.id)
        ).all()
        assert sorted(tuple(row) for row in moved) == sorted([
            ("ana", "release", 70, None), ("", "loss", 120, None), ("ana", "win", 80, None),
            ("", "commission", 4, None),
            ("binh", "release", 60, None), ("", "loss", 300, None), ("binh", "win", 120, None),
            ("", "loss", 80, None), ("", "loss", 50, "c1"),  # chai's hold, then the loss past it from the wallet
        ])  # fmt: skip
        assert [ledger.wallet(p) for p in ("ana", "binh", "chai")] == [
            1_000 - 190 + 70 + 80 - 4,
            1_000 - 360 + 180,
            870,
        ]
        assert_books_balance(session)


def test_a_hold_is_resolved_once_and_holds_are_never_changed(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 500)
        ledger.hold("ana", 300, "r1", "w1")
        pending = pending_holds(ledger, "r1")
    with sessions.begin() as session:
        resolve(Ledger(session, THB), "r1", [Resolution(pending[0], HoldStatus.VOIDED)])
    with pytest.raises(HoldStateError, match=f"hold\\(s\\) {pending[0].id} already resolved"), sessions.begin() as s:
        resolve(Ledger(s, THB), "r1", [Resolution(pending[0], loss=300)])  # a second resolver finds it resolved
    for statement in ("UPDATE holds SET amount = 1", "DELETE FROM holds", "UPDATE hold_resolutions SET loss = 0"):
        with pytest.raises(DBAPIError, match="append-only"), sessions.begin() as session:
            session.execute(text(statement))
    with sessions() as session:
        assert Ledger(session, THB).wallet("ana") == 500


def test_void_returns_every_pending_hold_once(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 500)
        ledger.hold("ana", 300, "r1", "w1")
        ledger.hold("ana", 100, "r1", "insurance:ana")
        assert void_holds(ledger, "r1") == 2
        assert void_holds(ledger, "r1") == 0
        assert ledger.wallet("ana") == 500
        statuses = session.scalars(select(HoldResolution.status)).all()
        assert statuses == [HoldStatus.VOIDED, HoldStatus.VOIDED]
        assert_books_balance(session)


def test_a_correction_beyond_the_wallet_becomes_a_debt_recovered_from_later_credits(
    sessions: sessionmaker[Session],
) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 100)
        assert ledger.adjust("ana", -250, "r1", "recalculated from video") == 150
        assert ledger.wallet("ana") == 0 and ledger.debt("ana") == 150
        ledger.deposit("ana", 100)
        assert ledger.wallet("ana") == 0 and ledger.debt("ana") == 50
        ledger.adjust("ana", 80, "r2", "recalculated in the player's favour")
        assert ledger.wallet("ana") == 30 and ledger.debt("ana") == 0
        kinds = session.scalars(select(Transfer.kind).order_by(Transfer.id)).all()
        assert kinds == ["deposit", "adjustment", "debt", "deposit", "debt_recovery", "adjustment", "debt_recovery"]
        assert_books_balance(session)


def test_a_winner_who_owes_pays_the_debt_from_the_win_and_no_one_else_is_asked(
    sessions: sessionmaker[Session],
) -> None:
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        for player in ("ana", "binh", "chai"):
            ledger.deposit(player, 100)
            ledger.hold(player, 100, "r1", f"w:{player}")  # the whole wallet on the table
            ledger.adjust(player, -40, "r0", "an earlier round recalculated from video")  # owed while it plays
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        results = [
            StakeResult("ana", "w:ana", 150),  # wins: pays its 40 back
            StakeResult("binh", "w:binh", 0),  # a tie: the stake comes back, the debt stays
            StakeResult("chai", "w:chai", -30),  # loses part: the rest comes back, the debt stays
        ]
        settle_round(ledger, "r1", results)
        owed = {player: (ledger.wallet(player), ledger.debt(player)) for player in ("ana", "binh", "chai")}
        assert owed == {"ana": (210, 0), "binh": (100, 40), "chai": (70, 40)}
        assert_books_balance(session)


def test_a_hold_beyond_the_wallet_is_refused(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        Ledger(session, THB).deposit("ana", 299)
    with pytest.raises(InsufficientFundsError, match="ana wallet holds 299 THB, 300 needed"), sessions.begin() as s:
        Ledger(s, THB).hold("ana", 300, "r1", "w1")
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Hold)) == 0


def test_run_transaction_commits_and_rolls_back(sessions: sessionmaker[Session]) -> None:
    run_transaction(sessions, lambda session: Ledger(session, THB).deposit("ana", 5))

    def failing(session: Session) -> None:
        Ledger(session, THB).deposit("ana", 5)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        run_transaction(sessions, failing)
    with sessions() as session:
        assert Ledger(session, THB).wallet("ana") == 5


def test_transfers_written_in_bulk_keep_every_character_of_their_text(sessions: sessionmaker[Session]) -> None:
    """On PostgreSQL transfers go by COPY in its text format: tabs, newlines, backslashes and NULLs survive."""
    memo = "void: the dealer said \\N\tthen\r\n\\ left"
    with sessions.begin() as session:
        ledger = Ledger(session, THB)
        ledger.deposit("ana", 100, memo=memo)
        ledger.request_key = "key\twith\\tab"
        ledger.deposit("ana", 5)
    with sessions() as session:
        rows = session.execute(select(Transfer.memo, Transfer.request_key, Transfer.round_id).order_by(Transfer.id))
        assert [tuple(row) for row in rows] == [(memo, None, None), ("", "key\twith\\tab", None)]
