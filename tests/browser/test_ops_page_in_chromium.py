"""The operator's page (``/ops``) in a real browser (Debian's Chromium, headless), with two operator accounts.

The rounds are played through the API on a real database, then a second API process on the same database serves
the page under uvicorn, as ``studio up`` does. Operator op corrects one settled round from the video (the preview is
what gets posted) and proposes the void of another whose correction would change the deal (only void is offered);
operator op2 approves both in their own browser. Then a deck ends short and op acknowledges it, lifting the hold.
Skipped where Chromium is not installed, unless ``STUDIO_REQUIRE_BROWSER`` is set (as in CI).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from services.api.app import create_app
from services.api.server import api_server
from tests.api.conftest import Studio, studio  # noqa: F401 (the fixture)
from tests.api.test_deck_reports import end_a_deck_without
from tests.api.test_four_eyes import balances, settled_round
from tests.browser.test_pages_in_chromium import browser  # noqa: F401 (the fixture)
from tests.conftest import free_port
from tests.support import wait_until

SHOTS = os.environ.get("STUDIO_SCREENSHOTS")  # a folder: the test saves the page there (README's screenshots)


def serving(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on a free port while the generator runs; yields its URL."""
    server = api_server(app, "127.0.0.1", free_port(), log_level="warning")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 15, "uvicorn")
    yield f"http://127.0.0.1:{server.config.port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture
def served(database: Engine) -> Iterator[str]:
    """The API with its pages under uvicorn on a free port, on the test's database."""
    yield from serving(create_app(database))


def signed_in(browser: Any, url: str, token: str) -> Any:  # noqa: F811
    page = browser.new_context(viewport={"width": 1500, "height": 1100}).new_page()
    page.goto(f"{url}/ops")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_selector("#ops:not([hidden])", timeout=15_000)
    return page


def shown(page: Any, round_id: str) -> None:
    page.evaluate("(id) => { location.hash = 'round=' + id; }", round_id)
    page.wait_for_function("(id) => document.body.dataset.round === id", arg=round_id, timeout=15_000)


def record(studio: Studio, round_id: str) -> Any:  # noqa: F811
    return studio.client.get(f"/v1/operator/rounds/{round_id}", headers=studio.auth("op")).json()


def approve(page: Any, proposal: str) -> None:
    page.reload()
    # locators, found again at each use: the lists are drawn again as they refresh (a handle can go stale)
    page.locator(f"#proposals li[data-proposal='{proposal}'] button.approve").click(timeout=15_000)
    page.wait_for_selector(f"#proposals li[data-proposal='{proposal}']", state="detached", timeout=15_000)
    said = page.wait_for_selector(f"#decided[data-proposal='{proposal}']:not([hidden])", timeout=15_000)
    assert said.inner_text().startswith(f"Proposal #{proposal} applied — round ")  # said, not only "none waiting"


