"""A Pok Deng table whose players' money the operator keeps, through the round service and the HTTP API, against
the reference operator's wallet (a real HTTP server): every accepted bet debited once, every settlement credited
once, voids rolled back, corrections adjusted, a stake never placed rolled back, and the studio's mirror reconciled
with the operator's answers to the unit."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event, func, select
from sqlalchemy.orm import Session, sessionmaker

from services.api.app import create_app
from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.cli import main
from services.db import session_factory
from services.games.pokdeng import AwaitingCard, AwaitingDecision, AwaitingInsurance, Position, Side
from services.games.pokdeng.port import POKDENG
from services.ledger.errors import IdempotencyConflictError
from services.ledger.models import Account, Hold, Transfer
from services.ledger.wallets import WalletService
from services.rounds import audit
from services.rounds.clock import ManualClock
from services.rounds.errors import BettingClosedError
from services.rounds.models import Wager
from services.rounds.players import PlayerService
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.service import RoundService
from services.rounds.slips import SlipWriter
from services.rounds.stakes import StakeChangedError, WalletNotConfiguredError
from services.wallet.models import WalletCallRecord
from services.wallet.outbox import OutcomeUnknownError, SeamlessWallet, WalletRefusedError
from services.wallet.protocol import WalletConfig
from services.wallet.reconcile import MATCHED, MISMATCH, REFUSAL, reconcile
from services.wallet.reference import SECRET, OperatorWallet, serving
from services.wallet.seamless import stake_transaction
from services.wallet.sender import WalletSender
from tests.controller.test_controller_kills import subprocess_url

pytestmark = pytest.mark.db

START = 10_000
A = Position("A")
# dealt A, B, C, banker, twice, then third cards. WIN: seat A 9♠ 10♠ (Pok 9) against the banker's 2♣ 3♣ (5).
# LOSE: seat A 2♠ 3♠ (5, stands) against the banker's 9♣ 7♣ (6); seats B and C draw.
WIN = ["9S", "4D", "5D", "2C", "TS", "6D", "7D", "3C", "8H", "8D", "8S", "2H"]
LOSE = ["2S", "4D", "5D", "9C", "3S", "6D", "7D", "7C", "8H", "8D", "8S", "2H"]


@pytest.fixture
def operator() -> Iterator[tuple[OperatorWallet, str]]:
    wallet = OperatorWallet(balances={"ana": START, "binh": 50}, slow_s=0.6)
    with serving(wallet) as url:
        yield wallet, url


@pytest.fixture(params=["alone", "batched", "on the event loop"])
def table(request: pytest.FixtureRequest, database: Engine, operator: tuple[OperatorWallet, str]) -> Iterator[Table]:
    """An operator's-wallet table; "batched": its stakes placed by a slip writer, as a worker thread of the API
    places them; "on the event loop": priced and placed in the writer's batches, the debit sent from an event loop,
    as the API's lane takes a slip."""
    sessions = session_factory(database)
    clock = ManualClock()
    service = RoundService(sessions, clock, games=STUDIO_GAMES)
    if request.param != "alone":
        service.slip_writer = SlipWriter(service)
    service.wallet = SeamlessWallet(sessions, WalletConfig(operator[1], SECRET, timeout_s=0.3, attempts=3,
                                                           backoff_s=0.01))  # fmt: skip
    service.create_table("s1", "THB", {"commission_bps": 0}, wallet="operator", allow_return_over_100=True)
    for player in ("ana", "binh"):
        PlayerService(sessions).register(player)
    yield Table(service, sessions, clock, operator[0], WalletSender(service.wallet), request.param)
    if service.slip_writer is not None:
        service.slip_writer.stop()


