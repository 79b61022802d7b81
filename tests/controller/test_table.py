"""The table controller on the real round service (SQLite/PostgreSQL) and a manual clock: no broker, no sleeps."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import cv2
import numpy as np
import pytest
from sqlalchemy import Engine, select

from services.bus.messages import ShoeAlarm, ShoeCard, ShoeNewDeck
from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.controller.table import DUE, ControllerSettings, TableController, reread_moved
from services.db import session_factory
from services.games.pokdeng import AwaitingCard, AwaitingDecision, Phase, Position, Side
from services.games.pokdeng.port import POKDENG
from services.journal.models import ShoeJournal
from services.ledger.wallets import WalletService
from services.rounds import audit, decks, display, queries
from services.rounds.clock import ManualClock, aware
from services.rounds.engines import load
from services.rounds.errors import RoundError, TableHeldError
from services.rounds.models import Round
from services.rounds.pokdeng import Bet, pokdeng
from services.rounds.proposals import Origin
from services.rounds.records import Applied
from services.rounds.service import RoundService
from tests.support import engine_of

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
WINDOWS = {"betting_window_ms": 10_000, "insurance_window_ms": 5_000, "decision_window_ms": 5_000}
SHOE = "t1-shoe"


class Table:
    def __init__(self, database: Engine) -> None:
        self.clock = ManualClock()
        self.service = RoundService(session_factory(database), self.clock, games=STUDIO_GAMES)
        self.wallets = WalletService(session_factory(database), "THB")
        self.service.create_table("t1", "THB", WINDOWS, allow_return_over_100=True)
        self.views: list[tuple[str, dict[str, Any]]] = []
        self.seq = 0
        self.controller = self.new_controller()

    def new_controller(self, **settings: Any) -> TableController:
        controller = TableController(
            "t1", self.service, ControllerSettings(SHOE, result_pause_ms=1_000, **settings),
            publish=lambda view, payload: self.views.append((view, json.loads(json.dumps(payload)))),
        )  # fmt: skip
        controller.recover()
        return controller

    def message(
        self, card: str, burn: bool = False, shoe: str = SHOE, seq: int | None = None, crop: bytes = b""
    ) -> ShoeCard:
        """The shoe's next message (or a message sent again: ``seq``); with ``crop``, a camera's."""
        if seq is None:
            self.seq += 1
        return ShoeCard(
            shoe_id=shoe, boot_id="b1", seq=seq or self.seq, ts="2026-12-03T00:00:00+00:00", video_tc="00:00:00:00",
            deck=0, card=card, burn=burn, source="camera" if crop else "serial", confidence=1.0, raw=card,
            crop=base64.b64encode(crop).decode() if crop else None,
        )  # fmt: skip

    def scan(self, *cards: str) -> None:
        for card in cards:
            self.controller.on_shoe(self.message(card))

    def tick(self, **delta: float) -> None:
        """What the controller process does on each pass: re-read rounds moved by others, then act."""
        reread_moved(self.service, {"t1": self.controller})
        self.controller.tick(self.clock.advance(**delta))

    def open_with_bets(self) -> str:
        for player in ("ana", "binh"):
            self.wallets.deposit(player, 10_000, f"fund-{player}", "test")
        self.tick(seconds=0)
        assert self.controller.current is not None and self.controller.current.phase == Phase.BETTING
        round_id = self.controller.current.round_id
        pokdeng(self.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position.A, 100)], "k1")
        pokdeng(self.service).place_bets("binh", round_id, [Bet(Side.PLAYER, Position.B, 50)], "k2")
        self.tick(seconds=10)
        return round_id

    def new_deck(self) -> None:
        self.seq += 1
        self.controller.on_shoe(
            ShoeNewDeck(shoe_id=SHOE, boot_id="b1", seq=self.seq, ts="t", video_tc="00:00:00:00", deck=1, raw="")
        )

    def journal(self) -> list[tuple[str | None, str]]:
        with self.service.sessions() as session:
            return [
                tuple(row)
                for row in session.execute(  # type: ignore[misc]
                    select(ShoeJournal.card, ShoeJournal.disposition).order_by(ShoeJournal.id)
                )
            ]

    def alerts(self) -> list[str]:
        return [alert.message for alert in self.controller.alerts]


@pytest.fixture
def table(database: Engine) -> Iterator[Table]:
    yield Table(database)


def test_the_controller_opens_a_round_and_closes_betting_when_its_window_ends(table: Table) -> None:
    table.tick(seconds=0)
    current = table.controller.current
    assert current is not None and current.phase == Phase.BETTING
    table.tick(seconds=9.9)
    assert table.controller.current is not None and table.controller.current.phase == Phase.BETTING
    table.tick(seconds=0.1)
    assert table.controller.current.phase == Phase.DEALING
    assert engine_of(table.controller).expecting == AwaitingCard(Position.A, 0, True)


def test_a_card_while_betting_is_refused_recorded_and_raised(table: Table) -> None:
    table.tick(seconds=0)
    table.scan("AS")
    assert table.journal() == [("AS", "refused")]
    assert table.alerts() == ["card AS scanned while no card is expected (betting)"]
    assert table.views[-1][1]["alerts"][-1]["card"] == "AS"


def test_a_card_after_an_operator_closed_betting_over_http_is_dealt_before_the_controller_hears_of_it(
    table: Table,
) -> None:
    """The API closed betting in its own process; the dealer deals at once, before the notice reaches the controller:
    the controller reads the round again rather than refuse a card the round now wants."""
    table.tick(seconds=0)
    assert table.controller.current is not None
    round_id = table.controller.current.round_id
    pokdeng(table.service).close_betting(round_id, "operator:pit")  # as the API does: no tick, no reread
    assert table.controller.current.phase == Phase.BETTING  # the controller's copy is behind
    table.scan("AS")
    assert table.journal() == [("AS", "dealt")]
    assert table.alerts() == []
    assert [str(card) for card in table.controller.current.cards] == ["AS"]


def test_cards_follow_the_deal_order_and_wrong_shoe_duplicate_and_burn_cards_are_not_assigned(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C")
    table.controller.on_shoe(table.message("3C", shoe="other-shoe"))
    table.scan("2C")  # the same card again
    table.controller.on_shoe(table.message("9H", burn=True))
    table.scan("4D")
    assert table.journal() == [("2C", "dealt"), ("3C", "refused"), ("2C", "refused"), ("9H", "burn"), ("4D", "dealt")]
    assert [str(c) for c in engine_of(table.controller).cards] == ["2C", "4D"]  # type: ignore[union-attr]
    assert table.alerts() == [
        "a card from shoe other-shoe, not this table's shoe",
        "card 2C was already dealt from this deck",
    ]


def test_another_shoes_card_or_new_deck_is_refused_without_naming_the_card_or_touching_the_deck(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C")
    table.controller.on_shoe(table.message("QS", shoe="t2-shoe"))  # maybe t2's face-down card: never named here
    other_deck = ShoeNewDeck(shoe_id="t2-shoe", boot_id="b9", seq=1, ts="t", video_tc="00:00:00:00", deck=1, raw="")
    table.controller.on_shoe(other_deck)
    assert table.controller.deck.remaining == 51  # this table's deck did not start over
    assert table.journal() == [("2C", "dealt"), ("QS", "refused"), (None, "refused")]
    assert [(a.card, a.message) for a in table.controller.alerts] == [
        (None, "a card from shoe t2-shoe, not this table's shoe"),
        (None, "a new deck from shoe t2-shoe, not this table's shoe"),
    ]
    dealer = json.dumps([payload for view, payload in table.views if view == "dealer"])
    assert "QS" not in dealer


def test_a_new_deck_mid_round_does_not_let_the_face_down_card_be_dealt_again_or_named(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C", "3C", "4C", "5C", "6C", "7C", "8C", "KD")  # KD: the banker's second card, face down
    table.seq += 1
    new_deck = ShoeNewDeck(shoe_id=SHOE, boot_id="b1", seq=table.seq, ts="t", video_tc="00:00:00:00", deck=1, raw="")
    table.controller.on_shoe(new_deck)
    table.scan("KD")
    assert table.alerts()[-1] == "a face-down card was already dealt in this round (before the new deck)"
    assert len(engine_of(table.controller).cards) == 8  # type: ignore[union-attr]
    for _view, payload in table.views:
        assert "KD" not in json.dumps(payload)


def test_alarms_from_another_shoe_and_a_misread_already_rescanned_do_not_stop_the_deal(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C")
    alarm = ShoeAlarm(shoe_id="t2-shoe", boot_id="b1", kind="misread", ts="t", video_tc="00:00:01:00")
    table.controller.on_alarm(alarm)
    assert table.controller.paused == "" and "not this table's shoe" in table.alerts()[-1]
    late = ShoeAlarm(shoe_id=SHOE, boot_id="b1", kind="misread", after_seq=table.seq - 1, ts="t", video_tc="t")
    table.controller.on_alarm(late)  # raised before card 2C was stamped, but arrived after it
    assert table.controller.paused == "" and table.alerts()[-1].endswith("it was scanned again since")
    table.controller.on_alarm(late.model_copy(update={"after_seq": table.seq}))  # the misread came after 2C
    assert table.controller.paused.startswith("misread")


def test_a_face_down_card_the_controller_had_not_seen_yet_is_refused_without_naming_it(table: Table) -> None:
    round_id = table.open_with_bets()
    table.scan("2C", "3C", "4C", "5C", "6C", "7C", "8C")
    table.service.deal(round_id, Card.from_code("KD"))  # dealt by someone else: the controller's copy is behind
    table.scan("KD")
    assert table.alerts()[-1] == "a face-down card was already dealt in this round"
    assert table.controller.alerts[-1].card is None
    for _view, payload in table.views:
        assert "KD" not in json.dumps(payload)


def test_a_misread_from_a_shoe_that_does_not_say_where_it_fell_always_stops_the_deal(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C", "3C")
    table.controller.on_alarm(ShoeAlarm(shoe_id=SHOE, boot_id="b1", kind="misread", ts="t", video_tc="t"))
    assert table.controller.paused.startswith("misread")


def test_a_step_that_fails_is_not_retried_before_a_second(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def refuse(table_id: str) -> Applied:
        calls.append(table_id)
        raise RoundError(f"table {table_id!r} cannot open a round")

    monkeypatch.setattr(table.service, "open", refuse)
    table.tick(seconds=0)
    for _ in range(10):
        table.tick(seconds=0.05)
    assert calls == ["t1"]
    assert table.controller.next_deadline() == table.clock.now() - timedelta(seconds=0.5) + timedelta(seconds=1)
    table.tick(seconds=0.5)
    assert calls == ["t1", "t1"]


def test_an_alert_that_named_a_card_is_dropped_once_a_copy_of_it_is_dealt_face_down(table: Table) -> None:
    """A card refused while no round wanted it is named (it is in no hand); the next deck's copy of it dealt as the
    banker's face-down card must not be named by that alert any more (the simulation found it across two decks)."""
    table.scan("KD")  # no round yet: refused, named
    assert table.alerts()[-1].startswith("card KD scanned while no card is expected")
    for card in DECK:  # the rest of the deck burned: a whole deck, then the next
        if card != "KD":
            table.controller.on_shoe(table.message(card, burn=True))
    table.new_deck()
    table.open_with_bets()
    table.views.clear()
    table.scan("2C", "3C", "4C", "5C", "6C", "7C", "8C", "KD")  # the new deck's KD: the banker's second card
    current = table.controller.current
    assert current is not None and "KD" in {str(card) for card in current.hidden}
    assert not any("KD" in message for message in table.alerts())
    assert "KD" not in json.dumps(table.views[-1][1]) and "KD" not in json.dumps(table.controller.dealer_view())


