"""A Mậu Binh room's page (``/room/{table}``) in a real browser on a live studio: two players take seats, get
ready and arrange on their pages; each sees only their own cards until the showdown shows the chi one by one; the
units shown are the database's. The room is dealt online (a committed shuffle), with the controller closing its
windows. Skipped where Chromium is not installed, unless ``STUDIO_REQUIRE_BROWSER`` is set (as in CI)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.games.shuffle import verify
from services.rounds import queries
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from tests.browser.test_pages_in_chromium import (
    browser,  # noqa: F401 (the fixture)
    enter_room,
)

ROOM = {"unit": 10, "ready_ms": 60_000, "arranging_ms": 60_000, "showdown_ms": 1_500}

RECORDER = """
window.snapshots = [];
new MutationObserver(() => {
  const seats = {};
  for (const seat of document.querySelectorAll(".seat")) {
    seats[seat.dataset.seat] = { cards: [...seat.querySelectorAll(".card")].map((c) => c.dataset.card),
                                 chi: seat.querySelectorAll("[data-chi]").length };
  }
  window.snapshots.push({ phase: document.body.dataset.phase || "", round: document.body.dataset.round || "",
                          seats, arranging: [...document.querySelectorAll("#rows .card")].map((c) => c.dataset.card) });
}).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
"""


@pytest.fixture
def live(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    room = f"r{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(), rooms=(room,), room_settings=ROOM, run_dir=tmp_path, mqtt_url=mqtt_url, result_pause_ms=60_000
    )
    with running_studio(config) as studio:
        yield studio


def enter(browser: Any, live: RunningStudio, name: str) -> Any:  # noqa: F811
    return enter_room(browser, live, name, live.config.rooms[0], RECORDER)


def test_two_players_sit_ready_arrange_and_watch_the_showdown_chi_by_chi(
    live: RunningStudio,
    browser: Any,  # noqa: F811 (after the studio: the browser closes first, so no page keeps the API's streams open)
) -> None:
    ana, binh, chai = enter(browser, live, "ana"), enter(browser, live, "binh"), enter(browser, live, "chai")
    round_id = ana.evaluate("document.body.dataset.round")
    ana.click("[data-sit='1']")
    ana.wait_for_selector("#message[data-code=seated]")
    binh.wait_for_selector(".seat[data-seat='1'][data-state='not ready']")
    assert binh.is_hidden("[data-sit='1']")  # taken
    binh.click("[data-sit='2']")
    binh.wait_for_selector("#message[data-code=seated]")
    hold = live.wallets.balance("ana")["held"]
    assert hold == 540  # 54 units × 10: the largest loss against the one other player seated
    ana.click("[data-ready='1']")
    binh.click("[data-ready='2']")  # both ready: the shuffle deals

    for page in (ana, binh):
        page.wait_for_selector("#arrange:not([hidden]) #rows .card", timeout=20_000)
    assert ana.text_content("#phase") == "Arrange your chi"
    chai.wait_for_function("document.querySelector('#phase').textContent === 'Players are arranging their chi'")
    chai.close()  # a spectator is told what the players do, never to arrange
    # ana swaps two cards of her chi 1 (same chi: still the suggestion's strength) and submits; binh submits his
    ana.click("#rows [data-row='1'] .card:nth-child(2)")
    ana.click("#rows [data-row='1'] .card:nth-child(3)")
    ana.click("#submit")
    ana.wait_for_selector("#message[data-code=arranged]")
    # binh swaps his chi 1 and chi 2 card by card: chi 1 is now weaker (binh lủng). The room refuses it with the
    # page's words; only his second word ("submit it anyway") sends it
    for index in range(1, 6):
        binh.click(f"#rows [data-row='1'] .card:nth-child({index + 1})")  # after the row's label
        binh.click(f"#rows [data-row='2'] .card:nth-child({index + 1})")
    assert binh.is_hidden("#confirm-lung")
    binh.click("#submit")
    binh.wait_for_selector("#confirm-lung:not([hidden])")
    assert binh.inner_text("#message").startswith("This arrangement is binh lủng: chi 1 is weaker than chi 2")
    binh.click("#confirm-lung")
    binh.wait_for_selector("#message[data-code=arranged]")
    assert binh.inner_text("#message") == "Arrangement submitted as it is: binh lủng, it loses every chi."

    for page in (ana, binh):
        page.wait_for_selector("#net", timeout=30_000)
    state = queries.round_state(live.service, round_id)
    assert state["phase"] == "settled"
    units = state["result"]["units"]
    assert int(ana.get_attribute("#net", "data-units")) == units["1"] == -int(binh.get_attribute("#net", "data-units"))
    assert units["2"] < 0, "binh lủng loses every chi"
    assert live.wallets.balance("ana")["balance"] == 100_000 + 10 * units["1"]
    shuffle = verify(**state["shuffle"])
    deck = [str(card) for card in shuffle.deck]
    own = {"ana": set(deck[0:26:2]), "binh": set(deck[1:26:2])}
    for page, name, other in ((ana, "ana", "binh"), (binh, "binh", "ana")):
        snapshots: list[dict[str, Any]] = page.evaluate("window.snapshots")
        mine = [s for s in snapshots if s["round"] == round_id]
        before = [s for s in mine if s["phase"] in ("seating", "dealing", "arranging")]
        assert any(set(s["arranging"]) == own[name] for s in before), name  # her own 13 cards to arrange
        for snapshot in before:  # nothing of the other hand before the showdown
            shown = {c for seat in snapshot["seats"].values() for c in seat["cards"]} | set(snapshot["arranging"])
            assert not shown & own[other], (name, shown & own[other])
        revealed = [max(seat["chi"] for seat in s["seats"].values()) for s in mine if s["phase"] == "showdown"]
        assert sorted(set(revealed)) == [1, 2, 3], (name, sorted(set(revealed)))  # chi 1, then 2, then 3


@pytest.fixture
def held_open(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    """A Mậu Binh room that holds free seats open (``seating_ms``) once everyone seated is ready."""
    room = f"h{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(), rooms=(room,), room_settings=ROOM | {"seating_ms": 60_000}, run_dir=tmp_path, mqtt_url=mqtt_url
    )
    with running_studio(config) as studio:
        yield studio


def test_a_newcomer_takes_a_free_seat_while_the_ready_players_wait_for_the_seating_window(
    held_open: RunningStudio,
    browser: Any,  # noqa: F811
) -> None:
    """Two players ready at once cannot start the deal while a seat is free: a third, arriving after them, sits
    and is dealt in when the seating window ends (the controller would end it at ``seating_ms``)."""
    names = ("ana", "binh", "chai")
    pages = {name: enter_room(browser, held_open, name, held_open.config.rooms[0], RECORDER) for name in names}
    round_id = pages["ana"].evaluate("document.body.dataset.round")
    for seat, name in (("1", "ana"), ("2", "binh")):
        pages[name].click(f"[data-sit='{seat}']")
        pages[name].wait_for_selector("#message[data-code=seated]")
        pages[name].click(f"[data-ready='{seat}']")
    pages["chai"].wait_for_selector(".seat[data-seat='2'][data-state='ready']")
    state = queries.round_state(held_open.service, round_id)
    assert state["phase"] == "seating" and state["window_closes_at"] is not None  # the seats held open, timed
    pages["chai"].wait_for_function("document.querySelector('#timer').textContent.trim() !== ''")  # its countdown
    pages["chai"].click("[data-sit='3']")  # still open: the newcomer sits
    pages["chai"].wait_for_selector("#message[data-code=seated]")
    pages["chai"].click("[data-ready='3']")
    pages["ana"].wait_for_selector(".seat[data-seat='3'][data-state='ready']")
    assert queries.round_state(held_open.service, round_id)["phase"] == "seating"  # seat 4 free: held open again
    held_open.service.close_window(round_id, "test")
    for page in pages.values():
        page.wait_for_selector("#arrange:not([hidden]) #rows .card", timeout=20_000)
    assert sorted(queries.round_state(held_open.service, round_id)["seats"]) == ["1", "2", "3"]
