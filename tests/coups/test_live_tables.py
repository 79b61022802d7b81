"""Baccarat and Dragon Tiger tables live on the controller from an 8-deck shoe: bets on the house path, the coup dealt
as its rules draw (a card repeated within a coup is another copy of the shoe's eight), settled with commission,
the roads carried from coup to coup and reset at a new shoe; and the tables' API: the guard, the page, the slips."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from services.api.app import create_app
from services.bus.messages import ShoeCard, ShoeNewDeck
from services.catalog import STUDIO_GAMES
from services.controller.table import ControllerSettings, TableController
from services.db import session_factory
from services.ledger.wallets import WalletService
from services.rounds import decks, queries
from services.rounds.clock import ManualClock
from services.rounds.coups import BACCARAT_ADAPTER, DRAGON_TIGER_ADAPTER
from services.rounds.house import SpotBet
from services.rounds.players import PlayerService
from services.rounds.proposals import Origin
from services.rounds.service import RoundService


class Shoe:
    def __init__(self, controller: TableController, shoe_id: str) -> None:
        self.controller, self.shoe_id, self.seq = controller, shoe_id, 0

    def stamp(self) -> dict[str, Any]:
        self.seq += 1
        return {"shoe_id": self.shoe_id, "boot_id": "b", "seq": self.seq, "ts": "2026-12-06T00:00:00+00:00",
                "video_tc": "", "deck": 0}  # fmt: skip

    def deal(self, codes: str) -> None:
        for code in codes.split():
            self.controller.on_shoe(ShoeCard(**self.stamp(), card=code, source="serial", confidence=1.0, raw=code))

    def new_shoe(self) -> None:
        self.controller.on_shoe(ShoeNewDeck(**self.stamp(), raw=""))


class Table:
    def __init__(self, database: Engine, table: str, game: str, settings: dict[str, Any]) -> None:
        self.clock = ManualClock()
        self.service = RoundService(session_factory(database), self.clock, games=STUDIO_GAMES)
        self.service.create_table(table, "THB", settings, game=game)
        self.wallets = WalletService(self.service.sessions, "THB")
        for name in ("ana", "binh"):
            PlayerService(self.service.sessions, self.clock).register(name)
            self.wallets.deposit(name, 10_000, f"fund-{name}", "test")
        self.controller = TableController(table, self.service, ControllerSettings(f"{table}-shoe", result_pause_ms=0),
                                          publish=lambda *view: None)  # fmt: skip
        self.controller.recover()
        self.shoe = Shoe(self.controller, f"{table}-shoe")
        self.table = table

    def open(self) -> str:
        self.controller.tick(self.clock.advance(seconds=1))
        current = self.controller.current
        assert current is not None and current.phase == "betting", current
        return current.round_id

    def mid_coup(self) -> str:
        """A new shoe burned (an ace: one card), a coup opened and closed, and its first two cards dealt."""
        self.shoe.new_shoe()
        self.shoe.deal("AS 2S")
        round_id = self.open()
        self.close_betting()
        self.shoe.deal("2H 9D")
        return round_id

    def close_betting(self) -> None:
        self.controller.refresh()
        self.controller.tick(self.clock.advance(seconds=20))
        assert self.controller.current is not None and self.controller.current.phase == "dealing"

    def public(self) -> dict[str, Any]:
        latest = self.service.latest(self.table)
        assert latest is not None
        return latest.public

    def money(self, who: str) -> tuple[int, int]:
        balance = self.wallets.balance(who)
        return balance["balance"], balance["held"]


def test_a_baccarat_shoe_of_eight_decks_deals_settles_and_keeps_its_roads(database: Engine) -> None:
    table = Table(database, "B1", "baccarat", {})
    table.shoe.new_shoe()
    table.shoe.deal("AS 2S")  # the burn: an ace turned face up, one card burned
    assert table.controller.deck.remaining == 414
    round_id = table.open()
    BACCARAT_ADAPTER.place_bets(table.service, "ana", round_id, [SpotBet("banker", "", 1_000)], "a1")
    BACCARAT_ADAPTER.place_bets(table.service, "binh", round_id, [SpotBet("player", "", 500),
                                                                  SpotBet("player_pair", "", 100)], "b1")  # fmt: skip
    assert table.money("ana") == (9_000, 1_000)
    table.close_betting()
    assert table.public()["next"] == "the Player's first card"
    table.shoe.deal("9H 7S 9H")  # the Player's 9 of hearts twice: two of the shoe's eight copies
    assert table.public()["next"] == "the Banker's second card"
    table.shoe.deal("KD")  # Player 8 (natural), Banker 7: the Player wins
    public = table.public()
    assert public["phase"] == "settled" and public["result"]["winner"] == "player" and public["result"]["natural"]
    assert public["hands"]["player"] == {"cards": ["9H", "9H"], "total": 8}
    assert table.money("ana") == (9_000, 0) and table.money("binh") == (11_600, 0)  # the pair pays 11:1
    [seen] = queries.history(table.service, "binh", None, 10)  # the player's history reads the coup's hands
    assert seen["hands"]["player"] == {"cards": ["9H", "9H"], "total": 8}
    assert sorted((w["side"], w["stake"], w["net"]) for w in seen["wagers"]) == [("player", 500, 500),
                                                                              ("player_pair", 100, 1_100)]  # fmt: skip

    second = table.open()  # the next coup of the shoe: its roads start from the first
    assert table.public()["roads"]["bead_plate"] == [
        {"winner": "player", "player_pair": True, "banker_pair": False, "natural": True}
    ]
    BACCARAT_ADAPTER.place_bets(table.service, "ana", second, [SpotBet("banker", "", 1_000)], "a2")
    table.close_betting()
    table.shoe.deal("2C 3C 4C 6C")  # Player 6 stands, Banker 9: natural, Banker wins, 5 % commission
    assert table.public()["roads"]["big_road"] == [[{"winner": "player", "ties": 0}], [{"winner": "banker", "ties": 0}]]
    assert table.money("ana") == (9_950, 0)

    table.shoe.new_shoe()  # a new shoe: its roads start empty (the cards left in the old one held for a count)
    [report] = decks.reports(table.service, decks.DecksQuery(table="B1", status="held"))
    decks.acknowledge(table.service, report["id"], "the cards behind the cut card, counted", Origin("pit", "10.0.0.9"))
    table.open()
    assert table.public()["roads"]["coups"] == 0 and table.public()["roads"]["bead_plate"] == []


def test_a_dragon_tiger_table_deals_two_cards_and_refuses_both_sides(database: Engine) -> None:
    table = Table(database, "DT1", "dragontiger", {})
    table.shoe.new_shoe()
    table.shoe.deal("2C 3C 4C")  # the burn: a 2 turned face up, two cards burned
    round_id = table.open()
    DRAGON_TIGER_ADAPTER.place_bets(table.service, "ana", round_id, [SpotBet("tiger", "", 400)], "a1")
    table.close_betting()
    assert table.public()["next"] == "the Dragon's card"
    table.shoe.deal("5D 5D")  # a suited tie: half of a side bet back
    assert table.public()["result"] == {
        "hands": {"dragon": {"cards": ["5D"], "total": 5}, "tiger": {"cards": ["5D"], "total": 5}},
        "winner": "tie",
        "suited_tie": True,
    }
    assert table.money("ana") == (9_800, 0)


def test_the_tables_api_guards_returns_shows_the_spots_and_takes_slips(database: Engine) -> None:
    app = create_app(database, ManualClock())
    players = app.state.services.players
    tokens = {"op": players.register("op", "operator"), "ana": players.register("ana")}
    auth = {who: {"Authorization": f"Bearer {token}"} for who, token in tokens.items()}
    with TestClient(app) as client:
        too_generous = {"id": "DT9", "game": "dragontiger", "settings": {"tie_pays": 20}}
        refused = client.post("/v1/operator/tables", json=too_generous, headers=auth["op"])
        assert refused.status_code == 422 and "tie 156.8" in refused.json()["message"], refused.text
        assert "lower tie_pays or suited_tie_pays" in refused.json()["message"]
        made = client.post("/v1/operator/tables", json={"id": "B1", "game": "baccarat"}, headers=auth["op"])
        assert made.status_code == 201, made.text
        page = client.get("/v1/tables/B1", headers=auth["ana"]).json()["page"]
        assert page["spots"] == ["player", "banker", "tie", "player_pair", "banker_pair"], page
        assert page["chips"] == [2_000, 5_000, 10_000, 20_000, 50_000, 100_000]  # around THB 1 … 10,000's middle
        client.post("/v1/operator/players/ana/deposit", json={"amount": 5_000},
                    headers=auth["op"] | {"Idempotency-Key": "fund"})  # fmt: skip
        round_id = app.state.services.rounds.open_round("B1")
        slip = {"bets": [{"side": "tie", "stake": 100}, {"side": "player", "stake": 400}]}
        placed = client.post(f"/v1/rounds/{round_id}/bets", json=slip, headers=auth["ana"] | {"Idempotency-Key": "k"})
        assert placed.status_code == 201 and placed.json()["balance"] == 4_500, placed.text
        both = {"bets": [{"side": "banker", "stake": 400}]}
        refused = client.post(f"/v1/rounds/{round_id}/bets", json=both, headers=auth["ana"] | {"Idempotency-Key": "j"})
        assert (
            refused.status_code == 422
            and refused.json()["message"] == "one side only: you bet on player in this coup, so not on banker too"
        )
        seat = {"bets": [{"side": "player", "seat": "A", "stake": 100}]}
        refused = client.post(f"/v1/rounds/{round_id}/bets", json=seat, headers=auth["ana"] | {"Idempotency-Key": "s"})
        assert refused.status_code == 422 and "bets.0.seat" in refused.json()["message"], refused.text