def test_a_duplicate_of_the_face_down_card_is_refused_without_naming_it(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C", "3C", "4C", "5C", "6C", "7C", "8C", "KD")  # KD: the banker's second card, face down
    table.scan("KD")
    assert table.alerts()[-1] == "a face-down card was already dealt from this deck"
    for _view, payload in table.views:
        assert "KD" not in json.dumps(payload)


def test_a_misread_stops_the_deal_until_the_card_is_scanned_again(table: Table) -> None:
    table.open_with_bets()
    alarm = ShoeAlarm(shoe_id=SHOE, boot_id="b1", kind="misread", text="card not read", ts="t", video_tc="00:00:01:00")
    table.controller.on_alarm(alarm)
    assert table.controller.paused.startswith("misread") and table.views[-1][1]["paused"]
    table.scan("QS")
    assert table.controller.paused == "" and [str(c) for c in engine_of(table.controller).cards] == ["QS"]  # type: ignore[union-attr]


def test_decision_windows_time_out_seat_by_seat_and_the_round_settles_in_the_ledger(table: Table) -> None:
    table.open_with_bets()
    # A: 2+3=5, B: 4+5=9 (Pok), C: 6+7=3, banker: 8+9=7 (face up 8: insurance is offered)
    table.scan("2H", "4H", "6H", "8D", "3H", "5H", "7H", "9C")
    table.tick(seconds=5)  # the insurance window ends
    expecting = engine_of(table.controller).expecting  # type: ignore[union-attr]
    assert isinstance(expecting, AwaitingDecision) and expecting.seat is Position.A
    table.tick(seconds=5)  # ana's window ends: her threshold (default 4) says 5 stands
    assert table.controller.counters["decision_timeouts"] == 1
    table.tick(seconds=0)  # seat C has no player-side bettor: decided at once by the table default
    current = table.controller.current
    assert current is not None
    while isinstance(engine_of(table.controller).expecting, AwaitingCard):  # the banker may draw
        table.scan("9S")
        current = table.controller.current
        assert current is not None
    assert current.phase == Phase.SETTLED and engine_of(table.controller).result is not None
    nets = engine_of(table.controller).result.player_nets()
    assert table.wallets.balance("ana")["balance"] == 10_000 + nets["ana"]
    assert table.wallets.balance("binh")["balance"] == 10_000 + nets["binh"]
    # the controller followed its own commands without re-reading: its copy is what the database holds
    with table.service.sessions() as session:
        stored = session.get(Round, current.round_id)
        assert stored is not None
        assert (current.log_length, current.window_closes_at) == (stored.log_length, stored.window_closes_at)
        assert current.finished_at is not None and list(current.cards) == load(session, stored, POKDENG).cards


def test_a_players_recall_of_an_ended_round_has_its_burn_cards_and_a_voids_reason(table: Table) -> None:
    round_id = table.open_with_bets()
    table.scan("2H", "4H")
    table.controller.on_shoe(table.message("JD", burn=True))  # burned while the round is dealt
    table.controller.on_shoe(table.message("QH", shoe="t2-shoe"))  # maybe t2's face-down card: never named
    table.scan("6H", "8D", "3H", "5H", "7H", "9C")
    assert queries.round_detail(table.service, "ana", round_id)["burns"] == []  # not while it is being dealt
    live = audit.round_audit(table.service, round_id)  # the operator's record, while the round is dealt
    assert [(row["card"], row["disposition"]) for row in live["shoe"]] == [
        ("2H", "dealt"), ("4H", "dealt"), (None, "burn"), (None, "refused"), ("6H", "dealt"), ("8D", "dealt"),
        ("3H", "dealt"), ("5H", "dealt"), ("7H", "dealt"), (None, "dealt"),  # 9C: the banker's face-down card
    ]  # fmt: skip
    assert "9C" not in json.dumps(live) and "QH" not in json.dumps(live) and "JD" not in json.dumps(live)
    first = live["shoe"][0]  # the evidence of each read: its source, confidence and the device's raw bytes
    assert (first["source"], first["confidence"], first["raw"]) == ("serial", 1.0, "2H")
    assert [(c["index"], c["card"], c["position"]) for c in live["cards"]] == [
        (0, "2H", "A"), (1, "4H", "B"), (2, "6H", "C"), (3, "8D", "banker"),
        (4, "3H", "A"), (5, "5H", "B"), (6, "7H", "C"), (7, None, None),
    ]  # fmt: skip
    table.clock.advance(seconds=1)
    table.service.void(round_id, "dealing error on the video", "pit-boss")
    table.clock.advance(seconds=1)
    table.tick(seconds=0)
    table.controller.on_shoe(table.message("QD", burn=True))  # after the round: not part of it
    recall = queries.round_detail(table.service, "ana", round_id)
    assert recall["burns"] == [{"card": "JD", "video_tc": "00:00:00:00"}]
    assert recall["void_reason"] == "dealing error on the video" and recall["phase"] == "void"
    ended = audit.round_audit(table.service, round_id)
    assert ended["cards"][7] == {"index": 7, "card": "9C", "position": "banker"}
    assert "9C" in json.dumps(ended) and "JD" in json.dumps(ended)
    assert "QH" not in json.dumps(ended)  # another shoe's card stays unnamed, its raw bytes too


def test_the_next_deadline_is_the_open_window_or_the_end_of_the_result_pause(table: Table) -> None:
    assert table.controller.next_deadline() == DUE  # no round yet: open one now
    table.tick(seconds=0)
    current = table.controller.current
    assert current is not None and table.controller.next_deadline() == aware(
        current.window_closes_at
    )  # the betting window
    table.tick(seconds=10)  # nobody bet: betting closes, the deal waits for cards (nothing timed)
    assert table.controller.next_deadline() is None
    table.scan("2H", "4H", "6H", "8D")  # banker 8 up: the insurance window opens when the second cards are in
    table.scan("3H", "5H", "7H", "9C")
    current = table.controller.current
    assert current is not None and current.phase == Phase.INSURANCE and current.window_closes_at is not None
    assert table.controller.next_deadline() == aware(current.window_closes_at)
    table.tick(seconds=5)  # insurance closes; no bettors: every seat is decided at once
    draw_thirds(table)
    current = table.controller.current
    assert current is not None and engine_of(table.controller).result is not None
    assert table.controller.next_deadline() == aware(current.finished_at) + timedelta(seconds=1)  # type: ignore[arg-type]
    table.controller.settings = ControllerSettings(SHOE, auto_open=False)
    assert table.controller.next_deadline() is None  # an operator opens the rounds


def draw_thirds(table: Table) -> None:
    thirds = iter(["9S", "TS", "JS"])
    while table.controller.current and isinstance(engine_of(table.controller).expecting, AwaitingCard):
        table.scan(next(thirds))  # third cards: seat C (3 points) draws by the table default, the banker may


def test_a_tables_own_result_pause_keeps_the_result_up_that_long_from_its_next_round(table: Table) -> None:
    table.tick(seconds=0)  # round 1 opens before the change: it keeps the controller's pause (1 s)
    display.change_display(table.service, "t1", result_pause_ms=8_000)
    table.tick(seconds=10)
    table.scan("2H", "4H", "6H", "8D", "3H", "5H", "7H", "9C")
    table.tick(seconds=5)
    draw_thirds(table)
    first = table.controller.current
    assert first is not None and first.result_pause_ms is None and first.finished_at is not None
    table.tick(seconds=1)  # the controller's own pause: round 2 opens, under the table's new setting
    second = table.controller.current
    assert second is not None and second.round_id != first.round_id and second.result_pause_ms == 8_000
    table.tick(seconds=10)
    table.scan("2S", "4S", "6S", "8C", "3S", "5S", "7S", "9D")
    table.tick(seconds=5)
    draw_thirds(table)
    second = table.controller.current
    assert second is not None and second.finished_at is not None
    assert table.controller.next_deadline() == aware(second.finished_at) + timedelta(seconds=8)
    table.tick(seconds=7.9)
    assert table.controller.current is not None and table.controller.current.round_id == second.round_id  # still up
    table.tick(seconds=0.1)
    assert table.controller.current is not None and table.controller.current.round_id != second.round_id


def test_no_round_opens_when_the_deck_cannot_finish_it_until_a_new_deck(table: Table) -> None:
    deck = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]
    for card in deck[:41]:  # 11 left: fewer than a round may need
        table.controller.on_shoe(table.message(card, burn=True))
    assert table.controller.next_deadline() == DUE  # the dealer is to be told now (a controller of many tables
    table.tick(seconds=0)  # ticks a table only at its deadline)
    assert table.controller.current is None
    assert table.alerts()[-1] == "11 cards left: run them through the shoe as burns, then load a new deck"
    assert table.controller.next_deadline() is None  # told: the new deck's message wakes the table
    for card in deck[41:]:  # the dealer runs the rest of the deck through the shoe as burns, then loads a new one
        table.controller.on_shoe(table.message(card, burn=True))
    table.new_deck()
    table.tick(seconds=0)
    assert table.controller.current is not None and table.controller.current.phase == Phase.BETTING
    assert table.controller.deck.remaining == 52
    table.tick(seconds=10)  # a round with no wagers: betting closes, the deal begins
    for card in deck[:45]:  # the next deck runs low too: the dealer is told again
        table.controller.on_shoe(table.message(card, burn=True))
    table.controller.current = None
    table.controller.tick(table.clock.advance(seconds=1))  # no re-read: keep the test's "no current round"
    assert table.alerts()[-1] == "7 cards left: run them through the shoe as burns, then load a new deck"
    assert table.controller.counters["alerts_deck_low"] == 2