def test_operators_correct_a_round_and_void_another_with_four_eyes(
    browser: Any,  # noqa: F811
    studio: Studio,  # noqa: F811
    served: str,
) -> None:
    corrected, voided = settled_round(studio, "c"), settled_round(studio, "v")
    expected = studio.post("op", f"/v1/operator/rounds/{corrected}/preview", {"cards": {"8": "2C"}}).json()  # type: ignore[attr-defined]
    op = signed_in(browser, served, studio.tokens["op"])
    op2 = signed_in(browser, served, studio.tokens["op2"])
    assert op.text_content("#me") == "signed in as op"
    op.click("#tables-details summary")  # each table's returns: t1 runs the rules' defaults by an operator's word
    returns = op.text_content("#tables tr[data-table='t1']")
    assert "allowed ≥ 100 %" in returns and "100.92 %" in returns and "84.1176 %" in returns, returns
    op.wait_for_selector(f"#rounds tr[data-round='{corrected}']")

    # op corrects B's third card (index 8) from the video: the preview is what the API previews
    shown(op, corrected)
    assert op.text_content("#d-cards tr:nth-child(9) td:nth-child(2)") == "B"
    op.fill("#d-cards input[data-index='8']", "2c")
    op.click("#preview")
    op.wait_for_selector("#preview-out[data-state='ok']")
    on_page = {
        row.get_attribute("data-player"): int(row.get_attribute("data-adjustment"))
        for row in op.query_selector_all("#preview-out tr[data-player]")
    }
    assert on_page == {player: change["adjustment"] for player, change in expected["players"].items()}
    assert on_page["ana"] == -100
    op.fill("#video-ref", "cam1@00:01:02:03")
    op.click("#propose-correction")
    op.wait_for_function("document.querySelector('#action-message').textContent.includes('proposed')")
    proposal = op.get_attribute("#d-proposals li", "data-proposal")
    mine = f"#proposals li[data-proposal='{proposal}'] button.approve"
    op.wait_for_selector(mine)
    # a locator, found again at each look: the list is drawn again as it refreshes (a handle went stale under load)
    assert op.locator(mine).is_disabled(), "the proposer cannot approve their own proposal"
    assert record(studio, corrected)["state"] == "settled", "nothing moves before a second operator approves"
    if SHOTS:
        op.screenshot(path=str(Path(SHOTS) / "ops-correction.png"), full_page=True)

    # op2 approves it: the money posted is the preview's
    before = balances(studio)
    approve(op2, proposal)
    after = balances(studio)
    assert {who: after[who] - before[who] for who in after} == {
        who: expected["players"].get(who, {"adjustment": 0})["adjustment"] for who in after
    }
    assert record(studio, corrected)["state"] == "corrected"

    # a correction of the banker's face-up card would change the insurance offer: only void is offered
    shown(op, voided)
    op.fill("#d-cards input[data-index='3']", "2C")
    op.click("#preview")
    op.wait_for_selector("#preview-out[data-state='flow_changed']")
    said = op.text_content("#preview-out")  # the page's sentence, not the engine's account of the replay
    assert "only a void is possible" in said and "refused" not in said and "dealt" not in said, said
    assert op.is_disabled("#propose-correction")
    op.fill("#void-reason", "the dealer exposed the banker's card")
    op.click("#void")
    op.wait_for_function("document.querySelector('#action-message').textContent.includes('Void proposed')")
    proposal = op.get_attribute("#d-proposals li", "data-proposal")
    before = balances(studio)
    nets = {w["player"]: w["net"] for w in record(studio, voided)["wagers"]}
    approve(op2, proposal)
    assert record(studio, voided)["state"] == "void"
    after = balances(studio)
    assert {who: after[who] - before[who] for who in after} == {who: -nets[who] for who in after}
    shown(op2, voided)
    op2.wait_for_selector("#d-proposals li[data-status='applied']")
    assert "applied by op2" in op2.text_content("#d-proposals")
    if SHOTS:
        op2.screenshot(path=str(Path(SHOTS) / "ops-void.png"), full_page=True)

    # a deck ends two cards short: the table is held until an operator, having counted, acknowledges it
    end_a_deck_without(studio, "7D", "QS")
    op.reload()
    op.wait_for_selector("#held-decks li", timeout=15_000)
    held = op.locator("#held-decks li")
    assert "missing: 7♦ Q♠" in held.text_content() or "missing: Q♠ 7♦" in held.text_content()
    if SHOTS:
        op.screenshot(path=str(Path(SHOTS) / "ops-deck.png"))
    held.locator("button.acknowledge").click()
    assert "Say what the count found" in op.text_content("#held-decks")
    op.fill("#held-decks .deck-note", "7D and QS found stuck in the shoe")
    op.click("#held-decks button.acknowledge")
    op.wait_for_selector("#held-decks li", state="detached", timeout=15_000)
    [report] = studio.client.get("/v1/operator/decks", headers=studio.auth("op")).json()
    assert report["status"] == "acknowledged" and report["acknowledged"]["by"] == "op"


