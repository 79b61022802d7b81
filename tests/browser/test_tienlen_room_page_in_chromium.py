"""A Tiến Lên room's page (``/room/{table}``) in a real browser on a live studio: two players sit, the player to act
plays from their own hand on the page, the other sees it on the table and passes, the round ends (the controller's
turn timeouts) and the pages show the payments the database has; neither page shows the other's hand before the
end. Skipped where Chromium is not installed, unless ``STUDIO_REQUIRE_BROWSER`` is set (as in CI)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from services.games.shuffle import verify
from services.rounds import queries
from services.rounds.models import RoundLogEntry
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from tests.api.test_i18n import dictionary
from tests.browser.test_pages_in_chromium import (
    browser,  # noqa: F401 (the fixture)
    enter_room,
)
from tests.support import wait_until

ROOM = {"unit": 10, "seating_ms": 60_000, "turn_ms": 60_000}

RECORDER = """
window.snapshots = [];
new MutationObserver(() => {
  const message = document.querySelector("#message");
  window.snapshots.push({ phase: document.body.dataset.phase || "", round: document.body.dataset.round || "",
                          cards: [...document.querySelectorAll(".card")].map((c) => c.dataset.card),
                          said: message ? [message.dataset.code || "", message.textContent] : ["", ""] });
}).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
"""


@pytest.fixture
def live(mqtt_url: str, tmp_path: Path) -> Iterator[RunningStudio]:
    room = f"l{uuid.uuid4().hex[:6]}"
    config = StudioConfig(
        tables=(), tienlen_rooms=(room,), tienlen_settings=ROOM, run_dir=tmp_path, mqtt_url=mqtt_url,
        result_pause_ms=60_000,
    )  # fmt: skip
    with running_studio(config) as studio:
        yield studio


def enter(browser: Any, live: RunningStudio, name: str, lang: str = "") -> Any:  # noqa: F811
    return enter_room(browser, live, name, live.config.tienlen_rooms[0], RECORDER, lang)


def dealt(live: RunningStudio, pages: dict[str, Any]) -> str:
    """The round in which ana (seat 1) and binh (seat 2), seated from their pages, hold their hands on them."""
    for _attempt in range(5):  # a deal with an instant win (tới trắng) ends at once: then the next round
        round_id: str = pages["ana"].evaluate("document.body.dataset.round")
        for seat, name in (("1", "ana"), ("2", "binh")):
            pages[name].wait_for_selector(f"[data-sit='{seat}']")
            pages[name].click(f"[data-sit='{seat}']")
            pages[name].wait_for_selector("#message[data-code=seated]")
        # seating ends (the controller would at seating_ms): dealt online
        if live.service.close_window(round_id, "test").phase == "playing":
            break
        following = live.service.open_round(live.config.tienlen_rooms[0])
        for page in pages.values():
            page.wait_for_function(f"document.body.dataset.round === '{following}'")
    for page in pages.values():
        page.wait_for_selector("#hand:not([hidden]) #cards .card", timeout=20_000)
    return round_id


def test_players_play_and_pass_on_their_pages_and_see_the_payments(
    live: RunningStudio,
    browser: Any,  # noqa: F811 (after the studio: the browser closes first, so no page keeps the API's streams open)
) -> None:
    pages = {"ana": enter(browser, live, "ana"), "binh": enter(browser, live, "binh")}
    round_id = dealt(live, pages)

    # the player to act leads their lowest card from the page; the other sees it on the table, and passes
    turn = pages["ana"].get_attribute(".seat[data-state='to play']", "data-seat")
    leader, other = ("ana", "binh") if turn == "1" else ("binh", "ana")
    lowest = pages[leader].get_attribute("#cards .card:first-child", "data-card")
    pages[leader].click("#cards .card:first-child")
    pages[leader].click("#play")
    pages[leader].wait_for_selector("#message[data-code=played]")
    pages[other].wait_for_selector(f"#top .card[data-card='{lowest}']")
    # the leader's hand as the other sees it: 12 card backs, never a face (and none over their own hand)
    other_seat = "2" if turn == "1" else "1"
    backs = pages[other].wait_for_selector(f".seat[data-seat='{turn}'] .backs[data-count='12']")
    assert backs.eval_on_selector_all(".card", "cards => cards.map((c) => c.className)") == ["card back small"] * 12
    assert pages[other].query_selector(f".seat[data-seat='{other_seat}'] .backs") is None
    pages[other].wait_for_selector("#pass:not([disabled])")
    pages[other].click("#pass")
    pages[other].wait_for_selector("#message[data-code=passed]")

    # the leader's turn runs out: the table leads their lowest card for them, and their page says so (waited for: the
    # moves below come faster than a stream sends, and a page shows the latest view, not every one between)
    live.service.close_window(round_id, "test")
    pages[leader].wait_for_selector("#message[data-code=timed_out]")

    def over() -> bool:  # the rest of the turns run out, one by one (as the controller's clock would end them)
        if queries.round_state(live.service, round_id)["phase"] == "settled":
            return True
        live.service.close_window(round_id, "test")
        return False

    wait_until(over, 60, "the round to end")
    said = [s["said"] for page in pages.values() for s in page.evaluate("window.snapshots") if s["round"] == round_id]
    timed_out = [text for code, text in said if code == "timed_out"]
    assert timed_out and all(text.startswith("Your time ran out: ") for text in timed_out)  # the moves made for them
    state = queries.round_state(live.service, round_id)
    units = state["result"]["units"]
    for name, seat in (("ana", "1"), ("binh", "2")):
        pages[name].wait_for_selector("#net", timeout=15_000)
        assert int(pages[name].get_attribute("#net", "data-units")) == units[seat]
    assert sum(units.values()) == 0
    deck = [str(card) for card in verify(**state["shuffle"]).deck]
    hands = {"ana": set(deck[0:26:2]), "binh": set(deck[1:26:2])}
    with live.service.sessions() as session:
        rows = session.scalars(select(RoundLogEntry.command).where(RoundLogEntry.round_id == round_id))
        log = [json.loads(row) for row in rows]
    plays = [entry for entry in log if entry["type"] == "play"]
    played = {name: {card for e in plays if e["player"] == name for card in e["cards"]} for name in hands}
    for name, page in pages.items():
        other = "binh" if name == "ana" else "ana"
        seen = {
            card for s in page.evaluate("window.snapshots") if s["round"] == round_id and s["phase"] != "settled"
            for card in s["cards"]
        }  # fmt: skip
        assert seen & hands[other] <= played[other], name  # of the other's hand, only what they played
        assert seen & hands[name], name  # their own hand, on their page


def card_text(code: str) -> str:
    """A card as the pages write it (studio.js ``cardText``): "10♠", "Q♥"."""
    return {"T": "10"}.get(code[0], code[0]) + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[code[1]]


def test_a_refused_play_is_said_in_the_players_language_with_card_symbols(
    live: RunningStudio,
    browser: Any,  # noqa: F811
) -> None:
    """On a phone, in Vietnamese and in Thai: a play out of turn, and cards that form no combination, are refused
    with the pages' sentence (the cards drawn as cards), never the server's English."""
    words = dictionary()
    pages = {"ana": enter(browser, live, "ana", "vi"), "binh": enter(browser, live, "binh", "th")}
    dealt(live, pages)
    turn = pages["ana"].get_attribute(".seat[data-state='to play']", "data-seat")
    leader, other = ("ana", "binh") if turn == "1" else ("binh", "ana")
    lang = {"ana": "vi", "binh": "th"}

    pages[other].click("#cards .card:first-child")
    pages[other].click("#play")
    pages[other].wait_for_selector("#message[data-code=not_expected_now]")
    assert pages[other].inner_text("#message") == words["refusal.reason.out_of_turn"][lang[other]]

    lowest, highest = (
        pages[leader].get_attribute(f"#cards .card:{end}-child", "data-card") for end in ("first", "last")
    )
    pages[leader].click("#cards .card:first-child")
    pages[leader].click("#cards .card:last-child")
    pages[leader].click("#play")
    pages[leader].wait_for_selector("#message.refused")
    cards = f"{card_text(lowest)} {card_text(highest)}"
    assert pages[leader].inner_text("#message") == words["refusal.reason.no_combination"][lang[leader]].format(
        cards=cards
    )


def test_a_player_who_leaves_mid_round_is_warned_then_pays_as_one_who_never_played_and_earns_nothing(
    live: RunningStudio,
    browser: Any,  # noqa: F811
) -> None:
    pages = {"ana": enter(browser, live, "ana"), "binh": enter(browser, live, "binh")}
    round_id = dealt(live, pages)
    before = {name: live.service.profile(name).get("experience") or 0 for name in pages}  # (a round won at the deal)
    pages["binh"].click("[data-leave='2']")  # once: the page says what leaving costs, and asks again
    warning = pages["binh"].wait_for_selector(".seat[data-seat='2'] .hint")
    assert warning.inner_text() == dictionary()["tienlen.leave_warning"]["en"]
    pages["binh"].click("[data-stay='2']")  # not yet
    assert pages["binh"].query_selector("[data-leave-confirm='2']") is None
    pages["binh"].click("[data-leave='2']")
    pages["binh"].click("[data-leave-confirm='2']")
    pages["binh"].wait_for_selector("#message[data-code=left]")
    assert pages["binh"].inner_text("#message").startswith("You left this round")
    # two players: with binh gone, ana wins at once; binh pays as a player who never played a card, or more
    state = queries.round_state(live.service, round_id)
    assert state["phase"] == "settled" and state["result"]["winner"] == "1"
    units = state["result"]["units"]
    assert units["2"] <= -26 and units["1"] == -units["2"]
    pages["ana"].wait_for_selector(".seat[data-seat='2'][data-state='left']")
    earned = {name: (live.service.profile(name).get("experience") or 0) - before[name] for name in pages}
    assert earned == {"ana": 1, "binh": 0}, "a leaver earns no experience points"