def test_a_deck_run_out_whole_is_reported_whole_and_the_table_deals_on(table: Table) -> None:
    """Every card that left the shoe counts, a refused one too (scanned while no round wanted it)."""
    table.scan(DECK[0])  # no round yet: refused, but it left the shoe
    for card in DECK[1:]:
        table.controller.on_shoe(table.message(card, burn=True))
    table.new_deck()
    assert [(r["status"], r["seen"], r["missing"], r["doubled"]) for r in reports(table)] == [("ok", 52, [], [])]
    table.tick(seconds=0)
    assert table.controller.current is not None and table.controller.current.phase == Phase.BETTING


def test_a_deck_missing_a_card_holds_the_table_until_an_operator_acknowledges(table: Table) -> None:
    for card in DECK[:51]:
        table.controller.on_shoe(table.message(card, burn=True))
    table.new_deck()  # KC never left the shoe
    assert table.alerts()[-1].startswith("deck not whole: 1 missing, 0 seen twice: the table is held")
    assert table.views[-1][1]["held"] == table.alerts()[-1]  # the console says why it stops
    [report] = reports(table)
    assert (report["status"], report["seen"], report["missing"], report["doubled"]) == ("held", 51, ["KC"], [])
    assert (report["missing_count"], report["doubled_count"]) == (1, 0)
    table.tick(seconds=5)
    assert table.controller.current is None, "no round opens on a held table"
    with pytest.raises(TableHeldError, match=f"deck report #{report['id']}"):
        table.service.open_round("t1")  # nor by hand
    table.controller = table.new_controller()  # a restart remembers the hold
    assert table.controller.held == report["id"] and "1 missing" in table.controller.held_why
    with pytest.raises(RoundError, match="say what the count found"):
        decks.acknowledge(table.service, report["id"], " ", Origin("pit", "10.0.0.9"))
    acknowledged = decks.acknowledge(table.service, report["id"], "KC found under the shoe", Origin("pit", "10.0.0.9"))
    assert acknowledged["acknowledged"] | {"at": None} == {
        "by": "pit", "from": "10.0.0.9", "note": "KC found under the shoe", "at": None
    }  # fmt: skip
    with pytest.raises(RoundError, match="nothing to acknowledge"):
        decks.acknowledge(table.service, report["id"], "again", Origin("pit", "10.0.0.9"))
    assert table.controller.next_deadline() is not None  # it looks again for the acknowledgement by itself
    table.tick(seconds=2)
    assert table.controller.current is not None and table.controller.current.phase == Phase.BETTING
    assert table.alerts()[-2:] == [
        f"deck report #{report['id']} acknowledged by pit",
        "every deck report acknowledged: rounds resume",
    ]


