"""The cut card of an 8-deck shoe: read from the serial line in either dialect, it makes the coup being dealt the
shoe's last — no coup opens after it until a new shoe is loaded — and the cards behind it are not missing when the
shoe is reconciled (a card seen too often still is). A controller restarted after it still knows."""

from __future__ import annotations

from sqlalchemy import Engine, select

from hardware.serial_shoe import CutCard, parser_for
from hardware.sim.serial_shoe import cut_frame
from services.bus.messages import ShoeCutCard
from services.controller.table import ControllerSettings, TableController
from services.journal.models import DeckReport, ShoeJournal
from tests.coups.test_live_tables import Shoe, Table


def cut(shoe: Shoe) -> None:
    shoe.controller.on_shoe(ShoeCutCard(**shoe.stamp(), raw="CUT"))


def test_both_dialects_read_the_cut_card() -> None:
    for dialect in ("line", "monitor"):
        [event] = parser_for(dialect).feed(cut_frame(dialect))
        assert isinstance(event, CutCard), dialect


def test_the_coup_dealt_when_the_cut_card_comes_out_is_the_shoes_last(database: Engine) -> None:
    table = Table(database, "B1", "baccarat", {})
    table.mid_coup()
    cut(table.shoe)  # out of the shoe mid-coup: this coup is the last
    assert table.controller.alerts[-1].kind == "cut_card"
    table.shoe.deal("3H KD")  # Player 5, Banker 9, a natural: the coup ends
    table.controller.tick(table.clock.advance(seconds=5))
    assert table.controller.current is not None and table.controller.current.phase == "settled"  # none opened
    assert table.controller.alerts[-1].message == "the shoe is over (its cut card came out): load a new shoe"

    restarted = TableController("B1", table.service, ControllerSettings("B1-shoe", result_pause_ms=0))
    restarted.recover()
    restarted.tick(table.clock.advance(seconds=5))
    assert restarted.current is not None and restarted.current.phase == "settled"  # still none after a restart

    table.controller = restarted
    table.shoe.controller = restarted
    table.shoe.new_shoe()  # the rest of the shoe is never dealt: no card is missing, the table is not held
    with table.service.sessions() as session:
        report = session.scalars(select(DeckReport).order_by(DeckReport.id.desc())).first()
        assert report is not None and report.status == "ok" and len(report.missing.split()) == 416 - 6
        kinds = session.scalars(select(ShoeJournal.disposition).order_by(ShoeJournal.id)).all()
    assert "cut" in kinds
    table.shoe.deal("5C 2D 3D 4D 5D 6D")  # the new shoe's burn: a 5 and five more
    assert table.open()  # a new shoe: coups again, and its roads start empty
    assert table.public()["roads"]["coups"] == 0


def test_a_card_seen_too_often_still_holds_a_cut_shoe(database: Engine) -> None:
    table = Table(database, "DT1", "dragontiger", {"decks": 1})
    table.shoe.new_shoe()
    table.shoe.deal("2C 3C 4C")  # the burn
    table.open()
    table.close_betting()
    cut(table.shoe)
    table.shoe.deal("AS KS")
    table.controller.deck.note_refused(table.controller.deck._order[0])  # a 2♣ scanned again and refused
    table.shoe.new_shoe()
    with table.service.sessions() as session:
        report = session.scalars(select(DeckReport)).one()
    assert report.status == "held" and report.doubled == "2C"


def test_a_cut_card_between_coups_makes_the_next_the_last_even_across_a_restart_and_a_second_report(
    database: Engine,
) -> None:
    table = Table(database, "B1", "baccarat", {})
    table.mid_coup()
    table.shoe.deal("3H KD")  # the coup ends
    cut(table.shoe)  # between coups: the next one is the shoe's last
    table.controller.tick(table.clock.advance(seconds=5))
    assert table.controller.current is not None and table.controller.current.phase == "betting"
    restarted = TableController("B1", table.service, ControllerSettings("B1-shoe", result_pause_ms=0))
    restarted.recover()  # a restart while the last coup takes bets: no card of it journaled yet
    table.controller, table.shoe.controller = restarted, restarted
    cut(table.shoe)  # the same cut card reported again: nothing changes
    table.close_betting()
    table.shoe.deal("4H 9S 5H KS")  # Player 9, Banker 9: a tie, natural
    assert table.public()["phase"] == "settled"
    table.controller.tick(table.clock.advance(seconds=5))
    assert table.controller.current.phase == "settled"  # no coup opens after the shoe's last
    assert table.controller.alerts[-1].kind == "shoe_end"
    assert table.controller.next_deadline() is None  # nothing to wake for until a new shoe
    with table.service.sessions() as session:
        kinds = session.scalars(
            select(ShoeJournal.disposition).where(ShoeJournal.disposition.like("cut%")).order_by(ShoeJournal.id)
        ).all()
    assert kinds == ["cut_between", "cut_again"]