class Table:
    def __init__(
        self, service: RoundService, sessions: sessionmaker[Session], clock: ManualClock, wallet: OperatorWallet,
        sender: WalletSender, mode: str = "alone",
    ) -> None:  # fmt: skip
        self.service, self.sessions, self.clock, self.wallet, self.sender = service, sessions, clock, wallet, sender
        self.on_loop = mode == "on the event loop"

    def bet(self, player: str, round_id: str, stake: int, key: str, side: Side = Side.PLAYER) -> dict[str, Any]:
        if not self.on_loop:
            return pokdeng(self.service).place_bets(player, round_id, [Bet(side, A, stake)], key)
        self.service.table_info("s1")  # the API knows the table's wallet and the round's game once a request asked
        self.service._round_games[round_id] = "pokdeng"
        slip = {"bets": [{"side": side.value, "seat": A.value, "stake": stake}]}

        async def on_the_loop() -> Any:
            soon = self.service.act_soon(player, round_id, "bets", slip, key)
            if soon is None:  # not taken on the loop (no wallet configured): as the API's route, in a thread
                assert self.service.wallet is None
                return await asyncio.to_thread(self.service.act, player, round_id, "bets", slip, key)
            return await soon

        answer: Any = asyncio.run(on_the_loop())
        return dict(answer.model_dump())

    def around_calls(self, monkeypatch: pytest.MonkeyPatch, before: Any = None, after: Any = None) -> None:
        """``before(record)`` and ``after(record)`` around each call to the operator's wallet."""
        wallet = self.service.wallet
        assert wallet is not None
        if self.on_loop:
            call_soon = wallet.call_soon

            async def soon(record: Any, *args: Any, **kwargs: Any) -> Any:
                if before is not None:
                    before(record)
                answer = await call_soon(record, *args, **kwargs)
                if after is not None:
                    after(record)
                return answer

            monkeypatch.setattr(wallet, "call_soon", soon)
            return
        call = wallet.call

        def here(record: Any, *args: Any, **kwargs: Any) -> Any:
            if before is not None:
                before(record)
            answer = call(record, *args, **kwargs)
            if after is not None:
                after(record)
            return answer

        monkeypatch.setattr(wallet, "call", here)

    def play(self, round_id: str, cards: list[str]) -> dict[str, int]:
        """Close betting, deal ``cards`` (no insurance bought, every decision left to time out); each player's net."""
        engine = pokdeng(self.service).close_betting(round_id).engine
        deck = [Card.from_code(code) for code in cards]
        while engine.result is None:
            match engine.expecting:
                case AwaitingCard():
                    engine = self.service.deal(round_id, deck.pop(0)).engine
                case AwaitingInsurance():
                    engine = pokdeng(self.service).close_insurance(round_id).engine
                case AwaitingDecision(seat=seat):
                    self.clock.advance(seconds=30)
                    engine = pokdeng(self.service).decision_timeout(round_id, seat).engine
        return dict(POKDENG.nets(engine))

    def studio_books(self, player: str) -> tuple[int, int]:
        """The player's studio wallet and debt."""
        found = WalletService(self.sessions, "THB").balance(player)
        return found["balance"], found["debt"]

    def report(self, round_id: str) -> dict[str, str]:
        with self.sessions() as session:
            return {line.transaction_id: line.verdict for line in reconcile(session, round_id).lines}

    def conserved(self) -> None:
        with self.sessions() as session:
            assert session.scalar(select(func.sum(Account.balance))) == 0

    def all_square(self, round_id: str, player: str = "ana") -> None:
        """The player's studio wallet and debt are zero, every call of the round matches its mirror, money is kept."""
        assert self.studio_books(player) == (0, 0)
        assert set(self.report(round_id).values()) == {MATCHED}
        self.conserved()


def test_a_bet_is_debited_once_before_it_is_accepted_and_its_settlement_credited_once(table: Table) -> None:
    round_id = table.service.open_round("s1")
    slip = table.bet("ana", round_id, 100, "k1")
    hold = 3 * 100  # the table holds 3 × the stake
    assert slip["balance"] == START - hold, "the answer gives the operator's balance"
    assert table.wallet.balances["ana"] == START - hold
    assert table.bet("ana", round_id, 100, "k1") == slip, "a retry gets the first answer"
    debit = stake_transaction(round_id, "ana", "k1")
    assert table.wallet.applications[debit] == 1 and table.wallet.received[debit] == 1
    assert table.studio_books("ana") == (0, 0), "the studio's wallet mirrors the debit into the hold"
    nets = table.play(round_id, WIN)
    assert nets["ana"] > 0
    assert table.sender.step() == {"pending": 0, "collected": 0, "rolled_back": 0}
    assert table.wallet.balances["ana"] == START + nets["ana"]
    credits = [t for t in table.wallet.applied if t.startswith("settlement:")]
    assert credits == [f"settlement:{round_id}:ana"]
    assert table.sender.step()["pending"] == 0 and table.wallet.applications[credits[0]] == 1
    table.all_square(round_id)
    shown = audit.round_audit(table.service, round_id)["wallet_calls"]  # what the operator's page lists
    assert [(c["purpose"], c["kind"], c["amount"], c["status"]) for c in shown] == [
        ("stake", "debit", hold, "ok"),
        ("payout", "credit", hold + nets["ana"], "ok"),
    ]