def test_a_table_held_by_two_decks_deals_again_only_when_both_are_acknowledged(table: Table) -> None:
    for _deck in range(2):  # two decks in a row end a card short
        for card in DECK[:51]:
            table.controller.on_shoe(table.message(card, burn=True))
        table.new_deck()
    first, second = sorted(report["id"] for report in reports(table))
    pit = Origin("pit", "10.0.0.9")
    decks.acknowledge(table.service, second, "KC found", pit)
    table.tick(seconds=3)
    assert table.controller.current is None and table.controller.held == first
    assert f"deck report #{first}" in table.views[-1][1]["held"]
    decks.acknowledge(table.service, first, "KC found too", pit)
    table.tick(seconds=3)
    assert table.controller.current is not None and table.controller.held is None


def test_a_card_seen_twice_holds_the_table_and_a_face_down_one_is_never_named(table: Table) -> None:
    table.open_with_bets()
    table.scan("2H", "4H", "6H", "8D", "3H", "5H", "7H", "9C")  # 9C: the banker's face-down card
    table.scan("9C")  # scanned again: a second 9C, or the same one put back — a human must look
    table.new_deck()  # mid-round: the old deck is reconciled while 9C is still face down
    # the dealer is told counts, never names (the 44 missing are the complement of the 8 dealt: naming them names 9C)
    assert table.alerts()[-1].startswith("deck not whole: 44 missing, 1 seen twice: the table is held")
    assert table.views[-1][1]["held"] == table.alerts()[-1] and "9C" not in json.dumps(table.views)
    [report] = reports(table)
    assert (report["status"], report["seen"], report["missing"], report["doubled"]) == ("held", 9, None, None)
    assert (report["missing_count"], report["doubled_count"]) == (44, 1)
    assert "9C" not in json.dumps(reports(table))
    table.service.void(table.controller.current.round_id, "test", "pit")  # type: ignore[union-attr]
    [ended] = reports(table)  # the round over, the report names its cards
    assert ended["doubled"] == ["9C"] and len(ended["missing"]) == 44


