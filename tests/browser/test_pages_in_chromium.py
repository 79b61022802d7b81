"""The dealer console and the overlay in a real browser (Debian's Chromium, headless) on a live studio.

The studio is the production assembly (broker, SQLite, API, controller, a simulated shoe and dealer);
the pages read the API's streams. Skipped where Chromium is not installed, unless
``STUDIO_REQUIRE_BROWSER`` is set (CI installs Chromium and sets it, so there they cannot skip).
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.bus import topics
from services.bus.client import connect, make_client
from services.bus.messages import ControllerStatus, encode
from services.rounds import queries
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from services.studio.players import SimulatedPlayers
from tests.support import wait_until

CHROMIUM = Path("/usr/bin/chromium")
WINDOWS = {"betting_window_ms": 1500, "insurance_window_ms": 600, "decision_window_ms": 600}

# Every change to the page, recorded in the page: the round, its phase, each card slot by position.
RECORDER = """
window.snapshots = [];
new MutationObserver(() => {
  const hands = {};
  for (const hand of document.querySelectorAll(".hand")) {
    hands[hand.dataset.position] = [...hand.querySelectorAll(".card")].map((card) => card.dataset.card);
  }
  const outcomes = {};
  for (const hand of document.querySelectorAll(".hand")) {
    const outcome = hand.querySelector("[data-outcome]");
    if (outcome) outcomes[hand.dataset.position] = outcome.dataset.outcome;
  }
  window.snapshots.push({ round: document.body.dataset.round || "", phase: document.body.dataset.phase || "",
                          hands, outcomes, text: document.body.innerText });
}).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
"""

# Each piece of text a page shows (outside the roads' bead grids: marks, not words): its size in px, and the
# background of the nearest element that paints one (its alpha: 1 is opaque).
LEGIBILITY = """() => {
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const box = node.parentElement;
    if (!node.data.trim() || box.closest(".road-grid, script, style") || !box.getClientRects().length) continue;
    let plate = box;
    while (plate && getComputedStyle(plate).backgroundColor === "rgba(0, 0, 0, 0)") plate = plate.parentElement;
    const colour = plate ? getComputedStyle(plate).backgroundColor : "none";
    const alpha = colour.startsWith("rgba") ? Number(colour.split(",")[3].replace(")", "")) : colour === "none" ? 0 : 1;
    const rect = box.getBoundingClientRect();
    found.push({ text: node.data.trim(), px: parseFloat(getComputedStyle(box).fontSize), alpha,
                 left: rect.left, right: rect.right, bottom: rect.bottom });
  }
  return found;
}"""


@pytest.fixture
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        if os.environ.get("STUDIO_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} is missing and STUDIO_REQUIRE_BROWSER is set")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def live(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    table = f"w{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(table,), run_dir=tmp_path, mqtt_url=mqtt_url, allow_return_over_100=True, table_settings=WINDOWS,
        result_pause_ms=800, dealer_pace=0.05,
    )  # fmt: skip
    with running_studio(config) as studio:
        stop = threading.Event()  # players bet, insure and decide: the windows keep the face-down card down a while
        players = threading.Thread(target=SimulatedPlayers(studio, seed=7).run, args=(stop,), daemon=True)
        players.start()
        yield studio
        stop.set()
        players.join(timeout=10)


def test_the_overlay_shows_each_card_as_revealed_and_the_results_never_the_face_down_card_early(
    browser: Any, live: RunningStudio
) -> None:
    table = live.config.tables[0]
    page = browser.new_page()
    page.add_init_script(RECORDER)
    page.goto(f"{live.api_url}/overlay/{table}")
    # A round the page saw whole (not the first: it may have begun before the page opened) in which the
    # banker's second card was on screen face down (a banker Pok reveals it at once) and then settled.
    round_id = page.wait_for_function(
        """() => {
          const face_down = new Set(window.snapshots.filter((s) => (s.hands.banker || [])[1] === "hidden")
                                                    .map((s) => s.round));
          const done = window.snapshots.find((s) => s.phase === "settled" && face_down.has(s.round)
                                                    && !s.round.endsWith("-1"));
          return done ? done.round : null;
        }""",
        timeout=90_000,
    ).json_value()
    snapshots: list[dict[str, Any]] = page.evaluate("window.snapshots")
    state = queries.round_state(live.service, round_id)
    assert state["phase"] == "settled"
    hidden = state["hands"]["banker"]["cards"][1]  # revealed by now: the card that was face down
    seen = [s for s in snapshots if s["round"] == round_id]
    face_down = [s for s in seen if len(s["hands"].get("banker", [])) > 1 and s["hands"]["banker"][1] == "hidden"]
    for snapshot in face_down:
        assert hidden not in [card for cards in snapshot["hands"].values() for card in cards]
    final = next(s for s in reversed(seen) if s["phase"] == "settled")
    assert final["hands"] == {position: hand["cards"] for position, hand in state["hands"].items()}
    assert final["outcomes"] == state["result"]["outcomes"]
    page.close()


def test_the_dealer_console_logs_in_shows_what_to_deal_hides_the_face_down_card_and_raises_alerts(
    browser: Any, live: RunningStudio
) -> None:
    table = live.config.tables[0]
    dealer = f"dealer-{uuid.uuid4().hex[:6]}"
    token = live.players.register(dealer, "dealer")
    live.players.assign(table, dealer)
    page = browser.new_page(viewport={"width": 1920, "height": 1080})  # the console's screen at the table
    page.add_init_script(RECORDER)
    page.goto(f"{live.api_url}/")
    page.get_by_role("link", name="dealer console").click()
    page.wait_for_url(f"**/console/{table}")
    page.fill("#token", "not-a-token")
    page.click("button[type=submit]")
    page.wait_for_selector("#status.error")
    assert page.is_visible("#login")  # a bad token sends the dealer back to the login form
    page.fill("#token", token)
    page.click("button[type=submit]")
    page.wait_for_function("document.querySelector('#next').textContent.startsWith('Deal ')", timeout=30_000)
    page.wait_for_function(
        "window.snapshots.some((s) => (s.hands.banker || [])[1] === 'received')", timeout=30_000
    )  # the banker's face-down card: shown as received, never its value
    page.wait_for_function("document.querySelector('#phase').textContent === 'betting'", timeout=30_000)
    live.shoes[table].deal("AS")  # a card while betting is open: refused, and the console says so
    alert = page.wait_for_selector("#alerts li[data-kind=refused_card]", timeout=15_000)
    assert alert.query_selector(".card[data-card=AS]") and "no card is expected" in alert.inner_text()
    assert alert.inner_text().startswith("Card refused: it is not dealt")
    for _again in range(2):  # the same refusal again: one line, counted
        live.shoes[table].deal("AS")
    page.wait_for_selector("#alerts li[data-kind=refused_card][data-count='3']", timeout=15_000)
    assert "×3" in page.inner_text("#alerts li[data-kind=refused_card]")
    assert page.locator("#alerts li[data-kind=refused_card]").count() == 1
    small = [(t["text"], t["px"]) for t in page.evaluate(LEGIBILITY) if t["px"] < 24]
    assert not small, small  # at 1080p, read from 2 m: nothing under 24 px
    misreads = page.evaluate(
        """() => grouped([1, 2, 3].map((n) => ({ kind: "misread", at: "2026-12-06T10:00:0" + n + "Z",
                 message: `the shoe could not read a card at 10:00:0${n}:12; deal stopped until re-scanned` })))"""
    )
    assert [(m["kind"], m["count"]) for m in misreads] == [("misread", 3)]  # a misread at each card: one line, ×3
    assert misreads[0]["message"].endswith("10:00:03:12; deal stopped until re-scanned")  # the newest's words
    assert int(page.inner_text("#deck").split()[0]) <= 52
    # the controller's status turns offline (as its last will would): the console tells the dealer to stop
    name = live.controller.name
    status = ControllerStatus(controller=name, state="offline", tables=[table], ts="2026-12-03T00:00:00+00:00")
    announcer = make_client("")
    connect(announcer, live.mqtt_url)
    wait_until(announcer.is_connected, 10, "the announcer to connect")
    announcer.publish(topics.controller_status(name), encode(status), qos=1).wait_for_publish(10)
    page.wait_for_function("document.querySelector('#next').textContent.includes('controller is offline')")
    assert "paused" in (page.get_attribute("#next", "class") or "")
    online = status.model_copy(update={"state": "online"})
    announcer.publish(topics.controller_status(name), encode(online), qos=1).wait_for_publish(10)
    page.wait_for_function("!document.querySelector('#next').textContent.includes('controller is offline')")
    announcer.disconnect()
    announcer.loop_stop()
    snapshots: list[dict[str, Any]] = page.evaluate("window.snapshots")
    checked = 0
    for snapshot in snapshots:
        banker = snapshot["hands"].get("banker", [])
        if len(banker) > 1 and banker[1] == "received":
            state = queries.round_state(live.service, snapshot["round"])
            if state["phase"] == "settled":
                shown = [card for cards in snapshot["hands"].values() for card in cards]
                assert state["hands"]["banker"]["cards"][1] not in shown
                checked += 1
    assert checked, "no settled round was seen with its face-down card on the console"
    page.close()


def enter_room(browser: Any, live: RunningStudio, name: str, room: str, recorder: str, lang: str = "") -> Any:
    """A funded player ``name`` signed in on ``room``'s page (in ``lang``, if given) in a phone-sized context of their
    own."""
    token = live.players.register(name)
    live.wallets.deposit(name, 100_000, key=f"fund-{name}", actor="test")
    page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.add_init_script(recorder)
    page.goto(f"{live.api_url}/room/{room}" + (f"?lang={lang}" if lang else ""))
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_function("document.body.dataset.phase === 'seating'", timeout=20_000)
    return page
