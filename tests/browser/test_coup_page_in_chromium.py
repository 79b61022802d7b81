"""The coup games' player page (``/coup/{table}``) and the overlay, in a real browser on a live baccarat table.

The studio is the production assembly (broker, SQLite, API, controller, shoe daemon on a pty at 8 decks); the test is
the dealer. A player on a phone's screen sees the spots with what they pay, stakes chips on the Banker and the Tie,
finds the Player's spot closed to her, places the slip once; the coup is dealt through the shoe; her page shows the
winner, her net and the shoe's roads, and the overlay the coup's banner and roads — in the page's language.
Skipped where Chromium is not installed, unless ``STUDIO_REQUIRE_BROWSER`` is set (as in CI).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from services.rounds import queries
from services.rounds.models import Wager
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from tests.browser.test_pages_in_chromium import browser  # noqa: F401 (the fixture)
from tests.support import wait_until

DEAL = "2H 9S 3D KC".split()  # Player 2H 3D = 5, Banker 9S KC = 9: a Banker natural


@pytest.fixture
def live(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    table = f"b{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(), coup_tables=((table, "baccarat"),),
        coup_settings={"baccarat": {"betting_ms": 120_000, "max_stake": 5_000}},  # chips 100 … 5,000
        run_dir=tmp_path, mqtt_url=mqtt_url, result_pause_ms=60_000, simulated_dealers=False,
    )  # fmt: skip
    with running_studio(config) as studio:
        yield studio


def table_of(live: RunningStudio) -> str:
    return live.config.coup_tables[0][0]


def deal(live: RunningStudio, code: str) -> None:
    table = table_of(live)

    def dealt() -> int:
        return sum(len(hand["cards"]) for hand in queries.current_round(live.service, table)["hands"].values())

    before = dealt()
    wait_until(lambda: queries.current_round(live.service, table).get("phase") == "dealing", 30, "the deal")
    live.shoes[table].deal(code)
    wait_until(lambda: dealt() > before, 15, f"{code} to be dealt")


def test_a_player_bets_on_the_coup_page_and_sees_the_result_and_the_roads(
    live: RunningStudio,
    browser: Any,  # noqa: F811 (after the studio: the browser closes first)
) -> None:
    table = table_of(live)
    operator = live.players.register("pit", "operator")
    token = live.players.register("ana")
    live.wallets.deposit("ana", 10_000, key="fund-ana", actor="test")
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # a phone
    page.goto(f"{live.api_url}/coup/{table}")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#status.live", timeout=15_000)
    page.wait_for_function("document.body.dataset.phase === 'betting'", timeout=15_000)
    overlay = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    overlay.goto(f"{live.api_url}/overlay/{table}?lang=vi")

    # a new shoe: the dealer console (in Vietnamese) asks for the burn before the coup takes a card
    console = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    console.goto(f"{live.api_url}/console/{table}?lang=vi")
    console.fill("#token", operator)
    console.click("#login button[type=submit]")
    live.shoes[table].new_deck()
    console.wait_for_function("document.getElementById('next').textContent.startsWith('Đốt bài')", timeout=15_000)
    assert console.inner_text("#next") == "Đốt bài — lật ngửa lá đầu tiên của shoe mới"
    live.shoes[table].deal("AS")  # an ace: one more to burn
    console.wait_for_function("document.getElementById('next').textContent.includes('lá đốt thứ 1')", timeout=15_000)
    live.shoes[table].deal("2S")
    console.wait_for_function("!document.getElementById('next').textContent.startsWith('Đốt bài')", timeout=15_000)

    spots = page.eval_on_selector_all(".spot", "spots => spots.map((s) => s.dataset.spot)")
    assert spots == ["tie", "player_pair", "banker_pair", "player", "banker"]
    assert page.inner_text(".spot[data-spot=banker] .pays") == "pays 1:1 less 5 %"
    assert page.inner_text(".spot[data-spot=tie] .pays") == "pays 8:1"
    page.click(".chip[data-chip='100']")
    page.click(".spot[data-spot=banker]")
    page.click(".spot[data-spot=banker]")
    page.click(".spot[data-spot=tie]")
    assert page.is_disabled(".spot[data-spot=player]")  # one side only
    page.dblclick("#place")  # a double click places the slip once
    page.wait_for_selector("#message[data-code=placed]")
    round_id = page.evaluate("document.body.dataset.round")
    with live.service.sessions() as session:
        placed = session.execute(select(Wager.side, Wager.stake).where(Wager.round_id == round_id)).all()
    assert sorted((side, stake) for side, stake in placed) == [("banker", 200), ("tie", 100)]

    response = httpx.post(f"{live.api_url}/v1/operator/rounds/{round_id}/close-betting",
                          headers={"Authorization": f"Bearer {operator}"})  # fmt: skip
    assert response.status_code == 200, response.text
    for code in DEAL:
        deal(live, code)

    page.wait_for_selector("#result .winner[data-winner=banker]", timeout=15_000)
    assert console.inner_text(".hand[data-position=player] .name") == "Con"  # the console names the coup's hands
    assert page.inner_text("#result .winner") == "Banker wins"
    assert page.inner_text("#result .flags") == "a natural"
    page.wait_for_selector("#net[data-net='90']", timeout=15_000)  # 200 less 5 % is 190, the tie's 100 lost
    assert page.inner_text(".hand[data-position=banker] .points") == "9 points"
    assert page.eval_on_selector_all(".bead", "beads => beads.map((b) => b.dataset.winner)") == ["banker"]
    assert page.eval_on_selector_all("[data-road=big_road] .ring", "rings => rings.length") == 1
    assert page.is_visible(".ask[data-side=player]")
    wait_until(lambda: live.wallets.balance("ana")["balance"] == 10_090, 10, "the coup settled in the wallet")

    overlay.wait_for_selector(".banner.coup[data-outcome=banker]", timeout=15_000)
    assert overlay.inner_text(".banner.coup") == "Cái thắng"  # the overlay in Vietnamese (?lang=vi)
    assert overlay.eval_on_selector_all("#roads .bead", "beads => beads.length") == 1
    assert overlay.inner_text(".hand[data-position=player] .name") == "Con"