def test_a_camera_cards_crop_is_kept_and_shown_only_once_its_card_may_be(table: Table) -> None:
    table.open_with_bets()
    crops = {}
    for code in ("2H", "4H", "6H", "8D", "3H", "5H", "7H", "9C"):  # 9C: the banker's face-down card
        crops[code] = cv2.imencode(".jpg", np.full((60, 40, 3), len(crops) * 20, np.uint8))[1].tobytes()
        table.controller.on_shoe(table.message(code, crop=crops[code]))
    live = audit.round_audit(table.service, table.controller.current.round_id)  # type: ignore[union-attr]
    urls = [row["crop_url"] for row in live["shoe"]]
    assert all(urls[:7]) and urls[7] is None  # the face-down card's crop is not offered while it is down
    ids = [int(url.rsplit("/", 1)[1]) for url in urls[:7]]
    assert [audit.evidence(table.service, i) for i in ids] == [
        crops[c] for c in ("2H", "4H", "6H", "8D", "3H", "5H", "7H")
    ]
    with table.service.sessions() as session:
        down = session.scalar(select(ShoeJournal.id).where(ShoeJournal.card == "9C"))
    assert down is not None
    with pytest.raises(RoundError, match="may not be shown now"):
        audit.evidence(table.service, down)
    table.service.void(live["round_id"], "test", "pit")
    assert audit.evidence(table.service, down) == crops["9C"]  # the round ended: everything is shown


