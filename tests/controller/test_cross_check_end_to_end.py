"""The shoe + camera cross-check on real parts: a pty shoe and an overhead camera, each behind its own daemon and
signing key, the broker, the controller and the round service. A ``hold`` table settles when the camera sees every
face-up card as the shoe read it, and waits for an operator's word when it does not."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hardware.sim import shuffled_deck
from services.games.pokdeng import Phase, Position, Side
from services.rounds import audit, checks
from services.rounds.pokdeng import Bet, pokdeng
from tests.controller.stack import Studio


@pytest.fixture
def studio(database: Engine, mqtt_url: str, tmp_path: Path) -> Iterator[Studio]:
    running = Studio(database, mqtt_url, tmp_path, verify=checks.HOLD)
    yield running
    running.close()


def watched(studio: Studio, misreads: dict[int, str], until: Callable[[dict[str, Any]], bool]) -> Any:
    """A ``done`` for ``deal_until``: the camera sees each card the dealer console says is being checked (as the
    shoe read it, or as ``misreads`` says), until the dealer's view is as ``until`` says."""
    seen: set[int] = set()

    def done(view: dict[str, Any]) -> bool:
        for check in view.get("checks", []):
            if check["status"] == checks.PENDING and check["position"] not in seen:
                seen.add(check["position"])
                studio.camera.see(misreads.get(check["position"], check["card"]))
        return until(view)

    return done


def open_with_a_bet(studio: Studio) -> str:
    studio.fund("ana")
    round_id = studio.service.open_round(studio.table)
    pokdeng(studio.service).place_bets("ana", round_id, [Bet(Side.PLAYER, Position.A, 100)], "k1")
    return round_id


def test_a_camera_that_sees_every_card_as_the_shoe_read_it_lets_the_round_settle(studio: Studio) -> None:
    round_id = open_with_a_bet(studio)
    studio.deal_until(
        iter(shuffled_deck(seed=5)), round_id, watched(studio, {}, lambda view: view.get("phase") == Phase.SETTLED)
    )
    found = audit.card_checks(studio.service, round_id)
    assert found and {row["status"] for row in found} == {checks.AGREED}
    assert all(row["camera_confidence"] == pytest.approx(0.95) for row in found)
    assert studio.table_controller.counters.get("sightings", 0) >= len(found)
    assert studio.dealer_view()["camera"] == "online"  # the witness daemon's retained status


def test_a_camera_that_saw_another_card_holds_the_round_until_an_operators_word(studio: Studio) -> None:
    round_id = open_with_a_bet(studio)
    deck = shuffled_deck(seed=5)
    never_dealt = deck[-1]
    disputed = lambda view: "an operator's word on card 1" in view.get("waiting_for", "")  # noqa: E731
    studio.deal_until(iter(deck), round_id, watched(studio, {0: never_dealt}, disputed))
    assert audit.card_checks(studio.service, round_id)[0]["status"] == checks.MISMATCH
    assert studio.wallets.balance("ana")["held"] == 300  # nothing settled
    alerts = [a for a in studio.dealer_view()["alerts"] if a["kind"] == "verify_mismatch"]
    assert alerts and f"the shoe read {deck[0]}, the camera saw {never_dealt}" in alerts[0]["message"]
    studio.service.confirm_read(round_id, 0, "shoe", "op1", "the video shows the shoe's card")
    studio.deal_until(iter(()), round_id, lambda view: view.get("phase") == Phase.SETTLED, timeout=10)
    assert studio.wallets.balance("ana")["held"] == 0
