"""Benchmark: a dealt card's transaction in the round service, as the controller runs it, beside the same statements
sent bare to the database (the floor).

    .venv/bin/python bench/deal.py [--cards 4000]

The card's transaction is ``RoundService.deal`` with the controller's lease fence set and the card's journal row
written in the same transaction (``TableJournal.add``): the round locked (the fence read in the same statement), the
engine's step, the log entry, the journal row, the round's own row, the commit — and the round's public and dealer
views computed for the controller to publish. Each round takes the first eight cards of a Pok Deng deal (the two
each of seats A–C and the banker) and is then voided (not timed).

The floor is the same work as the database sees it, sent bare through the driver (``sqlite3``) on the same file with
the same settings: ``BEGIN IMMEDIATE``, the round's row read with the lease's epoch, the two inserts, the round's
update, ``COMMIT`` (an ``fsync``): what any design that writes each card durably in one transaction pays. SQLite
(the controller's default in ``bench/controller.py``), a fresh file in a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.shoe import percentiles
from services.cards import Card
from services.catalog import STUDIO_GAMES
from services.controller.leases import Leases
from services.db import make_engine, migrate, session_factory
from services.journal.table import TableJournal
from services.rounds.pokdeng import pokdeng
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import RoundService

TABLE, SHOE, OWNER = "D1", "D1-shoe", "bench-deal"
# the round's row with this writer's lease epoch (the fence), as the service reads it
LOCKED_READ = (
    "SELECT rounds.*, (SELECT epoch FROM table_leases WHERE table_leases.table_id = rounds.table_id "
    "AND table_leases.owner = ?) FROM rounds WHERE rounds.id = ?"
)
CARDS = [
    Card.from_code(code) for code in ["5H", "2D", "KD", "9S", "TH", "4S", "3C", "5C"]
]  # a deal's first eight: no window opens


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--cards", type=int, default=4_000, help="cards to time (eight a round)")
    args = parser.parse_args()
    if args.cards < len(CARDS):
        parser.error(f"--cards must be at least {len(CARDS)} (one round's deal)")
    with tempfile.TemporaryDirectory(prefix="bench-deal-") as directory:
        path = Path(directory) / "studio.db"
        engine = make_engine(f"sqlite:///{path}")
        service, journal = studio(engine)
        dealt(service, journal, 400)  # warm: the caches, the statements' compiled forms
        deals, cpu = dealt(service, journal, args.cards)
        engine.dispose()
        bare(path, 400)
        floor = bare(path, args.cards)
    report(args.cards, deals, cpu, floor)


def studio(engine: Engine) -> tuple[RoundService, TableJournal]:
    """A migrated database with one Pok Deng table whose lease this process holds (its writes fenced, as the
    controller's are)."""
    migrate(engine)
    sessions = session_factory(engine)
    service = RoundService(sessions, games=STUDIO_GAMES)
    service.create_table(TABLE, "THB", HOUSE_SETTINGS)
    leases = Leases(sessions, OWNER)
    if leases.try_acquire(TABLE) is not None:
        raise SystemExit("the bench table's lease is held elsewhere")
    service.fence = leases
    return service, TableJournal(sessions, TABLE, SHOE)


def dealt(service: RoundService, journal: TableJournal, cards: int) -> tuple[list[float], float]:
    """Deal ``cards`` cards, eight a round: each card's wall time, and the CPU time of them all."""
    times: list[float] = []
    cpu = 0.0
    seq = last_seq(service)
    while len(times) < cards:
        round_id = service.open_round(TABLE)
        pokdeng(service).close_betting(round_id)
        for card in CARDS[: cards - len(times)]:
            seq += 1
            entry = journal_entry(round_id, card, seq)
            began, began_cpu = time.perf_counter(), time.process_time()
            service.deal(round_id, card, actor=f"shoe:{seq}", also=lambda session, e=entry: journal.add(session, e))
            times.append(time.perf_counter() - began)
            cpu += time.process_time() - began_cpu
        service.void(round_id, "bench", "bench")
    return times, cpu


def last_seq(service: RoundService) -> int:
    """The journal's last sequence number so far (a second run of ``dealt`` carries on from it)."""
    with service.sessions() as session:
        return int(session.connection().exec_driver_sql("SELECT coalesce(max(seq), 0) FROM shoe_journal").scalar())


def journal_entry(round_id: str, card: Card, seq: int) -> dict[str, Any]:
    now = datetime.now(UTC)
    return dict(
        table_id=TABLE, shoe_id=SHOE, boot_id="bench", seq=seq, kind="card", card=str(card), burn=False,
        disposition="dealt", reason="", round_id=round_id, video_tc="", source="shoe", confidence=1.0,
        raw=f"{card}\r\n", received_at=now, stamped_at=now, crop=None,
    )  # fmt: skip


def bare(path: Path, cards: int) -> list[float]:
    """The floor: each card's statements sent bare through ``sqlite3`` on the same file, one transaction each."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA foreign_keys = ON")  # as the studio's engine sets them (``services.db.engine``)
    db.execute("PRAGMA journal_mode = WAL")
    round_id = db.execute("SELECT id FROM rounds ORDER BY number DESC LIMIT 1").fetchone()[0]
    seq = db.execute("SELECT coalesce(max(seq), 0) FROM shoe_journal").fetchone()[0]
    length = db.execute("SELECT log_length FROM rounds WHERE id = ?", (round_id,)).fetchone()[0]
    times: list[float] = []
    for _ in range(cards):
        seq, length = seq + 1, length + 1
        now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        began = time.perf_counter()
        db.execute("BEGIN IMMEDIATE")
        db.execute(LOCKED_READ, (OWNER, round_id)).fetchone()
        db.execute(
            "INSERT INTO round_log (round_id, seq, command, actor, created_at) VALUES (?, ?, ?, ?, ?)",
            (round_id, length, '{"type": "deal", "card": "5H"}', f"shoe:{seq}", now),
        )
        db.execute(
            "INSERT INTO shoe_journal (table_id, shoe_id, boot_id, seq, kind, card, burn, disposition, reason, "
            "round_id, video_tc, source, confidence, raw, received_at, stamped_at) "
            "VALUES (?, ?, ?, ?, 'card', '5H', 0, 'dealt', '', ?, '', 'shoe', 1.0, '5H', ?, ?)",
            (TABLE, SHOE, "floor", seq, round_id, now, now),
        )
        db.execute("UPDATE rounds SET phase = ?, log_length = ? WHERE id = ?", ("dealing", length, round_id))
        db.execute("COMMIT")
        times.append(time.perf_counter() - began)
    db.close()
    return times


def report(cards: int, deals: list[float], cpu: float, floor: list[float]) -> None:
    deal, base = percentiles(deals), percentiles(floor)
    print(f"{cards} cards dealt through the round service (SQLite, fenced, journaled)")
    print(f"{'what':<52}{'p50 ms':>8}{'p99 ms':>8}{'mean ms':>9}")
    for label, values in (("floor: the same statements, bare (sqlite3)", base), ("the card's transaction", deal)):
        print(f"{label:<52}{values[0]:>8.3f}{values[1]:>8.3f}{values[3]:>9.3f}")
    print(f"CPU per card {1000 * cpu / cards:.3f} ms; ratio p50 {deal[0] / base[0]:.1f}×, p99 {deal[1] / base[1]:.1f}×")
    figures = {
        "cards": cards, "deal_p50_ms": round(deal[0], 3), "deal_p99_ms": round(deal[1], 3),
        "deal_cpu_ms": round(1000 * cpu / cards, 3), "floor_p50_ms": round(base[0], 3),
        "floor_p99_ms": round(base[1], 3), "ratio_p50": round(deal[0] / base[0], 1),
        "ratio_p99": round(deal[1] / base[1], 1),
    }  # fmt: skip
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