def test_a_forgery_in_the_shoes_name_does_not_make_a_restarted_controller_skip_the_real_message(
    table: Table,
) -> None:
    """Found by the simulation: a forged card copying the real shoe's next stamp was journaled (refused), and after a
    restart the controller resumed the feed after it — the real card with that seq was never taken."""
    table.scan("2H")
    forged = table.message("3H")  # seq 2, as the real shoe's next message will be
    table.controller.on_untrusted(forged, "signed with a key this table does not hold")
    table.seq -= 1
    assert table.controller.next_seq() == 2
    assert table.new_controller().next_seq() == 2, "the real message 2 is still wanted after a restart"


def reports(table: Table) -> list[dict[str, Any]]:
    return decks.reports(table.service, decks.DecksQuery(table="t1"))


def test_a_restarted_controller_shows_the_rounds_refusals_again_without_naming_a_face_down_card(table: Table) -> None:
    """Found by the simulation: a dealer whose card was refused just before a restart lost the alert, and so
    never knew to deal another — the round waited for ever."""
    table.open_with_bets()
    table.scan("2C", "2C")  # the same card again: refused, named
    table.clock.advance(seconds=1)
    table.controller.on_shoe(table.message("QS", shoe="t2-shoe"))  # maybe t2's face-down card: not named
    before = [(a["kind"], a["message"], a["card"]) for a in table.views[-1][1]["alerts"]]
    table.views.clear()
    table.new_controller()
    dealer = [payload for view, payload in table.views if view == "dealer"][-1]
    assert [(a["kind"], a["message"], a["card"]) for a in dealer["alerts"]] == before
    assert before == [
        ("refused_card", "card 2C was already dealt from this deck", "2C"),
        ("refused_card", "a card from shoe t2-shoe, not this table's shoe", None),
    ]
    assert dealer["alerts"][0]["at"] < dealer["alerts"][1]["at"]  # when each was refused, on the table's clock


