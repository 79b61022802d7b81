"""Screenshots of every page of the studio, for the docs: ``make screenshots`` (or ``.venv/bin/python
scripts/screenshots.py [--out DIR] [--no-ops-scenarios]``).

It starts a studio on this machine as ``studio demo --forever`` does (the production assembly: embedded broker,
SQLite in a temporary folder, API, controller, simulated shoes and dealers, simulated players), signs in where a
page asks for a token, waits until each page shows a round in play and saves it as a PNG under ``docs/screenshots/``:
the tables (``index.png``), a Pok Deng player's page (``play.png``, phone size), a baccarat player's page
(``coup.png``, phone size), a Mậu Binh room (``room-maubinh.png``) and a Tiến Lên room (``room-tienlen.png``), each
with the person at the page seated and holding cards, the dealer console (``console.png``), the overlay
(``overlay.png``) and the operator's page with a settled round in full (``ops-round.png``). Then, unless
``--no-ops-scenarios``, it runs the browser test of the operator's page with ``STUDIO_SCREENSHOTS`` set, which saves
the four-eyes scenarios (``ops-correction.png``, ``ops-void.png``, ``ops-deck.png``, ``ops-camera-check.png``).

The browser is Debian's Chromium at ``/usr/bin/chromium`` driven by Playwright (``apt-get install -y chromium``);
no browser is ever downloaded. Exit status 0 when every page was saved, 1 otherwise, 2 without Chromium.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.rounds.adapters import SeatIn  # noqa: E402 (after the path: the script runs from a checkout)
from services.rounds.maubinh import ReadyIn  # noqa: E402
from services.rounds.returns import HOUSE_SETTINGS  # noqa: E402
from services.studio.assembly import RunningStudio, StudioConfig, running_studio  # noqa: E402
from services.studio.players import SimulatedCoupBettors, SimulatedPlayers  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
WAIT_MS = 60_000
POKDENG = HOUSE_SETTINGS | {"betting_window_ms": 6_000, "insurance_window_ms": 4_000, "decision_window_ms": 4_000}
MAUBINH = {"unit": 10, "ready_ms": 30_000, "arranging_ms": 120_000, "showdown_ms": 3_000}
TIENLEN = {"unit": 10, "seating_ms": 2_000, "turn_ms": 60_000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="where the PNGs go")
    parser.add_argument(
        "--no-ops-scenarios", action="store_true", help="skip the operator's page scenarios (the browser test)"
    )
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"screenshots: {CHROMIUM} is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    failed = pages(args.out)
    if not args.no_ops_scenarios:
        failed += ops_scenarios(args.out)
    print(f"screenshots: {'failed: ' + ', '.join(failed) if failed else 'every page saved'} in {args.out}")
    return 1 if failed else 0


def pages(out: Path) -> list[str]:
    """Start a studio, open each page and save it; the names of the pages that could not be saved."""
    from playwright.sync_api import sync_playwright

    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="studio-screenshots-") as directory:
        config = StudioConfig(
            tables=("T1",), run_dir=Path(directory), table_settings=POKDENG, result_pause_ms=5_000,
            rooms=("MB1",), room_settings=MAUBINH, tienlen_rooms=("TL1",), tienlen_settings=TIENLEN,
            coup_tables=(("B1", "baccarat"),), coup_settings={"baccarat": {"betting_ms": 6_000}},
        )  # fmt: skip
        with running_studio(config) as studio, sync_playwright() as playwright:
            stop = threading.Event()
            players = [
                threading.Thread(target=SimulatedPlayers(studio, 1).run, args=(stop,), daemon=True),
                threading.Thread(target=SimulatedCoupBettors(studio, "baccarat", 2).run, args=(stop,), daemon=True),
            ]
            for thread in players:
                thread.start()
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            shots: list[tuple[str, Callable[[Any, RunningStudio, Path], None]]] = [
                ("index.png", index), ("play.png", play), ("coup.png", coup), ("console.png", console),
                ("overlay.png", overlay), ("room-maubinh.png", room_maubinh), ("room-tienlen.png", room_tienlen),
                ("ops-round.png", ops_round),
            ]  # fmt: skip
            try:
                for name, shoot in shots:
                    try:
                        shoot(browser, studio, out / name)
                        print(f"  saved {out / name}", flush=True)
                    except Exception as error:  # one page's failure is reported; the others are still taken
                        print(f"  {name}: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
                        failed.append(name)
            finally:
                browser.close()
                stop.set()
                for thread in players:
                    thread.join(timeout=5)
    return failed


def player(studio: RunningStudio, name: str) -> str:
    """A new player ``name``-xxxx with 1,000,000 minor units: their token."""
    who = f"{name}-{uuid.uuid4().hex[:4]}"
    token = studio.players.register(who)
    studio.wallets.deposit(who, 1_000_000, key=f"screenshots-{who}", actor="screenshots")
    return token


def staff(studio: RunningStudio, role: str) -> str:
    who = f"{role}-{uuid.uuid4().hex[:4]}"
    token = studio.players.register(who, role)
    if role == "dealer":
        for table in studio.config.shoe_tables:
            studio.players.assign(table, who)
    return token


def signed_in(browser: Any, url: str, token: str, viewport: dict[str, int], ready: str) -> Any:
    """A page at ``url`` in a context of its own, signed in with ``token``, once ``ready`` (a JS condition) holds."""
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_function(ready, timeout=WAIT_MS)
    return page


def index(browser: Any, studio: RunningStudio, path: Path) -> None:
    page = browser.new_context(viewport=DESKTOP).new_page()
    page.goto(f"{studio.api_url}/")
    page.wait_for_selector("a[href='/play/T1']", timeout=WAIT_MS)
    page.screenshot(path=str(path))


def play(browser: Any, studio: RunningStudio, path: Path) -> None:
    """A Pok Deng round settled, seen by a player who bet on it (the page's own chips and "Place bets")."""
    page = signed_in(browser, f"{studio.api_url}/play/T1", player(studio, "you"), PHONE,
                     "document.body.dataset.phase === 'betting'")  # fmt: skip
    page.click(".chip >> nth=2")
    page.click(".spot[data-side='player'][data-seat='A']")
    page.click("#place")
    page.wait_for_function("document.body.dataset.phase === 'settled'", timeout=WAIT_MS)
    time.sleep(1.0)  # the result's banner comes in
    page.screenshot(path=str(path))


def coup(browser: Any, studio: RunningStudio, path: Path) -> None:
    page = signed_in(browser, f"{studio.api_url}/coup/B1", player(studio, "you"), PHONE,
                     "document.body.dataset.phase === 'settled'")  # fmt: skip
    time.sleep(1.0)
    page.screenshot(path=str(path))


def console(browser: Any, studio: RunningStudio, path: Path) -> None:
    page = signed_in(browser, f"{studio.api_url}/console/T1", staff(studio, "dealer"), DESKTOP,
                     "document.querySelector('#next').textContent.startsWith('Deal ')")  # fmt: skip
    page.wait_for_function("document.querySelectorAll('.hand .card').length >= 4", timeout=WAIT_MS)
    page.screenshot(path=str(path))


def overlay(browser: Any, studio: RunningStudio, path: Path) -> None:
    page = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    page.goto(f"{studio.api_url}/overlay/T1")
    page.wait_for_function("document.body.dataset.phase === 'settled'", timeout=WAIT_MS)
    time.sleep(1.5)  # the result's banners come in
    page.screenshot(path=str(path))


def room_maubinh(browser: Any, studio: RunningStudio, path: Path) -> None:
    """The person at the page sits at seat 1 and is ready, a second player (through the service) at seat 2: the
    deal starts and the page shows their own 13 cards laid out as the suggested arrangement."""
    page = signed_in(browser, f"{studio.api_url}/room/MB1", player(studio, "you"), PHONE,
                     "document.body.dataset.phase === 'seating'")  # fmt: skip
    round_id = page.evaluate("document.body.dataset.round")
    page.click("[data-sit='1']")
    page.wait_for_selector("#message[data-code=seated]", timeout=WAIT_MS)
    page.click("[data-ready='1']")
    other = f"gia-{uuid.uuid4().hex[:4]}"
    studio.players.register(other)
    studio.wallets.deposit(other, 100_000, key=f"screenshots-{other}", actor="screenshots")
    studio.service.act(other, round_id, "sit", SeatIn(seat="2"), uuid.uuid4().hex)
    studio.service.act(other, round_id, "ready", ReadyIn(), None)
    page.wait_for_function("document.querySelectorAll('#rows .card').length === 13", timeout=WAIT_MS)
    time.sleep(0.5)
    page.screenshot(path=str(path))


def room_tienlen(browser: Any, studio: RunningStudio, path: Path) -> None:
    """The person at the page and a second player sit; once seating ends the page shows their hand and whose turn."""
    page = signed_in(browser, f"{studio.api_url}/room/TL1", player(studio, "you"), PHONE,
                     "document.body.dataset.phase === 'seating'")  # fmt: skip
    round_id = page.evaluate("document.body.dataset.round")
    page.click("[data-sit='1']")
    page.wait_for_selector("#message[data-code=seated]", timeout=WAIT_MS)
    other = f"mai-{uuid.uuid4().hex[:4]}"
    studio.players.register(other)
    studio.wallets.deposit(other, 100_000, key=f"screenshots-{other}", actor="screenshots")
    studio.service.act(other, round_id, "sit", SeatIn(seat="2"), uuid.uuid4().hex)
    page.wait_for_function("document.body.dataset.phase === 'playing'", timeout=WAIT_MS)
    time.sleep(1.0)
    page.screenshot(path=str(path))


def ops_round(browser: Any, studio: RunningStudio, path: Path) -> None:
    """The operator's page with a settled Pok Deng round shown in full."""
    page = signed_in(browser, f"{studio.api_url}/ops", staff(studio, "operator"), {"width": 1500, "height": 1100},
                     "!document.querySelector('#ops').hidden")  # fmt: skip
    state = page.wait_for_selector("#rounds tr[data-round^='T1-'] .state.settled", timeout=WAIT_MS)
    round_id = state.evaluate("(node) => node.closest('tr').dataset.round")
    page.evaluate("(id) => { location.hash = 'round=' + id; }", round_id)
    page.wait_for_function("(id) => document.body.dataset.round === id", arg=round_id, timeout=WAIT_MS)
    time.sleep(0.5)
    page.screenshot(path=str(path), full_page=True)


def ops_scenarios(out: Path) -> list[str]:
    """The operator's page scenarios (four eyes, a held deck, a disputed read), saved by their browser test."""
    test = "tests/browser/test_ops_page_in_chromium.py"
    env = os.environ | {"STUDIO_SCREENSHOTS": str(out.resolve()), "STUDIO_REQUIRE_BROWSER": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test], cwd=ROOT, env=env)
    return [] if done.returncode == 0 else [test]


if __name__ == "__main__":
    sys.exit(main())
