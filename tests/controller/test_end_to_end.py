"""Simulated shoe → daemon → broker → controller → round service → ledger, on real parts, one round at a time."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from hardware.sim import shuffled_deck
from services.games.pokdeng import Phase, Position, Side
from services.games.pokdeng.transcript import replay, result_to_dict
from services.journal.models import ShoeJournal
from services.observability.http import serve_health
from services.rounds.pokdeng import Bet, pokdeng
from tests.conftest import BrokerProcess
from tests.controller import stack
from tests.controller.stack import Studio
from tests.support import engine_of

studio = stack.studio  # the fixture, shared with test_refusals_end_to_end.py


def test_a_round_is_dealt_from_the_shoe_decided_on_time_and_settled_in_the_ledger(studio: Studio) -> None:
    studio.fund("ana", "binh")
    round_id = studio.service.open_round(studio.table)
    pokdeng(studio.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position.A, 100)], "k1")
    pokdeng(studio.service).place_bets(
        "binh", round_id, [Bet(Side.BANKER, Position.B, 50), Bet(Side.BANKER, Position.C, 20)], "k2"
    )
    deck = shuffled_deck(seed=99)
    studio.deal_as_the_console_says(iter(deck), round_id)

    engine = engine_of(studio.table_controller)
    assert engine.result is not None and [str(c) for c in engine.cards] == deck[: len(engine.cards)]
    nets = engine.result.player_nets()
    assert studio.wallets.balance("ana")["balance"] == 10_000 + nets.get("ana", 0)
    assert studio.wallets.balance("binh")["balance"] == 10_000 + nets.get("binh", 0)
    with studio.service.sessions() as session:
        journal = session.execute(
            select(ShoeJournal.card, ShoeJournal.disposition).where(ShoeJournal.table_id == studio.table)
        ).all()
    assert [(card, "dealt") for card in deck[: len(engine.cards)]] == [tuple(row) for row in journal]
    assert_no_hidden_card_leaked(studio, round_id)


def assert_no_hidden_card_leaked(studio: Studio, round_id: str) -> None:
    """Every state and dealer message before the reveal lacks the banker's face-down card."""
    engine = engine_of(studio.table_controller)
    hidden = str(engine.cards[7])  # the banker's second card: dealt face down
    for message in list(studio.views.messages):
        payload = json.loads(message.payload)
        if payload.get("round_id") != round_id:
            continue
        banker = payload["hands"]["banker"]["cards"]
        if len(banker) >= 2 and banker[1] in (None, "received"):
            assert f'"{hidden}"' not in message.payload.decode(), f"{hidden} leaked on {message.topic}"


def test_metrics_and_health_endpoints_show_a_round_went_through(studio: Studio) -> None:
    server = serve_health("127.0.0.1", 0, lambda: {"broker": studio.controller.client.is_connected()})
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        before = scrape(base)
        studio.fund("chai")
        round_id = studio.service.open_round(studio.table)
        pokdeng(studio.service).place_bets("chai", round_id, [Bet(Side.PLAYER, Position.C, 100)], "k3")
        studio.deal_as_the_console_says(iter(shuffled_deck(seed=5)), round_id)
        after = scrape(base)
        table = f'table="{studio.table}"'
        assert after[f'studio_cards_total{{disposition="dealt",{table}}}'] >= 8
        assert after[f'studio_round_phases_total{{game="pokdeng",phase="settled",{table}}}'] == 1
        assert after[f"studio_lease_held{{{table}}}"] == 1 and after[f"studio_lease_epoch{{{table}}}"] >= 1
        assert after[f'studio_device_online{{device="shoe",{table}}}'] == 1  # its daemon's retained status
        assert after["studio_lease_renew_seconds_count"] >= 1
        assert after[f"studio_mqtt_receive_lag_seconds_count{{{table}}}"] >= 8
        assert after["studio_settlement_seconds_count"] > before.get("studio_settlement_seconds_count", 0)
        with urllib.request.urlopen(f"{base}/readyz") as response:
            assert json.loads(response.read()) == {"ready": True, "checks": {"broker": True}}
    finally:
        server.shutdown()


def scrape(base: str) -> dict[str, float]:
    """The Prometheus text exposition as {series: value}."""
    with urllib.request.urlopen(f"{base}/metrics") as response:
        lines = response.read().decode().splitlines()
    series = (line.rsplit(" ", 1) for line in lines if line and not line.startswith("#"))
    return {name: float(value) for name, value in series}