def test_a_restarted_controller_resumes_the_round_the_deck_and_the_shoe_feed(table: Table) -> None:
    round_id = table.open_with_bets()
    table.scan("2H", "4H", "6H")
    restarted = table.new_controller()
    assert restarted.current is not None and restarted.current.round_id == round_id
    assert [str(c) for c in engine_of(restarted).cards] == ["2H", "4H", "6H"]
    assert restarted.deck.remaining == 49 and restarted.next_seq() == table.seq + 1
    # another shoe's new deck was refused: it does not start this table's deck over after a restart either
    other = ShoeNewDeck(shoe_id="t2-shoe", boot_id="b9", seq=1, ts="t", video_tc="00:00:00:00", deck=1, raw="")
    restarted.on_shoe(other)
    assert table.new_controller().deck.remaining == 49
    # a card and its journal entry commit together: when the entry cannot be written, the card is not dealt
    table.seq += 1
    with table.service.sessions.begin() as session:
        session.add(
            ShoeJournal(
                table_id="t1", shoe_id=SHOE, boot_id="b1", seq=table.seq, kind="card", card="8H", burn=False,
                disposition="dealt", reason="", round_id=round_id, video_tc="",
            )
        )  # fmt: skip
    restarted.on_shoe(table.message("KS", seq=table.seq))
    assert [str(c) for c in engine_of(restarted).cards] == ["2H", "4H", "6H"]
    with table.service.sessions() as session:
        assert [str(c) for c in load(session, session.get(Round, round_id), POKDENG).cards] == ["2H", "4H", "6H"]  # type: ignore[arg-type]


# ---- the shoe's runs: a restart without its outbox, messages out of its sequence -----------------------------------


def run_message(card: str, seq: int, boot: str, minute: int) -> ShoeCard:
    """A card of a run (boot) of the shoe's daemon, stamped ``minute`` minutes into the test's hour."""
    return ShoeCard(
        shoe_id=SHOE, boot_id=boot, seq=seq, ts=f"2026-12-03T00:{minute:02d}:00+00:00", video_tc="00:00:00:00",
        deck=0, card=card, source="serial", confidence=1.0, raw=card,
    )  # fmt: skip


def test_a_shoe_restarted_without_its_outbox_is_said_on_the_console_and_a_restart_resumes_its_new_run(
    table: Table,
) -> None:
    table.open_with_bets()
    table.scan("2C", "3C")  # run b1: seq 1, 2
    table.controller.on_shoe(run_message("4C", 1, "b2", minute=1))  # a new run, counting from 1 again
    assert [(a.kind, a.message) for a in table.controller.alerts] == [
        ("shoe_restarted", "shoe t1-shoe restarted; its sequence starts again")
    ]
    assert [payload for view, payload in table.views if view == "dealer"][-1]["alerts"][-1]["kind"] == "shoe_restarted"
    assert [str(c) for c in engine_of(table.controller).cards] == ["2C", "3C", "4C"]
    start = table.new_controller().feed_start()  # the journal says which run it took last, and its newest stamp
    assert (start.next_seq, start.boot, start.newest) == (2, "b2", datetime(2026, 12, 3, 0, 1, tzinfo=UTC))


