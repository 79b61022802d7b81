"""The player's page (``/play/{table}``) in a real browser (Debian's Chromium, headless) on a live studio.

The studio is the production assembly (broker, SQLite, API, controller, shoe daemon on a pty); the test is
the dealer, dealing a known order through the shoe, so the round offers insurance and asks for decisions.
Three players, each in their own browser context: ana bets (a double click, then a bet whose answer the
network loses), insures and decides; binh bets on the seat ana decides; chai's bet is refused.
Skipped where Chromium is not installed, unless ``STUDIO_REQUIRE_BROWSER`` is set (as in CI).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from services.games.base import CardWanted
from services.rounds import queries
from services.rounds.models import Wager
from services.rounds.returns import HOUSE_SETTINGS
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from tests.browser.test_pages_in_chromium import browser  # noqa: F401 (the fixture)
from tests.support import wait_until

SETTINGS = {
    "betting_window_ms": 120_000,  # the test closes betting itself once everyone has bet
    "insurance_window_ms": 120_000,  # closed by the test too, once the pages have shown it (a slow CI is slow)
    "decision_window_ms": 20_000,
    "min_stake": 10,
    "chips": [10, 20, 50, 100],
}
# A, B, C, banker, A, B, C, banker: the banker shows 9S (insurance), A has 5, B 6, C 3; the banker 9S 5C = 4.
DEAL = "5H 2D KD 9S TH 4S 3C 5C".split()
FACE_DOWN = "5C"

# Every change to the page, recorded in the page: round, phase, card slots by position, the prompt shown.
RECORDER = """
window.snapshots = [];
new MutationObserver(() => {
  const hands = {};
  for (const hand of document.querySelectorAll(".over .hand")) {
    hands[hand.dataset.position] = [...hand.querySelectorAll(".card")].map((card) => card.dataset.card);
  }
  const prompt = document.querySelector("#prompt");
  window.snapshots.push({ round: document.body.dataset.round || "", phase: document.body.dataset.phase || "",
                          hands, prompt: prompt && !prompt.hidden ? prompt.dataset.kind : "",
                          text: document.body.innerText });
}).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
"""


@pytest.fixture
def live(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    table = f"p{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(table,), run_dir=tmp_path, mqtt_url=mqtt_url, allow_return_over_100=True, table_settings=SETTINGS,
        result_pause_ms=60_000, simulated_dealers=False,
    )  # fmt: skip
    with running_studio(config) as studio:
        yield studio


def player(live: RunningStudio, name: str, funds: int) -> str:
    token = live.players.register(name)
    live.wallets.deposit(name, funds, key=f"fund-{name}", actor="test")
    return token


def sit(browser: Any, live: RunningStudio, token: str) -> Any:  # noqa: F811
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()  # a phone's screen
    page.add_init_script(RECORDER)
    page.goto(f"{live.api_url}/play/{live.config.tables[0]}")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#status.live", timeout=15_000)
    page.wait_for_function("document.body.dataset.phase === 'betting'", timeout=15_000)
    return page


def bet(page: Any, chip: int, side: str, seat: str) -> None:
    page.click(f".chip[data-chip='{chip}']")
    page.click(f".spot[data-side='{side}'][data-seat='{seat}']")


def wagers(live: RunningStudio, round_id: str, name: str) -> list[tuple[str, str, int]]:
    with live.service.sessions() as session:
        rows = session.execute(
            select(Wager.side, Wager.seat, Wager.stake).where(Wager.round_id == round_id, Wager.player == name)
        )
        return [(side, seat, stake) for side, seat, stake in rows]


def deal(live: RunningStudio, code: str) -> None:
    """Deal ``code`` through the shoe once the round asks for a card, and wait until it is in the round."""
    table = live.config.tables[0]

    def state() -> dict[str, Any]:
        return queries.current_round(live.service, table)

    def console_asks() -> bool:  # the dealer deals when the console (the controller's view) asks, as at a table
        current = live.controller.writer.tables[table].current
        return current is not None and isinstance(current.expecting, CardWanted)

    wait_until(lambda: "next_card" in state() and console_asks(), 30, f"the round to ask for a card ({code} next)")
    dealt = sum(len(hand["cards"]) for hand in state()["hands"].values())
    live.shoes[table].deal(code)
    wait_until(lambda: sum(len(h["cards"]) for h in state()["hands"].values()) > dealt, 15, f"{code} to be dealt")


def as_text(code: str) -> str:
    return {"T": "10"}.get(code[0], code[0]) + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[code[1]]


def test_a_player_bets_insures_decides_and_sees_the_result_the_database_has(
    live: RunningStudio,
    browser: Any,  # noqa: F811 (after the studio: the browser closes first, so no page keeps the API's streams open)
) -> None:
    operator = live.players.register("pit", "operator")
    ana = sit(browser, live, player(live, "ana", 10_000))
    binh = sit(browser, live, player(live, "binh", 10_000))
    chai = sit(browser, live, player(live, "chai", 100))
    round_id = ana.evaluate("document.body.dataset.round")

    # a double click of "Place bets" places the slip once
    bet(ana, 100, "player", "A")
    ana.dblclick("#place")
    ana.wait_for_selector("#message[data-code=placed]")
    assert wagers(live, round_id, "ana") == [("player", "A", 100)]
    # the other side is closed to her for this round
    assert ana.is_disabled(".spot[data-side='banker'][data-seat='B']")

    # a bet whose answer the network loses: the page retries with the same key, the server does it once
    lost: list[str] = []

    def lose_the_answer(route: Any) -> None:
        if not lost:
            route.fetch()  # the server takes the bet…
            lost.append(route.request.headers["idempotency-key"])
            route.abort("connectionreset")  # …and the answer never reaches the page
        else:
            assert route.request.headers["idempotency-key"] == lost[0]
            route.continue_()

    ana.route(f"**/v1/rounds/{round_id}/bets", lose_the_answer)
    bet(ana, 50, "player", "C")
    ana.click("#place")
    ana.wait_for_selector("#message[data-code=placed]", timeout=15_000)
    ana.unroute(f"**/v1/rounds/{round_id}/bets")
    assert lost and wagers(live, round_id, "ana") == [("player", "A", 100), ("player", "C", 50)]

    bet(binh, 20, "player", "A")  # a smaller stake than ana's: ana decides seat A
    binh.click("#place")
    binh.wait_for_selector("#message[data-code=placed]")

    bet(chai, 50, "player", "B")  # holds 3 × 50 = 150 of a balance of 100
    chai.click("#place")
    chai.wait_for_selector("#message[data-code=insufficient_funds]")
    assert "Not enough balance" in chai.inner_text("#message")
    assert wagers(live, round_id, "chai") == [] and live.wallets.balance("chai")["balance"] == 100

    staff = {"Authorization": f"Bearer {operator}"}
    response = httpx.post(f"{live.api_url}/v1/operator/rounds/{round_id}/close-betting", headers=staff)
    assert response.status_code == 200, response.text
    for code in DEAL:
        deal(live, code)

    # insurance: ana may insure T = 150 or T/2 = 75; binh his 20; chai, with no wager, is offered nothing
    ana.wait_for_selector("#prompt[data-kind=insurance] button[data-amount='75']")
    assert ana.eval_on_selector_all("#prompt button", "bs => bs.map((b) => b.dataset.amount)") == ["150", "75"]
    binh.wait_for_selector("#prompt[data-kind=insurance] button[data-amount='20']")
    ana.click("#prompt button[data-amount='75']")
    ana.wait_for_selector("#message[data-code=insured]")
    assert chai.evaluate("document.querySelector('#prompt').hidden")
    response = httpx.post(f"{live.api_url}/v1/operator/rounds/{round_id}/close-insurance", headers=staff)
    assert response.status_code == 200, response.text

    # decisions: seat A, then C, are ana's
    ana.wait_for_selector("#prompt[data-kind=decision]", timeout=20_000)
    assert "Seat A" in ana.inner_text("#prompt") and "5 points" in ana.inner_text("#prompt")
    assert "threshold is 4" in ana.inner_text("#prompt")
    # the answer to "stand" comes late, after the private stream already asked about seat C: C's prompt stays
    slow: list[str] = []

    def answer_late(route: Any) -> None:
        response = route.fetch()  # the server takes the decision and the stream moves on to seat C…
        slow.append(response.text())
        time.sleep(1.5)  # …before the page hears back
        route.fulfill(response=response)

    ana.route(f"**/v1/rounds/{round_id}/decisions", answer_late)
    ana.click("#prompt button[data-choice=stand]")
    ana.wait_for_selector("#message[data-code=decided]", timeout=15_000)
    ana.unroute(f"**/v1/rounds/{round_id}/decisions")
    assert slow
    ana.wait_for_function("document.querySelector('#prompt').innerText.includes('Seat C')")
    ana.click("#prompt button[data-choice=draw]")
    deal(live, "9D")  # C's third card
    deal(live, "2S")  # the banker draws on 4

    ana.wait_for_selector("#net", timeout=15_000)
    history = queries.history(live.service, "ana", None, 1)[0]
    assert history["round_id"] == round_id and history["phase"] == "settled"
    assert int(ana.get_attribute("#net", "data-net")) == history["net"]
    for width, height in ((390, 844), (1280, 800)):  # a phone, and a laptop: the net in sight without scrolling
        ana.set_viewport_size({"width": width, "height": height})
        ana.evaluate("window.scrollTo(0, 0)")
        bottom = ana.evaluate("document.querySelector('#net').getBoundingClientRect().bottom")
        assert 0 < bottom <= height, (width, height, bottom)
    wallet = live.wallets.balance("ana")
    ana.wait_for_function(f"document.querySelector('#balance').dataset.amount === '{wallet['balance']}'")
    assert wallet["held"] == 0 and wallet["balance"] == 10_000 + history["net"]
    result = ana.inner_text("#result")
    state = queries.round_state(live.service, round_id)
    for position, hand in state["result"]["hands"].items():
        shown = ana.inner_text(f"#result [data-position='{position}']")
        assert f"{hand['points']} points ×{hand['multiplier']}" in shown, (position, shown)  # no Pok, no straight
    assert "Pok" not in result  # nobody had Pok: the names are points, straights…
    ana.wait_for_selector(f"#history li[data-round='{round_id}']")
    banker = " ".join(as_text(code) for code in state["hands"]["banker"]["cards"])
    assert "Banker " + banker in ana.inner_text(f"#history li[data-round='{round_id}']")

    # the video shows C's third card was 5D, not 9D: an operator proposes the correction, a second approves it, and
    # ana's history says so
    fix = {"round_id": round_id, "action": "correct", "cards": {"8": "5D"}, "video_ref": "cam1@00:00:42"}
    second = {"Authorization": f"Bearer {live.players.register('shift-boss', 'operator')}"}  # on shift already
    response = httpx.post(f"{live.api_url}/v1/operator/proposals", json=fix, headers=staff)
    assert response.status_code == 201, response.text
    response = httpx.post(f"{live.api_url}/v1/operator/proposals/{response.json()['id']}/approve", headers=second)
    assert response.status_code == 200, response.text
    corrected = queries.history(live.service, "ana", None, 1)[0]
    assert corrected["net"] - history["net"] == corrected["corrections"][0]["amount"] == 100  # C: 8 beats 6
    ana.wait_for_selector(f"#history li[data-round='{round_id}'] [data-correction='100']", timeout=15_000)
    ana.wait_for_function(f"document.querySelector('#net').dataset.net === '{corrected['net']}'")

    # the network drops: the page says it is offline, and live again once it is back
    ana.context.set_offline(True)
    ana.wait_for_selector("#offline", state="visible")
    ana.context.set_offline(False)
    ana.wait_for_selector("#offline", state="hidden", timeout=20_000)
    ana.wait_for_selector("#status.live", timeout=20_000)

    # what each page ever showed: the decision prompt only on ana's, the face-down card never before the result
    for page, name in ((ana, "ana"), (binh, "binh"), (chai, "chai")):
        snapshots: list[dict[str, Any]] = page.evaluate("window.snapshots")
        early = [s for s in snapshots if s["round"] == round_id and s["phase"] != "settled"]
        assert early, name
        for snapshot in early:
            assert FACE_DOWN not in [card for cards in snapshot["hands"].values() for card in cards], name
            assert FACE_DOWN not in snapshot["text"], name
        decisions = [s for s in snapshots if s["prompt"] == "decision"]
        assert bool(decisions) == (name == "ana"), f"{name}'s page showed a decision prompt: {bool(decisions)}"


def test_switching_sides_asks_before_the_staged_chips_are_cleared(
    live: RunningStudio,
    browser: Any,  # noqa: F811
) -> None:
    ana = sit(browser, live, player(live, "ana", 10_000))
    round_id = ana.evaluate("document.body.dataset.round")
    player_a, banker_b = ".spot[data-side='player'][data-seat='A']", ".spot[data-side='banker'][data-seat='B']"

    def staged(spot: str) -> str:
        return str(ana.inner_text(f"{spot} .staged"))

    bet(ana, 100, "player", "A")
    assert staged(player_a) != "" and ana.is_enabled(banker_b)  # another side is a question, not a dead button
    ana.click(banker_b)
    ana.wait_for_selector("#switch:not([hidden])")
    assert "banker side instead" in ana.inner_text("#switch") and "will be cleared" in ana.inner_text("#switch")
    ana.click("#switch-no")  # kept: nothing changes
    ana.wait_for_selector("#switch", state="hidden")
    assert staged(player_a) != "" and staged(banker_b) == ""
    ana.click(banker_b)
    ana.click("#switch-yes")  # switched: player A's chips are gone, the tap stakes banker B
    ana.wait_for_selector("#switch", state="hidden")
    assert staged(player_a) == "" and staged(banker_b) != ""
    ana.click("#place")
    ana.wait_for_selector("#message[data-code=placed]")
    assert wagers(live, round_id, "ana") == [("banker", "B", 100)]
    assert ana.is_disabled(player_a)  # placed: one side per round, no question left to ask


def test_the_page_says_how_bets_pay_at_this_table(live: RunningStudio, browser: Any) -> None:  # noqa: F811
    table = live.config.tables[0]
    live.service.change_settings(table, SETTINGS | {"commission_bps": 250, "hold_multiple": 4}, True)
    ana = sit(browser, live, player(live, "ana", 10_000))
    assert "holds 4 × its stake" in ana.inner_text("#limits")
    ana.click("#pays summary")
    pays = ana.inner_text("#pays")
    assert "less 2.5 % commission on the win" in pays and "3 at most" in pays and "gives the stake back" in pays
    assert "a Tong or a straight flush 5" in pays


# When the result panel shows and hides, with the round it was for (the browser's clock, ms).
SHOWN = """
window.shown = [];
new MutationObserver(() => {
  const result = document.querySelector("#result");
  const on = Boolean(result && !result.hidden);
  const last = window.shown[window.shown.length - 1];
  if (!last || last.on !== on) window.shown.push({ on, at: Date.now(), round: document.body.dataset.round || "" });
}).observe(document, { subtree: true, childList: true, attributes: true });
"""


@pytest.fixture
def paced(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    """A table at the studio's own result pause (``StudioConfig``'s default) with quick windows and a dealer."""
    table = f"q{uuid.uuid4().hex[:6]}"
    windows = {"betting_window_ms": 1_500, "insurance_window_ms": 600, "decision_window_ms": 600}
    config = StudioConfig(
        tables=(table,), run_dir=tmp_path, mqtt_url=mqtt_url, table_settings=HOUSE_SETTINGS | windows, dealer_pace=0.05
    )
    with running_studio(config) as studio:
        yield studio


def test_a_result_stays_up_long_enough_to_read_on_a_phone(
    paced: RunningStudio,
    browser: Any,  # noqa: F811
) -> None:
    """At the studio's default pace a round's result stays on the player's page 6–8 s (a person reads it), then the
    next round opens."""
    assert paced.config.result_pause_ms == 7_000
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.add_init_script(SHOWN)
    page.goto(f"{paced.api_url}/play/{paced.config.tables[0]}")
    page.fill("#token", player(paced, "ana", 10_000))
    page.click("#login button[type=submit]")
    page.wait_for_function("document.body.dataset.phase === 'betting'", timeout=20_000)
    page.evaluate("window.shown = []")  # from a round's betting on: its result's whole showing, not one under way
    shown = page.wait_for_function(
        """() => { const s = window.shown; const on = s.findIndex((x) => x.on);
                   const off = on >= 0 ? s.findIndex((x, i) => i > on && !x.on) : -1;
                   return off > 0 ? [s[on], s[off]] : null; }""",
        timeout=40_000,
    ).json_value()
    up = shown[1]["at"] - shown[0]["at"]
    assert 6_000 <= up <= 12_000, up  # 7 s, and the next round's opening (later on a busy machine)
    assert shown[1]["round"] != shown[0]["round"]  # hidden because the next round opened
