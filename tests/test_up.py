"""``studio up``: the whole studio until stopped, printing URLs that work."""

from __future__ import annotations

import json
import re
import signal
import stat
import urllib.request
from pathlib import Path

from sqlalchemy import func, select

from services.journal.models import DeckReport, ShoeJournal
from services.rounds.models import Round
from services.studio.assembly import RunningStudio, StudioConfig, running_studio
from services.studio.dealer import PhysicalShoe, keep, kept
from tests.support import studio_command, wait_until


def test_studio_up_prints_working_urls_for_the_api_console_overlay_and_broker_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    arguments = ["up", "--api-port", "0", "--tables", "U1", "--run-dir", "run"]
    with studio_command(arguments, tmp_path, until="console token", timeout=60) as (process, out):
        pattern = r"^\s+(API|U1 dealer console|U1 overlay|U1 player's page|broker)\s+(\S+)"
        urls = dict(re.findall(pattern, out, re.MULTILINE))
        assert set(urls) == {"API", "U1 dealer console", "U1 overlay", "U1 player's page", "broker"}, out
        assert urls["broker"].startswith("mqtt://127.0.0.1:") and not urls["broker"].endswith(":1883")
        public = re.search(r"read-only public feed: (mqtt://public:[^@\s]+@127\.0\.0\.1:\d+)", out)
        assert public is not None and public.group(1).endswith(urls["broker"].rsplit(":", 1)[1]), out
        assert (tmp_path / "run" / "broker.url").read_text().strip() == urls["broker"]
        with urllib.request.urlopen(f"{urls['API']}/v1/tables") as response:
            assert [t["table_id"] for t in json.loads(response.read())] == ["U1"]
        for page in ("U1 dealer console", "U1 overlay", "U1 player's page"):
            with urllib.request.urlopen(urls[page]) as response:
                assert response.status == 200 and b"/static/studio.js" in response.read()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


# ---- the studio on its run directory: restarted, and at the end of each deck --------------------------------------

FAST = {"betting_window_ms": 200, "insurance_window_ms": 100, "decision_window_ms": 100}


def fast_studio(run_dir: Path, table: str) -> StudioConfig:
    """One table, dealt by its simulated dealer at full speed: a deck lasts a few seconds."""
    return StudioConfig(
        tables=(table,), run_dir=run_dir, table_settings=FAST, allow_return_over_100=True, result_pause_ms=50,
        dealer_pace=0.01,
    )  # fmt: skip


def settled(studio: RunningStudio, table: str) -> int:
    with studio.service.sessions() as session:
        return int(
            session.scalar(
                select(func.count()).select_from(Round).where(Round.table_id == table, Round.phase == "settled")
            )
            or 0
        )


def deck_reports(studio: RunningStudio, table: str) -> list[tuple[str, int]]:
    with studio.service.sessions() as session:
        rows = session.execute(
            select(DeckReport.status, DeckReport.seen).where(DeckReport.table_id == table).order_by(DeckReport.id)
        )
        return [(status, seen) for status, seen in rows]


def journal(studio: RunningStudio, table: str) -> list[tuple[str | None, str, bool, str]]:
    with studio.service.sessions() as session:
        rows = session.execute(
            select(ShoeJournal.card, ShoeJournal.disposition, ShoeJournal.burn, ShoeJournal.reason)
            .where(ShoeJournal.table_id == table)
            .order_by(ShoeJournal.id)
        )
        return [(card, disposition, burn, reason) for card, disposition, burn, reason in rows]


def test_the_end_of_each_deck_is_burned_as_the_console_asks_and_no_card_is_refused(tmp_path: Path) -> None:
    """Found in review: the console asked the dealer to run the rest of the deck through the shoe as burns, and each
    of those cards (the line dialect has no burn marker) was refused as scanned while no card was expected."""
    with running_studio(fast_studio(tmp_path / "run", "B1")) as studio:
        wait_until(lambda: len(deck_reports(studio, "B1")) >= 2, 120, "two decks to end")
        rows = journal(studio, "B1")
    assert [row for row in rows if row[1] == "refused"] == []
    assert any(disposition == "burn" and not burn for _card, disposition, burn, _reason in rows)
    assert deck_reports(studio, "B1")[:2] == [("ok", 52), ("ok", 52)]


def test_studio_up_stopped_and_started_again_on_its_run_directory_carries_on_its_tables(tmp_path: Path) -> None:
    """Found in review: the restarted simulated dealer shuffled a fresh deck while the controller, rebuilt from its
    journal, had seen cards of the deck in progress: its first card was refused and it never dealt again."""
    config = fast_studio(tmp_path / "run", "R1")
    path = tmp_path / "run" / "dealer-R1.shoe"  # the dealer's shoe: the cards not dealt yet

    def mid_deck() -> bool:
        shoe = kept(path, "R1")
        return shoe is not None and 0 < len(shoe.cards) < 52

    with running_studio(config) as studio:
        wait_until(lambda: settled(studio, "R1") >= 3 and mid_deck(), 60, "three rounds, and a deck dealt from")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with running_studio(config) as studio:
        before = settled(studio, "R1")
        decks = len(deck_reports(studio, "R1"))
        wait_until(lambda: settled(studio, "R1") >= before + 3, 60, "rounds after the restart")
        wait_until(lambda: len(deck_reports(studio, "R1")) > decks, 60, "the deck in progress to end")
        rows = journal(studio, "R1")
        reports = deck_reports(studio, "R1")
    assert [row for row in rows if row[1] == "refused"] == []
    assert reports and all(status == "ok" for status, _seen in reports), reports


def test_the_dealers_shoe_is_kept_privately_and_one_that_does_not_match_is_not_used(tmp_path: Path) -> None:
    shoe = PhysicalShoe("T1", ("AS", "KD", "2C"), dealt=(("r1", "A", 0),), answered="2026-12-03T00:00:00+00:00")
    path = tmp_path / "dealer-T1.shoe"
    keep(path, shoe)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and kept(path, "T1") == shoe
    assert kept(path, "T2") is None  # another table's shoe
    assert kept(tmp_path / "none.shoe", "T1") is None
    for text in ("not json", '{"v": 1, "table": "T1", "cards": ["AS", "AS"], "dealt": [], "answered": ""}'):
        path.write_text(text)
        assert kept(path, "T1") is None
    eight = PhysicalShoe("B1", ("AS",) * 8 + ("KD",), decks=8)  # a baccarat shoe: eight of each card at most
    keep(path, eight)
    assert kept(path, "B1", decks=8) == eight and kept(path, "B1") is None  # kept for 8 decks, not for one
    path.write_text(eight.text().replace('"KD"', '"AS"'))  # a ninth ace of spades
    assert kept(path, "B1", decks=8) is None