def test_a_loser_is_credited_zero_and_the_round_balances_at_the_operator(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    nets = table.play(round_id, LOSE)
    assert nets["ana"] < 0
    table.sender.step()
    assert table.wallet.balances["ana"] == START + nets["ana"]
    credit = table.wallet.applied[f"settlement:{round_id}:ana"]
    assert credit["status"] == "ok", "a zero credit closes the round at the operator"
    assert set(table.report(round_id).values()) == {MATCHED}


def test_a_debit_the_operator_refuses_refuses_the_bet_and_nothing_is_held(table: Table) -> None:
    round_id = table.service.open_round("s1")
    with pytest.raises(WalletRefusedError, match="insufficient_funds binh has 50, 300 asked"):
        table.bet("binh", round_id, 100, "k1")
    table.wallet.blocked.add("ana")
    with pytest.raises(WalletRefusedError, match="player_blocked"):
        table.bet("ana", round_id, 100, "k2")
    with table.sessions() as session:
        assert session.scalar(select(func.count()).select_from(Wager)) == 0
        assert session.scalar(select(func.count()).select_from(Hold)) == 0
    assert set(table.report(round_id).values()) == {REFUSAL}
    assert table.wallet.balances == {"ana": START, "binh": 50}


def test_an_unknown_outcome_is_resolved_by_asking_again_never_by_guessing(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.wallet.faults["lose"] = 1  # applied, the answer lost: the studio asks again and gets the first answer
    table.bet("ana", round_id, 100, "k1")
    assert table.wallet.applications[stake_transaction(round_id, "ana", "k1")] == 1
    table.wallet.faults["error"] = 3  # every attempt of the next request fails: no answer, no bet
    with pytest.raises(OutcomeUnknownError, match="asked again until it does"):
        table.bet("ana", round_id, 200, "k2")
    with table.sessions() as session:
        assert session.scalar(select(func.sum(Wager.stake))) == 100
    slip = table.bet("ana", round_id, 200, "k2")  # the player retries with the same key: debited once, placed once
    assert slip["wagers"][0]["stake"] == 300
    assert table.wallet.applications[stake_transaction(round_id, "ana", "k2")] == 1
    assert table.wallet.balances["ana"] == START - 900
    assert table.studio_books("ana") == (0, 0)


def test_a_stake_refused_after_its_debit_is_rolled_back_and_its_key_retired(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    round_id = table.service.open_round("s1")

    def betting_closes(record: Any) -> None:
        if record.kind == "debit":  # while the operator answered the debit, betting closed (its rollback: as sent)
            pokdeng(table.service).close_betting(round_id)

    table.around_calls(monkeypatch, after=betting_closes)
    with pytest.raises(BettingClosedError, match="betting is closed"):
        table.bet("ana", round_id, 100, "k1")
    assert table.wallet.balances["ana"] == START, "the debit was rolled back"
    monkeypatch.undo()
    with pytest.raises(StakeChangedError, match="rolled back; send it again with a new idempotency key"):
        table.bet("ana", round_id, 100, "k1")
    debit_id = stake_transaction(round_id, "ana", "k1")
    assert table.report(round_id) == {debit_id: MATCHED, f"rollback:{debit_id}": MATCHED}


def test_a_debit_whose_stake_was_never_placed_is_rolled_back_when_its_round_ends(table: Table) -> None:
    round_id = table.service.open_round("s1")
    orphan = stake_transaction(round_id, "ana", "k-lost")
    assert table.service.wallet is not None  # the API process dies after the operator's debit, before placing
    table.service.wallet.debit("ana", 300, "THB", round_id, orphan, "bet")
    table.bet("ana", round_id, 100, "k1")
    assert table.sender.step()["rolled_back"] == 0, "not while its round runs: the stake may yet be placed"
    nets = table.play(round_id, LOSE)
    assert table.sender.step()["rolled_back"] == 1
    assert table.sender.step()["rolled_back"] == 0, "once"
    assert table.wallet.balances["ana"] == START + nets["ana"]
    assert set(table.report(round_id).values()) == {MATCHED}


def test_a_void_before_settlement_rolls_back_each_debit(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    table.bet("ana", round_id, 50, "k2")
    table.service.void(round_id, "the shoe jammed", "op")
    assert table.sender.step()["pending"] == 0
    assert table.wallet.balances["ana"] == START
    rollbacks = sorted(t for t in table.wallet.applied if t.startswith("rollback:"))
    assert rollbacks == sorted(f"rollback:{stake_transaction(round_id, 'ana', k)}" for k in ("k1", "k2"))
    table.all_square(round_id)


def test_a_void_after_settlement_takes_the_winnings_back_and_pays_the_recorded_debt(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    nets = table.play(round_id, WIN)
    table.sender.step()
    table.service.void(round_id, "the dealer dealt from a wrong deck", "op")
    assert table.studio_books("ana") == (0, nets["ana"]), "taken back: a debt until the operator debits it"
    assert table.sender.step() == {"pending": 0, "collected": 1, "rolled_back": 0}
    assert table.wallet.balances["ana"] == START
    table.all_square(round_id)  # the operator's debit paid the debt


def test_a_take_back_the_operator_refuses_stays_a_recorded_debt(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    nets = table.play(round_id, WIN)
    table.sender.step()
    table.wallet.blocked.add("ana")
    table.service.void(round_id, "a wrong deck", "op")
    assert table.sender.step()["collected"] == 0
    assert table.studio_books("ana") == (0, nets["ana"])
    verdicts = table.report(round_id)
    assert verdicts[f"void:{round_id}:ana"] == REFUSAL and MISMATCH not in verdicts.values()


def test_a_correction_credits_or_debits_the_difference(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    table.play(round_id, LOSE)
    table.sender.step()
    lost = table.wallet.balances["ana"]
    changes = table.service.recalculate(round_id, {0: Card.from_code("4S")}, "v@1", "op")
    table.sender.step()
    assert table.wallet.balances["ana"] == lost + changes["ana"] and changes["ana"] > 0
    table.all_square(round_id)


def test_reconcile_finds_a_mirror_the_operator_does_not_know(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    with table.sessions.begin() as session:  # a mirror transfer written by hand, with no call behind it
        ids = dict(session.execute(select(Account.kind, Account.id).where(Account.owner.in_(["", "ana"]))).all())
        session.add(Transfer(debit_account_id=ids["cash"], credit_account_id=ids["wallet"], amount=7, currency="THB",
                             kind="operator_debit", round_id=round_id, memo="stake:forged"))  # fmt: skip
        session.execute(Account.__table__.update().where(Account.id == ids["cash"]).values(balance=Account.balance - 7))
        session.execute(
            Account.__table__.update().where(Account.id == ids["wallet"]).values(balance=Account.balance + 7)
        )
    assert table.report(round_id)["stake:forged"] == MISMATCH


def test_a_stake_without_a_configured_wallet_is_refused_and_room_tables_cannot_use_one(table: Table) -> None:
    round_id = table.service.open_round("s1")
    table.service.wallet = None
    with pytest.raises(WalletNotConfiguredError, match="STUDIO_WALLET_URL"):
        table.bet("ana", round_id, 100, "k1")
    with pytest.raises(Exception, match="cannot use the operator's wallet: its players can lose more"):
        table.service.create_table("mb1", "THB", {}, game="maubinh", wallet="operator")
    with pytest.raises(Exception, match="wallet must be one of internal, operator"):
        table.service.create_table("x1", "THB", {}, wallet="house")


def test_over_http_a_refused_debit_answers_409_naming_the_operators_reason(
    database: Engine, operator: tuple[OperatorWallet, str]
) -> None:
    wallet, url = operator
    app = create_app(database, ManualClock(), wallet=WalletConfig(url, SECRET, timeout_s=0.5, attempts=2))
    players: PlayerService = app.state.services.players
    tokens = {name: players.register(name, role) for name, role in (("op", "operator"), ("ana", "player"),
                                                                      ("binh", "player"))}  # fmt: skip
    with TestClient(app) as client:
        op = {"Authorization": f"Bearer {tokens['op']}"}
        created = client.post("/v1/operator/tables", json={"id": "s1", "wallet": "operator",
                                                            "allow_return_over_100": True}, headers=op)  # fmt: skip
        assert created.status_code == 201 and created.json()["wallet"] == "operator"
        room = client.post(
            "/v1/operator/tables", json={"id": "m1", "game": "maubinh", "wallet": "operator"}, headers=op
        )
        assert room.status_code == 422 and "cannot use the operator's wallet" in room.json()["message"]
        round_id = app.state.services.rounds.open_round("s1")
        slip = {"bets": [{"side": "player", "seat": "A", "stake": 100}]}

        def bet(who: str, key: str) -> Any:
            headers = {"Authorization": f"Bearer {tokens[who]}", "Idempotency-Key": key}
            return client.post(f"/v1/rounds/{round_id}/bets", json=slip, headers=headers)

        refused = bet("binh", "b1")
        assert refused.status_code == 409 and refused.json()["code"] == "wallet_refused"
        assert "insufficient_funds" in refused.json()["message"]
        accepted = bet("ana", "a1")
        assert accepted.status_code == 201 and accepted.json()["balance"] == START - 300
        assert bet("ana", "a1").json() == accepted.json()
        assert wallet.balances["ana"] == START - 300


def test_studio_wallet_reconcile_prints_each_call_and_fails_on_a_mismatch(
    table: Table, database: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, "k1")
    table.play(round_id, LOSE)
    table.sender.step()
    url = ["--database", subprocess_url(database)]
    assert main(["wallet", "reconcile", "--round", round_id, *url]) == 0
    printed = capsys.readouterr().out
    assert printed.count("matched") == 3 and "2 calls: 2 matched, 0 pending, 0 refused, 0 mismatch" in printed
    assert main(["wallet", "reconcile", "--since", "2000-01-01", "--json", *url]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["clean"] and {line["purpose"] for line in report["lines"]} == {"stake", "payout"}
    with table.sessions.begin() as session:  # the operator's answer to the credit, tampered with: it refused
        session.execute(WalletCallRecord.__table__.update().where(WalletCallRecord.purpose == "payout")
                        .values(status="refused"))  # fmt: skip
    assert main(["wallet", "reconcile", "--round", round_id, *url]) == 1
    assert "mismatch" in capsys.readouterr().out


def test_a_seamless_stake_takes_two_transactions_around_its_call(table: Table, database: Engine) -> None:
    """Priced with its debit recorded, then the call, then the answer recorded with the stake placed: two commits
    (the call is never made from inside a transaction)."""
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 10, "warm")  # the table and the accounts known (first-use look-ups aside)
    commits: list[str] = []

    def committed(_connection: Any) -> None:
        commits.append("commit")

    event.listen(database, "commit", committed)
    try:
        answer = table.bet("ana", round_id, 100, "k-two")
    finally:
        event.remove(database, "commit", committed)
    assert answer["balance"] == START - 30 - 300
    assert len(commits) == 2, commits
    with table.sessions() as session:
        row = session.scalar(select(WalletCallRecord).where(
            WalletCallRecord.transaction_id == stake_transaction(round_id, "ana", "k-two")))  # fmt: skip
        assert row is not None and row.status == "ok" and row.mirrored_at is not None and row.attempts == 1


def test_a_request_racing_its_own_key_never_rolls_back_the_debit_another_placed(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests with one key and different bets of the same stake share one debit (its id is the player's and the
    key's). The second, placed while the first waited on the operator, mirrors it; the first is then refused (the key
    was used for another request) — and must not roll back a debit a placed stake stands on."""
    round_id = table.service.open_round("s1")
    raced: list[dict[str, Any]] = []

    def the_other_request_first(record: Any) -> None:
        if record.kind == "debit" and not raced:
            raced.append({})
            raced[0] = pokdeng(table.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position("B"), 100)], "k")

    table.around_calls(monkeypatch, before=the_other_request_first)
    with pytest.raises(IdempotencyConflictError):
        table.bet("ana", round_id, 100, "k")  # seat A: another body under the same key
    monkeypatch.undo()
    assert raced[0]["wagers"][0]["seat"] == "B" and raced[0]["balance"] == START - 300
    assert table.wallet.balances["ana"] == START - 300, "the placed stake's debit stands"
    debit_id = stake_transaction(round_id, "ana", "k")
    assert table.report(round_id) == {debit_id: MATCHED}


def test_slips_sent_together_from_the_loop_are_priced_and_placed_in_batches_each_answered_alone(table: Table) -> None:
    """Twelve slips at once from an event loop, as the API's lane takes them: the operator refuses one player's, a
    retry races its own first sending, a key comes back with another slip; each gets its own answer, every accepted
    stake is debited once and mirrored, and the writer took them in fewer transactions than one per step."""
    if not table.on_loop:
        pytest.skip("the event loop's path")
    round_id = table.service.open_round("s1")
    table.service.table_info("s1")
    table.service._round_games[round_id] = "pokdeng"
    writer = table.service.slip_writer
    assert writer is not None

    def slip(seat: str, stake: int) -> dict[str, Any]:
        return {"bets": [{"side": "player", "seat": seat, "stake": stake}]}

    sent = [("ana", f"k{n}", slip("A", 100)) for n in range(8)]
    sent += [("binh", "b1", slip("A", 100)), ("ana", "k0", slip("A", 100)), ("ana", "k1", slip("B", 100))]
    sent += [("binh", "b2", slip("B", 10))]  # 30 held: within binh's 50 at the operator

    async def together() -> list[Any]:
        soon = [table.service.act_soon(player, round_id, "bets", body, key) for player, key, body in sent]
        assert all(each is not None for each in soon)
        return await asyncio.gather(*soon, return_exceptions=True)  # type: ignore[arg-type]

    before = writer.batches
    answers = asyncio.run(together())
    accepted = [a.model_dump() for a in answers if not isinstance(a, BaseException)]
    refused = {sent[n][1]: type(a).__name__ for n, a in enumerate(answers) if isinstance(a, BaseException)}
    assert refused == {"b1": "WalletRefusedError", "k1": "IdempotencyConflictError"}, refused
    assert answers[9].model_dump() == answers[0].model_dump(), "the retry got the first answer"
    assert len(accepted) == 10 and table.wallet.balances == {"ana": START - 8 * 300, "binh": 50 - 30}
    assert writer.batches - before < 2 * len(sent), "priced and placed in batches"
    for key in ("k0", "k1", "b2"):
        player = "binh" if key == "b2" else "ana"
        assert table.wallet.applications[stake_transaction(round_id, player, key)] == 1
    with table.sessions() as session:
        held = session.scalar(select(func.sum(Hold.amount)).where(Hold.round_id == round_id))
    assert held == 8 * 300 + 30
    assert table.studio_books("ana") == (0, 0) and table.studio_books("binh") == (0, 0)
    assert set(table.report(round_id).values()) == {MATCHED, REFUSAL}
    table.conserved()


def test_a_request_cancelled_while_its_debit_is_out_still_sees_its_stake_placed_or_rolled_back(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the event loop a request can be cancelled (its client gone, the server stopping) while the operator
    debits its stake: the flow goes on without it — here betting closes meanwhile, and the debit is rolled back at
    once, not left to the end of the round."""
    if not table.on_loop:
        pytest.skip("the event loop's path (a worker thread is never cancelled)")
    round_id = table.service.open_round("s1")
    table.service.table_info("s1")
    table.service._round_games[round_id] = "pokdeng"
    request: list[asyncio.Task[Any]] = []

    def client_gone_and_betting_closes(record: Any) -> None:
        if record.kind == "debit":
            request[0].cancel()
            pokdeng(table.service).close_betting(round_id)

    table.around_calls(monkeypatch, after=client_gone_and_betting_closes)
    slip = {"bets": [{"side": "player", "seat": "A", "stake": 100}]}

    async def cancelled() -> None:
        soon = table.service.act_soon("ana", round_id, "bets", slip, "k1")
        assert soon is not None
        request.append(asyncio.ensure_future(soon))
        with pytest.raises(asyncio.CancelledError):
            await request[0]
        for _ in range(200):  # the flow, on its own now, rolls the debit back
            if table.wallet.balances["ana"] == START:
                return
            await asyncio.sleep(0.05)

    asyncio.run(cancelled())
    assert table.wallet.balances["ana"] == START, "the debit was rolled back at once"
    debit_id = stake_transaction(round_id, "ana", "k1")
    assert table.report(round_id) == {debit_id: MATCHED, f"rollback:{debit_id}": MATCHED}


def credits_after_a_round(table: Table) -> tuple[str, dict[str, int]]:
    """A round ana and binh bet in, played (ana wins, binh loses): its credits recorded, not yet sent."""
    round_id = table.service.open_round("s1")
    table.bet("ana", round_id, 100, f"k1-{round_id}")
    table.bet("binh", round_id, 10, f"b1-{round_id}", side=Side.BANKER)
    return round_id, table.play(round_id, WIN)


def test_a_rounds_credits_reach_the_operator_in_one_request(table: Table) -> None:
    round_id, nets = credits_after_a_round(table)
    assert table.sender.step() == {"pending": 0, "collected": 0, "rolled_back": 0}
    assert table.wallet.batches == 1, "both credits in one request"
    for player in ("ana", "binh"):
        assert table.wallet.applications[f"settlement:{round_id}:{player}"] == 1
    assert table.wallet.balances == {"ana": START + nets["ana"], "binh": 50 + nets["binh"]}
    assert set(table.report(round_id).values()) == {MATCHED}


def test_a_wallet_without_the_batch_endpoint_gets_the_credits_one_by_one(table: Table) -> None:
    table.wallet.batch_credits = False  # (read when the app is built: the server below was built before)
    with serving(table.wallet) as url:
        assert table.service.wallet is not None
        table.service.wallet.config = WalletConfig(url, SECRET, timeout_s=0.3, attempts=3, backoff_s=0.01)
        round_id, nets = credits_after_a_round(table)
        assert table.sender.step()["pending"] == 0
        assert table.wallet.batches == 0 and table.wallet.balances["binh"] == 50 + nets["binh"]
        assert table.sender.wallet._batches is False, "asked once: one by one from then on"
    assert set(table.report(round_id).values()) == {MATCHED}


def test_a_batch_lost_or_answered_in_part_is_sent_again_one_by_one_and_applied_once(table: Table) -> None:
    round_id, nets = credits_after_a_round(table)
    table.wallet.faults["lose"] = 1  # applied, the batch's answer lost: each credit is then asked for alone
    assert table.sender.step()["pending"] == 0
    second, more = credits_after_a_round(table)
    table.wallet.leave_out = 1  # applied, binh's answer left out of the batch's: asked for alone
    assert table.sender.step()["pending"] == 0
    table.wallet.leave_out = 0
    for each in (round_id, second):
        for player in ("ana", "binh"):
            credit = f"settlement:{each}:{player}"
            assert table.wallet.applications[credit] == 1, credit
        assert set(table.report(each).values()) == {MATCHED}
    received = table.wallet.received
    assert received[f"settlement:{second}:binh"] == 2 and received[f"settlement:{second}:ana"] == 1
    assert table.wallet.balances == {"ana": START + nets["ana"] + more["ana"], "binh": 50 + nets["binh"] + more["binh"]}


def test_a_debit_rolled_back_before_its_slip_is_placed_refuses_that_slip_alone(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rollback of a debit recorded while its slip waited to be placed (another request with the key gave up on
    it): that slip is refused, saying so; its neighbours are placed."""
    if not table.on_loop:
        pytest.skip("slips placed together from the event loop")
    round_id = table.service.open_round("s1")
    table.service.table_info("s1")
    table.service._round_games[round_id] = "pokdeng"
    doomed = stake_transaction(round_id, "ana", "k2")
    wallet = table.service.wallet
    assert wallet is not None

    def rolled_back(record: Any) -> None:
        if record.transaction_id == doomed:
            wallet.rollback(doomed, "given up by another request")

    table.around_calls(monkeypatch, after=rolled_back)
    sent = [("ana", "k1", "A", 100), ("ana", "k2", "B", 100), ("binh", "b1", "A", 10)]

    async def together() -> list[Any]:
        soon = [table.service.act_soon(player, round_id, "bets", {"bets": [{"side": "player", "seat": seat,
                "stake": stake}]}, key) for player, key, seat, stake in sent]  # fmt: skip
        return await asyncio.gather(*soon, return_exceptions=True)  # type: ignore[arg-type]

    answers = asyncio.run(together())
    assert type(answers[1]).__name__ == "DebitRolledBackError" and "was rolled back" in str(answers[1])
    assert not isinstance(answers[0], BaseException) and not isinstance(answers[2], BaseException)
    assert table.wallet.balances == {"ana": START - 300, "binh": 50 - 30}
    assert table.studio_books("ana") == (0, 0)
    assert set(table.report(round_id).values()) == {MATCHED}
    table.conserved()
