"""The burn at a new shoe of a baccarat table: the console asks for the first card face up, then as many face down as
it says (tens and faces 10); every card the shoe reads until then is a burn, journaled as one; only then does the coup
take a card. A controller restarted mid-burn goes on from the journal; a Pok Deng table burns nothing."""

from __future__ import annotations

from sqlalchemy import Engine, select

from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.controller.table import ControllerSettings, TableController
from services.games.coup_game import burn_count
from services.journal.models import ShoeJournal
from services.rounds import decks
from services.rounds.proposals import Origin
from services.rounds.returns import HOUSE_SETTINGS
from tests.coups.test_live_tables import Shoe, Table


def burns(table: Table) -> list[tuple[str, str]]:
    with table.service.sessions() as session:
        burned = select(ShoeJournal.card, ShoeJournal.reason).where(ShoeJournal.disposition == "burn")
        rows = session.execute(burned.order_by(ShoeJournal.id)).all()
    return [(card, reason) for card, reason in rows]


def test_the_burn_counts_the_first_card_and_comes_before_the_coup(database: Engine) -> None:
    assert [burn_count(Card.from_code(code)) for code in ("AS", "7H", "9D", "TC", "JS", "QH", "KD")] == [1, 7, 9] + [
        10
    ] * 4
    table = Table(database, "B1", "baccarat", {})
    table.shoe.new_shoe()
    console = table.controller.dealer_view()
    assert console["waiting_for"] == "the burn: turn the new shoe's first card face up"
    assert console["next_card"] == {"position": "burn", "index": 0, "face_up": True, "burn": True}
    table.open()  # betting opens while the dealer burns
    table.shoe.deal("3H")
    assert table.controller.dealer_view()["waiting_for"] == "the burn: 3 more card(s) face down (0 of 3 burned)"
    table.shoe.deal("KS")

    restarted = TableController("B1", table.service, ControllerSettings("B1-shoe", result_pause_ms=0))
    restarted.recover()  # a restart mid-burn: the journal says where it stands
    assert restarted.dealer_view()["waiting_for"] == "the burn: 2 more card(s) face down (1 of 3 burned)"
    table.controller = restarted
    table.shoe = Shoe(restarted, "B1-shoe")
    table.shoe.seq = 3
    table.close_betting()
    table.shoe.deal("9C 8D")  # read while the coup waits: still the burn's
    assert [reason for _card, reason in burns(table)] == [
        "the new shoe's first card, turned face up: 3 to burn",
        "burned at the new shoe (1 of 3)",
        "burned at the new shoe (2 of 3)",
        "burned at the new shoe (3 of 3)",
    ]
    console = table.controller.dealer_view()
    assert console["waiting_for"] == "the Player's first card" and console["next_card"]["position"] == "player"
    assert table.controller.alerts[-1].kind == "burn_done"
    table.shoe.deal("4H")
    assert table.public()["hands"]["player"]["cards"] == ["4H"]
    assert table.controller.deck.remaining == 416 - 5


def test_a_pok_deng_table_burns_nothing_at_a_new_deck(database: Engine) -> None:
    table = Table(database, "T1", "pokdeng", HOUSE_SETTINGS)
    table.shoe.new_shoe()
    assert "burn" not in table.controller.dealer_view().get("next_card", {})
    assert table.controller.burn_left is None and STUDIO_GAMES.game("pokdeng").burn({}) is None


def test_a_new_shoe_loaded_mid_coup_lets_the_coup_finish_then_asks_for_the_burn(database: Engine) -> None:
    table = Table(database, "B1", "baccarat", {})
    table.mid_coup()
    table.shoe.new_shoe()  # a slip: a new shoe in the middle of the coup
    [report] = decks.reports(table.service, decks.DecksQuery(table="B1", status="held"))
    decks.acknowledge(table.service, report["id"], "the old shoe's cards, counted", Origin("pit", "10.0.0.9"))
    assert table.controller.dealer_view()["waiting_for"] == "the Player's second card"  # the coup goes on first
    table.shoe.deal("3H KD")  # the coup ends (a Banker natural) from the new shoe's cards
    assert table.public()["phase"] == "settled"
    assert table.controller.dealer_view()["waiting_for"] == "the burn: turn the new shoe's first card face up"
    restarted = TableController("B1", table.service, ControllerSettings("B1-shoe", result_pause_ms=0))
    restarted.recover()  # the coup dealt across the change does not count as the burn done
    assert restarted.dealer_view()["waiting_for"] == "the burn: turn the new shoe's first card face up"