def test_an_operator_settles_a_held_round_by_saying_which_read_of_a_disputed_card_is_right(
    browser: Any,  # noqa: F811
    studio: Studio,  # noqa: F811
    served: str,
) -> None:
    from tests.api.test_card_checks import held_round

    round_id = held_round(studio, misread=0, seen="6D")  # the shoe read 5H, the overhead camera saw 6D
    op = signed_in(browser, served, studio.tokens["op"])
    shown(op, round_id)
    disputed = "#d-checks tr[data-check='0']"
    op.wait_for_selector(disputed, timeout=15_000)
    assert "the camera saw another card" in op.text_content(disputed)
    op.wait_for_function(f'document.querySelector("{disputed} img.crop")?.naturalWidth > 0')
    assert op.query_selector("#d-checks tr[data-check='1'] button") is None  # agreed: nothing to decide
    op.click(f"{disputed} button.confirm-camera")
    op.wait_for_function(f"document.querySelector(\"{disputed}\").textContent.includes('Say what the video shows')")
    assert record(studio, round_id)["settled_at"] is None
    op.fill(f"{disputed} input.check-reason", "the video shows the six of diamonds")
    op.click(f"{disputed} button.confirm-camera")
    op.wait_for_function(f"document.querySelector(\"{disputed}\")?.textContent.includes('confirmed by op')")
    settled = record(studio, round_id)
    assert settled["settled_at"] is not None and settled["cards"][0]["card"] == "6D"
    assert settled["checks"][0]["confirmed_read"] == "camera"
    if SHOTS:
        op.screenshot(path=str(Path(SHOTS) / "ops-camera-check.png"), full_page=True)


def test_a_card_by_hand_is_proposed_on_the_page_dealt_on_a_second_operators_word_and_the_staff_log_shows_it(
    browser: Any,  # noqa: F811
    studio: Studio,  # noqa: F811
    served: str,
) -> None:
    studio.client.patch("/v1/operator/tables/t1", json={"manual_cards": True}, headers=studio.auth("op"))
    refused = studio.post("op", "/v1/operator/players", {"id": "sock", "role": "operator"})
    assert refused.status_code == 403  # type: ignore[attr-defined]
    round_id = studio.client.post("/v1/operator/tables/t1/rounds", json={}, headers=studio.auth("dealer")).json()[
        "round_id"
    ]
    studio.post("dealer", f"/v1/operator/rounds/{round_id}/close-betting")
    page = signed_in(browser, served, studio.tokens["op"])
    shown(page, round_id)
    page.wait_for_selector("#card-box:not([hidden])", timeout=15_000)
    page.fill("#hand-card", "5h")
    page.click("#propose-card")
    page.wait_for_selector("#action-message.error", timeout=15_000)  # no reason given: said, nothing sent
    assert studio.client.get("/v1/operator/proposals", headers=studio.auth("op")).json() == []
    page.fill("#hand-reason", "the reader skipped it")
    page.click("#propose-card")
    page.wait_for_selector("#action-message.ok", timeout=15_000)
    [proposal] = studio.client.get("/v1/operator/proposals", headers=studio.auth("op")).json()
    assert (proposal["action"], proposal["details"]["card"]) == ("card", "5H")
    page.wait_for_selector(f"#proposals li[data-proposal='{proposal['id']}']", timeout=15_000)
    # not one's own
    assert page.locator(f"#proposals li[data-proposal='{proposal['id']}'] button.approve").is_disabled()
    second = signed_in(browser, served, studio.tokens["op2"])
    approve(second, str(proposal["id"]))
    state = studio.client.get(f"/v1/rounds/{round_id}", headers=studio.auth("ana")).json()
    assert state["hands"]["A"]["cards"] == ["5H"]
    made = studio.post("admin", "/v1/operator/players", {"id": "newop", "role": "operator"})
    assert made.status_code == 201  # type: ignore[attr-defined]
    admin = signed_in(browser, served, studio.tokens["admin"])
    admin.wait_for_selector("#staff-log tr[data-action='refused']", timeout=15_000)
    admin.wait_for_selector("#unconfirmed li[data-account='newop']", timeout=15_000)
    # the admin who made it cannot confirm it
    assert admin.locator("#unconfirmed li[data-account='newop'] button.confirm").is_disabled()
    assert admin.is_hidden("#list") and admin.is_hidden("#pending")  # an admin's page is the staff log alone
    refusal = admin.inner_text("#staff-log tr[data-action='refused']")
    assert "op (operator)" in refusal and "POST /v1/operator/players — Only an admin manages staff" in refusal
