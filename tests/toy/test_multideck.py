"""A game whose shoe holds several decks (the toy high card at ``decks: 8``) on the controller as it is: the core counts
each card code up to the shoe's decks, deals two copies of a card in one round, refuses the copy beyond, and
reconciles a shoe fill against all its decks."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, text

from services.bus.messages import ShoeCard, ShoeNewDeck
from services.controller.table import ControllerSettings, TableController
from services.db import session_factory
from services.ledger.wallets import WalletService
from services.rounds.adapters import SeatIn
from services.rounds.clock import ManualClock
from services.rounds.players import PlayerService
from services.rounds.service import RoundService
from tests.toy import highcard

assert highcard.GAME.name == "highcard"


class Shoe:
    def __init__(self, controller: TableController) -> None:
        self.controller, self.seq = controller, 0

    def card(self, code: str) -> None:
        self.seq += 1
        self.controller.on_shoe(
            ShoeCard(shoe_id="h-shoe", boot_id="b", seq=self.seq, ts="2026-12-05T00:00:00+00:00", video_tc="",
                     deck=0, card=code, source="serial", confidence=1.0, raw=code)
        )  # fmt: skip

    def new_deck(self) -> None:
        self.seq += 1
        self.controller.on_shoe(
            ShoeNewDeck(shoe_id="h-shoe", boot_id="b", seq=self.seq, ts="2026-12-05T00:00:01+00:00", video_tc="",
                        deck=1, raw="")
        )  # fmt: skip


def table(database: Engine, decks: int) -> tuple[RoundService, TableController, ManualClock]:
    clock = ManualClock()
    service = RoundService(session_factory(database), clock, games=highcard.GAMES)
    service.create_table("h", "THB", {"decks": decks, "seating_ms": 1_000}, game="highcard")
    PlayerService(service.sessions, clock).register("ana")
    WalletService(service.sessions, "THB").deposit("ana", 10_000, "fund", "test")
    views: list[Any] = []
    controller = TableController("h", service, ControllerSettings("h-shoe", result_pause_ms=0),
                                 publish=lambda *view: views.append(view))  # fmt: skip
    controller.recover()
    return service, controller, clock


def seated_round(service: RoundService, controller: TableController, clock: ManualClock) -> str:
    controller.tick(clock.advance(seconds=1))
    assert controller.current is not None and controller.current.phase == "seating"
    round_id = controller.current.round_id
    service.act("ana", round_id, "sit", SeatIn(seat="P1"), f"sit-{round_id}")
    controller.refresh()
    controller.tick(clock.advance(seconds=2))  # seating closes
    assert controller.current.phase == "dealing"
    return round_id


def test_an_eight_deck_shoe_deals_two_copies_in_a_round_and_refuses_the_ninth(database: Engine) -> None:
    service, controller, clock = table(database, 8)
    shoe = Shoe(controller)
    assert controller.deck.decks == 8 and controller.deck.remaining == 416
    seated_round(service, controller, clock)
    shoe.card("AS")
    shoe.card("AS")  # the house gets the same card: another copy of the eight
    assert controller.current is not None and controller.current.phase == "settled"
    assert [str(card) for card in controller.current.cards] == ["AS", "AS"]
    for _ in range(6):  # six more rounds of the house alone, each dealt an ace of spades
        controller.tick(clock.advance(seconds=1))
        controller.tick(clock.advance(seconds=2))
        shoe.card("AS")
    assert controller.current.phase == "settled" and controller.deck.remaining == 416 - 8
    controller.tick(clock.advance(seconds=1))
    controller.tick(clock.advance(seconds=2))
    shoe.card("AS")  # a ninth: every copy is out
    assert controller.alerts[-1].message == "card AS was already dealt 8 times from this shoe"
    assert controller.current.phase == "dealing"  # the round still waits for its card
    shoe.new_deck()
    assert controller.deck.remaining == 416
    with service.sessions() as session:  # reconciled against 8 decks: every copy never seen is missing
        [report] = session.execute(text("SELECT seen, missing, doubled FROM deck_reports")).all()
    assert report.seen == 9 and len(report.missing.split()) == 416 - 8 and report.doubled == "AS"


def test_a_one_deck_shoe_still_refuses_a_card_twice_in_a_round(database: Engine) -> None:
    service, controller, clock = table(database, 1)
    seated_round(service, controller, clock)
    shoe = Shoe(controller)
    shoe.card("AS")
    shoe.card("AS")
    assert controller.alerts[-1].message == "a face-down card was already dealt from this deck"  # P1's, not named
    assert controller.current is not None and controller.current.phase == "dealing"
