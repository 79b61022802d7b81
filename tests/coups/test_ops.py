"""The operator's tools on a baccarat table: a settled coup corrected from the video on two operators' word (the
nets move by the difference; a correction that would change who draws is refused — void instead), a settled coup
voided on two operators' word, and the coup recalled in full with the shoe's burn and cut card beside it."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from services.bus.messages import ShoeCutCard
from services.cards import Card
from services.rounds.audit import round_audit
from services.rounds.coups import BACCARAT_ADAPTER
from services.rounds.errors import FlowChangedError, RoundError
from services.rounds.house import SpotBet
from services.rounds.players import PlayerService
from services.rounds.proposals import Origin, Proposals
from tests.coups.test_live_tables import Table

PIT, PIT2 = Origin("pit-1", "10.0.0.1"), Origin("pit-2", "10.0.0.2")


def coup(table: Table, cards: str, bets: dict[str, list[SpotBet]]) -> str:
    round_id = table.open()
    for player, slip in bets.items():
        BACCARAT_ADAPTER.place_bets(table.service, player, round_id, slip, f"{player}-{round_id}")
    table.close_betting()
    table.shoe.deal(cards)
    assert table.public()["phase"] == "settled"
    return round_id


@pytest.fixture
def table(database: Engine) -> Table:
    table = Table(database, "B1", "baccarat", {})
    players = PlayerService(table.service.sessions, table.clock)
    for operator in ("pit-1", "pit-2"):
        players.register(operator, "operator")
    table.shoe.new_shoe()
    table.shoe.deal("AS 2S")  # the burn
    return table


def test_a_settled_coup_is_corrected_from_the_video_on_two_operators_word(table: Table) -> None:
    bets = {"ana": [SpotBet("banker", "", 1_000)], "binh": [SpotBet("player", "", 500)]}
    round_id = coup(table, "9H 7S 9C KD", bets)  # Player 8 (natural), Banker 7: the Player wins
    assert table.money("ana") == (9_000, 0) and table.money("binh") == (10_500, 0)
    proposals = Proposals(table.service)
    proposal = proposals.propose_correction(round_id, {1: Card.from_code("8S")}, "cam 2 00:41", PIT)  # Banker 8: a tie
    assert proposal["preview"]["players"]["ana"] == {"before": -1_000, "after": 0, "adjustment": 1_000}
    with pytest.raises(RoundError, match="made by pit-1: another operator decides it"):
        proposals.approve(proposal["id"], PIT)  # the proposer alone cannot
    proposals.approve(proposal["id"], PIT2)
    assert table.money("ana") == (10_000, 0) and table.money("binh") == (10_000, 0)  # a tie: both bets push
    no_natural = {1: Card.from_code("2S"), 2: Card.from_code("2C")}  # Player 9H 2C = 1 would draw a third card
    with pytest.raises(FlowChangedError, match="void it"):
        proposals.propose_correction(round_id, no_natural, "cam 2 00:41", PIT)


def test_a_settled_coup_is_voided_on_two_operators_word_and_recalled_in_full(table: Table) -> None:
    round_id = table.open()
    BACCARAT_ADAPTER.place_bets(table.service, "ana", round_id, [SpotBet("tie", "", 200)], "a1")
    table.close_betting()
    table.shoe.deal("4H 5S")
    table.controller.on_shoe(ShoeCutCard(**table.shoe.stamp(), raw="CUT"))
    table.shoe.deal("3D 2C")  # Player 7, Banker 7: a tie, 8:1
    assert table.money("ana") == (11_600, 0)
    proposals = Proposals(table.service)
    proposal = proposals.propose_void(round_id, "the wrong shoe was on the table", PIT)
    proposals.approve(proposal["id"], PIT2)
    assert table.money("ana") == (10_000, 0)
    recalled = round_audit(table.service, round_id)
    assert [(w["player"], w["side"], w["stake"]) for w in recalled["wagers"]] == [("ana", "tie", 200)]
    shoe = [(entry["disposition"], entry["card"]) for entry in recalled["shoe"]]
    assert ("cut", None) in shoe and [card for what, card in shoe if what == "dealt"] == ["4H", "5S", "3D", "2C"]


def test_a_coup_voided_after_it_settled_leaves_the_next_coups_roads(table: Table) -> None:
    round_id = coup(table, "9H 7S 9C KD", {"ana": [SpotBet("player", "", 100)]})
    proposals = Proposals(table.service)
    proposals.approve(proposals.propose_void(round_id, "the wrong shoe was on the table", PIT)["id"], PIT2)
    table.open()
    assert table.public()["roads"]["coups"] == 0 and table.public()["roads"]["bead_plate"] == []
