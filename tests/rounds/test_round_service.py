"""The round service on a real database: bets, holds, the deal, windows, settlement, corrections."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.games.pokdeng import Position, Side, WagerError
from services.games.pokdeng.transcript import replay
from services.ledger import IdempotencyConflictError, InsufficientFundsError
from services.ledger.models import Hold, HoldResolution, Transfer
from services.ledger.wallets import WalletService
from services.rounds.clock import ManualClock
from services.rounds.errors import BettingClosedError, RecalculationRefusedError, RoundError, WindowClosedError
from services.rounds.models import Round, Wager
from services.rounds.players import PlayerService
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.service import RoundService

A, B, C = Position.A, Position.B, Position.C
PLAYER, BANKER = Side.PLAYER, Side.BANKER
SPEC_CARDS = "5H 2D KD 9S TH 4S 3C 5C 2H 9D 2S".split()
SPEC_TRANSCRIPT = {
    "cards": SPEC_CARDS,
    "decisions": {"A": "draw", "B": "stand"},
    "wagers": [
        {"id": "w1", "player": "p1", "side": "player", "seat": "A", "stake": 100},
        {"id": "w2", "player": "p2", "side": "banker", "seat": "B", "stake": 50},
        {"id": "w3", "player": "p3", "side": "player", "seat": "B", "stake": 200},
        {"id": "w4", "player": "p2", "side": "banker", "seat": "C", "stake": 50},
    ],
    "insurance": {"p1": 100},
}


def fund(wallets: WalletService, *players: str, amount: int = 10_000) -> None:
    for player in players:
        wallets.deposit(player, amount, f"fund-{player}", "operator")


def deal(service: RoundService, round_id: str, codes: list[str]) -> None:
    for code in codes:
        service.deal(round_id, Card.from_code(code))


def play_spec_round(service: RoundService, wallets: WalletService) -> str:
    fund(wallets, "p1", "p2", "p3")
    round_id = service.open_round("t1", video_ref="cam1@00:00:10")
    pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    pokdeng(service).place_bets("p2", round_id, [Bet(BANKER, B, 50), Bet(BANKER, C, 50)], "k2")
    pokdeng(service).place_bets("p3", round_id, [Bet(PLAYER, B, 200)], "k3")
    pokdeng(service).close_betting(round_id)
    deal(service, round_id, SPEC_CARDS[:8])
    pokdeng(service).buy_insurance("p1", round_id, 100, "k4")
    pokdeng(service).close_insurance(round_id)
    pokdeng(service).decide("p1", round_id, A, True)
    deal(service, round_id, ["2H"])
    pokdeng(service).decide("p3", round_id, B, False)
    deal(service, round_id, ["9D", "2S"])
    return round_id


def test_a_full_round_settles_every_wallet_as_replay_computes(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    round_id = play_spec_round(service, wallets)
    nets = replay(SPEC_TRANSCRIPT).player_nets()
    for player in ("p1", "p2", "p3"):
        assert wallets.balance(player) == {
            "player": player, "currency": "THB", "balance": 10_000 + nets[player], "held": 0, "debt": 0,
        }  # fmt: skip
    with sessions() as session:
        round_ = session.get(Round, round_id)
        assert round_ is not None and round_.phase == "settled"
        assert json.loads(round_.result or "{}")["players"] == {"p1": 200, "p2": 50, "p3": 0}
        assert sorted(session.scalars(select(Wager.net))) == [0, 0, 50, 300]
        resolved = session.execute(select(HoldResolution.hold_id, HoldResolution.status)).all()
        assert sorted(resolved) == [(hold_id, "posted") for hold_id in sorted(session.scalars(select(Hold.id)))]


def test_holds_are_the_hold_multiple_and_raises_grow_them(service: RoundService, wallets: WalletService) -> None:
    fund(wallets, "p1", amount=1_000)
    round_id = service.open_round("t1")
    first = pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    assert first["balance"] == 700
    raised = pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 50)], "k2")
    assert raised["wagers"] == [
        {"wager_id": first["wagers"][0]["wager_id"], "side": "player", "seat": "A", "stake": 150}
    ]
    assert raised["balance"] == 550


def test_a_slip_is_all_or_nothing(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    fund(wallets, "p1", amount=500)
    round_id = service.open_round("t1")
    with pytest.raises(InsufficientFundsError, match="p1 wallet holds 500 THB, 600 needed"):
        pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100), Bet(PLAYER, B, 100)], "k1")
    with pytest.raises(WagerError, match="already bets on the player side"):
        pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 10), Bet(BANKER, B, 10)], "k2")
    assert wallets.balance("p1")["balance"] == 500
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Wager)) == 0
        assert session.scalar(select(func.count()).select_from(Hold)) == 0


def test_idempotent_retries_return_the_first_result_and_move_money_once(
    service: RoundService, wallets: WalletService
) -> None:
    fund(wallets, "p1", amount=1_000)
    round_id = service.open_round("t1")
    first = pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "same")
    again = pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "same")
    assert again == first and wallets.balance("p1")["balance"] == 700
    with pytest.raises(IdempotencyConflictError, match="already used for a different request"):
        pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 200)], "same")


def test_an_empty_slip_is_refused_as_malformed_not_as_late(service: RoundService, wallets: WalletService) -> None:
    fund(wallets, "p1")
    round_id = service.open_round("t1")
    with pytest.raises(RoundError, match="a bet slip needs at least one bet") as refused:
        pokdeng(service).place_bets("p1", round_id, [], "k0")
    assert not isinstance(refused.value, BettingClosedError)
    assert wallets.balance("p1")["balance"] == 10_000


def test_late_bets_are_refused_by_the_clock_and_by_the_close(
    service: RoundService, wallets: WalletService, clock: ManualClock
) -> None:
    fund(wallets, "p1")
    round_id = service.open_round("t1")
    clock.advance(seconds=15)  # the default betting window is 15 s
    with pytest.raises(BettingClosedError, match="betting is closed"):
        pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    pokdeng(service).close_betting(round_id)
    with pytest.raises(BettingClosedError, match=r"betting is closed \(phase dealing\)"):
        pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k2")
    assert wallets.balance("p1")["balance"] == 10_000


def test_a_decision_after_its_window_is_refused(
    service: RoundService, wallets: WalletService, clock: ManualClock
) -> None:
    fund(wallets, "p1")
    round_id = service.open_round("t1")
    pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    pokdeng(service).close_betting(round_id)
    deal(service, round_id, "5H 2D KD 4S TH 4C 3C 2C".split())
    clock.advance(seconds=10)
    with pytest.raises(WindowClosedError, match="the window closed"):
        pokdeng(service).decide("p1", round_id, A, True)
    applied = pokdeng(service).decision_timeout(round_id, A)
    assert [type(e).__name__ for e in applied.events][:1] == ["DrawDecided"]


def test_a_fresh_service_rebuilds_an_open_round_from_its_log(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session], clock: ManualClock
) -> None:
    fund(wallets, "p1", "p2", "p3")
    round_id = service.open_round("t1")
    pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    pokdeng(service).close_betting(round_id)
    deal(service, round_id, SPEC_CARDS[:5])
    restarted = RoundService(sessions, clock, games=STUDIO_GAMES)  # a new process: empty engine cache
    deal(restarted, round_id, SPEC_CARDS[5:8])
    applied = pokdeng(restarted).close_insurance(round_id)
    assert applied.engine.expecting is not None and applied.phase == "drawing"
    assert applied.engine.cards == [Card.from_code(c) for c in SPEC_CARDS[:8]]


def test_void_before_settlement_returns_every_stake(service: RoundService, wallets: WalletService) -> None:
    fund(wallets, "p1", "p2")
    round_id = service.open_round("t1")
    pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    pokdeng(service).place_bets("p2", round_id, [Bet(BANKER, A, 100)], "k2")
    pokdeng(service).close_betting(round_id)
    deal(service, round_id, "5H 2D KD 9S TH 4S 3C".split())
    service.void(round_id, "shoe jammed", "operator")
    assert wallets.balance("p1")["balance"] == wallets.balance("p2")["balance"] == 10_000
    with pytest.raises(ValueError, match="already void"):
        service.void(round_id, "again", "operator")


def test_void_after_settlement_reverses_it_and_records_debt(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    round_id = play_spec_round(service, wallets)  # p1 won 200
    wallets.withdraw("p1", 10_150, "cash-out", "operator")  # p1 keeps only 50
    service.void(round_id, "wrong shoe", "operator")
    assert wallets.balance("p1") | {} == {"player": "p1", "currency": "THB", "balance": 0, "held": 0, "debt": 150}
    assert wallets.balance("p2")["balance"] == 10_000
    wallets.deposit("p1", 100, "top-up", "operator")
    assert wallets.balance("p1")["debt"] == 50


def test_recalculation_posts_only_the_difference(
    service: RoundService, wallets: WalletService, sessions: sessionmaker[Session]
) -> None:
    round_id = play_spec_round(service, wallets)
    with sessions() as session:
        transfers_before = session.scalar(select(func.count()).select_from(Transfer))
    # The video shows seat C's second card was 3D, not 3C: C still has 3 points, same flow;
    # the banker's third card was 2C not 2S: banker 9S 5C 2C is still 6 points, same outcomes.
    assert service.recalculate(round_id, {6: Card.from_code("3D"), 10: Card.from_code("2C")}, "v1", "op") == {}
    # A's third card was really 3H: A 5H TH 3H = 8 points (three hearts, ×3) — still wins 300.
    assert service.recalculate(round_id, {8: Card.from_code("3H")}, "v2", "op") == {}
    # B's second card was 3S not 4S: B has 5, loses to banker 6: p3 -200, p2 +50.
    changes = service.recalculate(round_id, {5: Card.from_code("3S")}, "v3", "op")
    assert changes == {"p2": 50, "p3": -200}
    assert wallets.balance("p3")["balance"] == 10_000 - 200
    with sessions() as session:
        assert session.scalar(select(func.count()).select_from(Transfer)) == transfers_before + 2


def test_recalculation_that_changes_the_flow_is_refused(service: RoundService, wallets: WalletService) -> None:
    round_id = play_spec_round(service, wallets)
    with pytest.raises(RecalculationRefusedError, match="void it"):
        service.recalculate(round_id, {7: Card.from_code("KC")}, "v1", "op")  # banker Pok 9: early settlement
    with pytest.raises(RecalculationRefusedError, match="no dealt card at index 11"):
        service.recalculate(round_id, {11: Card.from_code("4C")}, "v1", "op")


def test_a_threshold_change_applies_from_the_next_round(
    service: RoundService, wallets: WalletService, clock: ManualClock, players: PlayerService
) -> None:
    fund(wallets, "p1")
    round_id = service.open_round("t1")
    clock.advance(seconds=1)
    pokdeng(service).set_threshold("p1", 1)
    pokdeng(service).place_bets("p1", round_id, [Bet(PLAYER, A, 100)], "k1")
    pokdeng(service).close_betting(round_id)
    deal(service, round_id, "3H 2D KD 4S TH 4C 3C 2C".split())  # A has 3
    clock.advance(seconds=10)
    applied = pokdeng(service).decision_timeout(round_id, A)
    assert applied.events[0].draw is True  # type: ignore[union-attr]  # old threshold 4: draws on 3
    assert pokdeng(service).threshold("p1") == 1