def test_a_round_survives_the_broker_being_killed_and_restarted_mid_deal(
    database: Engine, broker_process: BrokerProcess, tmp_path: Path
) -> None:
    studio = Studio(database, broker_process.url, tmp_path)
    try:
        studio.fund("ana")
        round_id = studio.service.open_round(studio.table)
        pokdeng(studio.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position.A, 100)], "k1")
        cards = iter(shuffled_deck(seed=42))
        studio.deal_until(cards, round_id, lambda view: view.get("deck_remaining") == 49)
        broker_process.kill()
        studio.sim.deal(next(cards))  # the banker's up card goes into the shoe daemon's outbox meanwhile
        studio.dealt.add((round_id, "banker", 0))
        broker_process.start()
        studio.deal_as_the_console_says(cards, round_id, timeout=60)
        engine = engine_of(studio.table_controller)
        assert engine.result is not None
        assert studio.wallets.balance("ana")["balance"] == 10_000 + engine.result.player_nets()["ana"]
        assert len(engine.cards) == len(set(engine.cards))
    finally:
        studio.close()


# Rounds through the whole stack, each compared with the pure engine replaying the same transcript.
SCENARIOS: dict[str, dict[str, Any]] = {
    "banker_pok_insured": {  # banker 9 up: insurance bought; 9 + T = Pok: settled early, insurance pays 1.2:1
        "cards": "2H 3H 4H 9S 5H 6H 7H TS", "insure": {"ana": True}, "decide": {},
        "check": lambda r, d: r.early and d["insurance"] == {"ana": 120},
    },
    "insurance_declined_decisions": {  # banker 8 up, nobody insures; ana stands on 5, binh draws on C
        "cards": "2H 4H 6H 8D 3H 5H 7H 9C KS", "insure": {}, "decide": {"A": False, "C": True},
        "check": lambda r, d: not r.early and d["insurance"] == {}
        and (len(r.hands[Position.A].cards), len(r.hands[Position.C].cards)) == (2, 3),
    },
    "forced_draw_and_tie": {  # A: 5 + 5 = 0 points must draw; B and C tie with the banker
        "cards": "5H 3D 2C 4S 5D 4D 5C 3S 9H", "insure": {}, "decide": {"C": False},
        "check": lambda r, d: len(r.hands[Position.A].cards) == 3 and d["outcomes"]["B"] == d["outcomes"]["C"] == "tie",
    },
    "all_seats_pok": {  # every seat Pok: settled at once, nobody draws
        "cards": "4H 3H 2H 2S 5D 5C 6D 3S", "insure": {}, "decide": {},
        "check": lambda r, d: r.early and set(d["outcomes"].values()) == {"seat"},
    },
}  # fmt: skip


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_scripted_round_through_the_whole_stack_matches_the_engine_replay(
    database: Engine, mqtt_url: str, tmp_path: Path, name: str
) -> None:
    scenario = SCENARIOS[name]
    windows = {"betting_window_ms": 1500, "insurance_window_ms": 1500, "decision_window_ms": 1500}
    studio = Studio(database, mqtt_url, tmp_path, windows)
    try:
        studio.fund("ana", "binh")
        round_id = studio.service.open_round(studio.table)
        pokdeng(studio.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position.A, 100)], "k1")
        pokdeng(studio.service).place_bets(
            "binh", round_id, [Bet(Side.PLAYER, Position.C, 40), Bet(Side.PLAYER, Position.B, 20)], "k2"
        )
        cards = iter(scenario["cards"].split())
        acted: set[str] = set()

        def act(view: dict[str, Any]) -> bool:
            if view.get("phase") == "insurance" and "insurance" not in acted:
                acted.add("insurance")
                for player in scenario["insure"]:
                    pokdeng(studio.service).buy_insurance(
                        player, round_id, 100 if player == "ana" else 60, key=f"i-{player}"
                    )
            decision = view.get("decision")
            if decision and decision["seat"] in scenario["decide"] and decision["seat"] not in acted:
                acted.add(decision["seat"])
                decider = "ana" if decision["seat"] == "A" else "binh"
                pokdeng(studio.service).decide(
                    decider, round_id, Position(decision["seat"]), scenario["decide"][decision["seat"]]
                )
            return view.get("phase") in (Phase.SETTLED, Phase.VOID)

        studio.deal_until(cards, round_id, act, timeout=60)
        engine = engine_of(studio.table_controller)
        assert engine.result is not None
        transcript = {
            "cards": [str(card) for card in engine.cards],
            "decisions": {seat: "draw" if draw else "stand" for seat, draw in scenario["decide"].items()},
            "thresholds": {},
            "wagers": [
                {"id": w.wager_id, "player": w.player, "side": str(w.side), "seat": str(w.seat), "stake": w.stake}
                for w in sorted((item.wager for item in engine.result.wagers), key=lambda w: w.order)
            ],
            "insurance": {player: 100 if player == "ana" else 60 for player in scenario["insure"]},
            "settings": windows,
        }
        assert [str(card) for card in engine.cards] == scenario["cards"].split()
        assert result_to_dict(engine.result) == result_to_dict(replay(transcript))
        assert scenario["check"](engine.result, result_to_dict(engine.result))
        for player, net in engine.result.player_nets().items():
            assert studio.wallets.balance(player)["balance"] == 10_000 + net
    finally:
        studio.close()