def test_a_message_out_of_the_shoes_sequence_is_journaled_and_raised_unless_it_was_taken_before(table: Table) -> None:
    table.open_with_bets()
    table.scan("2C")
    table.controller.on_out_of_sequence(table.message("2C", seq=1), "seq 1 is behind the feed")  # taken before
    assert table.journal() == [("2C", "dealt")] and table.alerts() == []
    assert table.controller.counters["redelivered"] == 1
    old = run_message("9D", 7, "b0", minute=0)  # a card of an earlier run that was never taken
    why = "a message of another run of the shoe, not after the newest taken"
    table.controller.on_out_of_sequence(old, why)
    assert table.journal() == [("2C", "dealt"), ("9D", "refused")]
    assert [(a.kind, a.message, a.card) for a in table.controller.alerts] == [
        ("refused_card", f"a card of shoe t1-shoe refused: {why}", None)  # never named: it may be a face-down card
    ]
    table.controller.on_out_of_sequence(old, why)  # the same message again: journaled already, said already
    assert len(table.journal()) == 2 and len(table.controller.alerts) == 1
    assert table.new_controller().feed_start().next_seq == 2  # journaled apart: the feed resumes after seq 1


def burn_to_low(table: Table) -> None:
    """Burn-marked cards until the deck cannot deal another round (11 left; a Pok Deng round may take 12)."""
    for code in DECK[:41]:
        table.controller.on_shoe(table.message(code, burn=True))


ASKED = "11 cards left: run them through the shoe as burns, then load a new deck"


def test_after_the_console_asks_for_the_rest_of_the_deck_as_burns_the_cards_before_the_new_deck_are_burns(
    table: Table,
) -> None:
    """Found in review: the dealer did as told, and each card (the line dialect has no burn marker) was refused as
    scanned while no card was expected — 2 to 10 refusals per deck."""
    burn_to_low(table)
    table.tick(seconds=0)
    assert table.controller.current is None and table.alerts() == [ASKED]
    table.scan(*DECK[41:])  # plain cards: the shoe cannot say they are burns
    assert table.journal()[41:] == [(code, "burn") for code in DECK[41:]]
    assert table.alerts() == [ASKED]  # nothing refused
    table.new_deck()
    assert [(r["status"], r["seen"], r["missing"], r["doubled"]) for r in reports(table)] == [("ok", 52, [], [])]
    table.scan("AS")  # no longer asked for: a card with no round is refused again
    assert table.journal()[-1] == ("AS", "refused")


def test_a_controller_restarted_while_the_end_of_the_deck_is_burned_asks_again_and_takes_the_burns(
    table: Table,
) -> None:
    burn_to_low(table)
    table.tick(seconds=0)
    restarted = table.new_controller()
    assert [alert.message for alert in restarted.alerts] == [ASKED]  # the console says it again at once
    restarted.on_shoe(table.message(DECK[41]))
    assert table.journal()[-1] == (DECK[41], "burn")


def test_a_card_entered_by_hand_counts_in_the_deck_and_its_twin_from_the_shoe_is_refused(table: Table) -> None:
    from services.rounds.players import PlayerService
    from services.rounds.proposals import Proposals

    players = PlayerService(table.service.sessions, table.clock)
    for operator in ("op", "op2"):
        players.register(operator, "operator")
    table.service.set_manual_cards("t1", True)
    round_id = table.open_with_bets()
    proposals = Proposals(table.service)
    proposal = proposals.propose_card(round_id, Card.from_code("5H"), "reader fault", Origin("op", "ops page"))
    proposals.approve(proposal["id"], Origin("op2", "ops page"))
    table.tick(seconds=0)  # the controller re-reads the round the API moved
    assert table.controller.deck.has_seen(Card.from_code("5H"))
    assert table.controller.current is not None and table.controller.current.cards == (Card.from_code("5H"),)
    table.scan("5H")  # the same card from the shoe: refused as already dealt, never dealt twice
    assert "card 5H was already dealt from this deck" in table.alerts()[-1]
    table.scan("2D")
    assert table.controller.current.cards == (Card.from_code("5H"), Card.from_code("2D"))
    restarted = table.new_controller()  # rebuilt from the journal: the card by hand still counts
    assert restarted.deck.has_seen(Card.from_code("5H")) and restarted.deck.remaining == 52 - 2
