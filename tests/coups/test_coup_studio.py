"""A baccarat table end to end from a pty shoe at 8 decks: the studio's production assembly (broker, database, shoe
daemon reading a serial line, controller, ledger), the test as the dealer. A coup with a card repeated within it is
dealt (two of the shoe's eight copies), its cut card comes out of the shoe, it settles with the Banker's commission,
and every card and the cut card are in the journal."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from services.journal.models import ShoeJournal
from services.rounds import queries
from services.rounds.coups import BaccaratSlipIn
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from tests.support import wait_until


@pytest.fixture
def studio(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    table = f"b{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(), coup_tables=((table, "baccarat"),), coup_settings={"baccarat": {"betting_ms": 4_000}},
        run_dir=tmp_path, mqtt_url=mqtt_url, result_pause_ms=60_000, simulated_dealers=False,
    )  # fmt: skip
    with running_studio(config) as studio:
        yield studio


def state(studio: RunningStudio) -> dict[str, Any]:
    return queries.current_round(studio.service, studio.config.coup_tables[0][0])


def deal(studio: RunningStudio, code: str) -> None:
    """Deal ``code`` through the pty once the round asks for a card, and wait until the round has it."""
    table = studio.config.coup_tables[0][0]
    wait_until(lambda: state(studio).get("phase") == "dealing", 30, f"the coup to ask for a card ({code} next)")
    dealt = sum(len(hand["cards"]) for hand in state(studio)["hands"].values())
    studio.shoes[table].deal(code)
    wait_until(lambda: sum(len(h["cards"]) for h in state(studio)["hands"].values()) > dealt, 15, f"{code} dealt")


def test_a_coup_from_a_pty_shoe_of_eight_decks_with_a_card_twice_settles_and_is_journaled(
    studio: RunningStudio,
) -> None:
    table = studio.config.coup_tables[0][0]
    assert studio.controller.tables[table].deck.decks == 8
    studio.players.register("ana")
    studio.wallets.deposit("ana", 10_000, key="fund-ana", actor="test")
    wait_until(lambda: state(studio).get("phase") == "betting", 30, "betting to open")
    round_id = state(studio)["round_id"]
    slip = BaccaratSlipIn.model_validate({"bets": [{"side": "banker", "stake": 1_000}]})
    studio.service.act("ana", round_id, "bets", slip, "a1")
    for code in "2H 9S 2H".split():  # Player 2H 2H = 4, Banker 9S 9S = 8: a Banker natural, both hands pairs
        deal(studio, code)
    studio.shoes[table].cut_card()  # the cut card out of the shoe before the coup's last card: its last coup
    deal(studio, "9S")
    wait_until(lambda: state(studio).get("phase") == "settled", 15, "the coup to settle")
    result = state(studio)["result"]
    assert result["winner"] == "banker" and result["natural"] and result["player_pair"] and result["banker_pair"]
    assert studio.wallets.balance("ana")["balance"] == 10_950  # 1:1 less 5 % commission
    with studio.service.sessions() as session:
        journaled = session.execute(
            select(ShoeJournal.card, ShoeJournal.disposition).where(ShoeJournal.round_id == round_id)
            .order_by(ShoeJournal.id)
        ).all()  # fmt: skip
    assert [(card, disposition) for card, disposition in journaled] == [
        ("2H", "dealt"), ("9S", "dealt"), ("2H", "dealt"), (None, "cut"), ("9S", "dealt")
    ]  # fmt: skip
    assert studio.controller.tables[table].cut_round == round_id
