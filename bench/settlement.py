"""Benchmark: settle_round on PostgreSQL for 1k/10k/100k wagers, beside a bulk insert of its rows (the floor).

    .venv/bin/python bench/settlement.py [--sizes 1000,10000,100000] [--players 3000] [--history N] [--repeat R]
        [--profile]

Each size is one round with that many wagers, each with a pending hold, spread round-robin over
the players (or ``--wagers-per-player K``: ceil(size / K) players, e.g. 3 for a realistic one
side on three seats). The set-up is not timed and goes around ``Ledger.hold`` for speed: the
holds are bulk-copied, then one SQL statement each writes the deposit and hold transfers and
the balance changes that ``Ledger.deposit`` and ``Ledger.hold`` would have written (a check at
the end recomputes every balance from the transfers to prove it).

Before the timed rounds, untimed: a 10-wager round settled as a warm-up (a serving process has its statements
compiled), and ``--history N`` wagers settled in earlier rounds of up to 100,000 (a table with a past: the pending
holds are found by a probe per hold, so the time should not grow with it). A ``CHECKPOINT`` (where the role may)
before each timed part, so a background one lands in neither. ``--repeat R`` settles R rounds of each size; the
figures are then the median's (the round with the median ratio).

Timed: ``settle_round(ledger, round_id, results)`` on a fresh session and ``Ledger``, committed
in one transaction; the results mix wins (5% commission), losses of 1–3× the stake and ties.
The floor (``floor_s``) is a ``COPY`` of one transfer-shaped row per wager — the first ``size`` rows the settlement
wrote — into a scratch copy of ``transfers`` (same columns, indexes and checks) in one transaction; beside it, a
``COPY`` of every row it wrote and a plain executemany INSERT of them through SQLAlchemy Core.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import json
import math
import os
import pstats
import random
import sys
import time
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, MetaData, Table, event, insert, text
from sqlalchemy.exc import DBAPIError

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.db import make_engine, migrate, session_factory  # noqa: E402
from services.ledger import Ledger, StakeResult, settle_round  # noqa: E402
from services.ledger.ledger import copy_line  # noqa: E402
from services.ledger.models import AccountKind  # noqa: E402

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
CURRENCY = "THB"
HOLD_MULTIPLE = 3
COMMISSION_BPS = 500
BUFFER = 1_000  # left in each wallet beside its holds
TRANSFER_COLUMNS = (
    "debit_account_id, credit_account_id, amount, currency, kind, round_id, wager_id, hold_id, request_key, memo, "
    "created_at"
)


def schema_engine(url: str, schema: str, **options: Any) -> Engine:
    return make_engine(url, connect_args={"options": f"-csearch_path={schema}"}, **options)


# ---- set-up (not timed) -------------------------------------------------------------------


def create_accounts(engine: Engine, players: int) -> None:
    """Each player's wallet, hold and receivable accounts, and the system accounts, by COPY."""
    with engine.begin() as connection:
        now = datetime.now(UTC)
        with raw(connection).cursor() as cursor:
            copy_sql = "COPY accounts (kind, owner, currency, balance, created_at) FROM STDIN"
            with cursor.copy(copy_sql) as copy:
                for kind in (AccountKind.HOUSE, AccountKind.COMMISSION, AccountKind.CASH):
                    copy.write_row((str(kind), "", CURRENCY, 0, now))
                for index in range(players):
                    for kind in (AccountKind.WALLET, AccountKind.HOLD, AccountKind.RECEIVABLE):
                        copy.write_row((str(kind), player_name(index), CURRENCY, 0, now))


def player_name(index: int) -> str:
    return f"p{index:06d}"


def raw(connection: Connection) -> Any:
    """The psycopg connection under a SQLAlchemy connection (for COPY)."""
    return connection.connection.driver_connection


@dataclass(frozen=True, slots=True)
class Stake:
    player: str
    wager_id: str
    stake: int


def make_round(rng: random.Random, round_id: str, wagers: int, players: int) -> tuple[list[Stake], list[StakeResult]]:
    stakes = [Stake(player_name(i % players), f"{round_id}-w{i}", rng.randint(1, 1_000)) for i in range(wagers)]
    results = []
    for stake in stakes:
        draw = rng.random()
        multiple = rng.choice((1, 1, 1, 2, 3))
        if draw < 0.45:  # a win, less commission
            gross = stake.stake * multiple
            commission = gross * COMMISSION_BPS // 10_000
            results.append(StakeResult(stake.player, stake.wager_id, gross - commission, commission))
        elif draw < 0.90:
            results.append(StakeResult(stake.player, stake.wager_id, -stake.stake * multiple))
        else:
            results.append(StakeResult(stake.player, stake.wager_id, 0))
    rng.shuffle(results)
    return stakes, results


def place_holds(engine: Engine, round_id: str, stakes: list[Stake]) -> None:
    """What ``Ledger.deposit`` of (holds + BUFFER) and ``Ledger.hold`` per wager would leave behind, in bulk."""
    now = datetime.now(UTC)
    with engine.begin() as connection:
        with raw(connection).cursor() as cursor:
            copy_sql = "COPY holds (player, currency, amount, round_id, wager_id, created_at) FROM STDIN"
            with cursor.copy(copy_sql) as copy:
                for stake in stakes:
                    copy.write_row((stake.player, CURRENCY, HOLD_MULTIPLE * stake.stake, round_id, stake.wager_id, now))
        held = "SELECT player, sum(amount) AS total FROM holds WHERE round_id = :round GROUP BY player"
        wallet = "JOIN accounts w ON w.kind = 'wallet' AND w.owner = t.player AND w.currency = :currency"
        statements = [
            # one deposit per player: cash → wallet, holds + BUFFER
            f"INSERT INTO transfers ({TRANSFER_COLUMNS}) "
            f"SELECT c.id, w.id, t.total + :buffer, :currency, 'deposit', NULL, NULL, NULL, NULL, '', :now "
            f"FROM ({held}) t {wallet} "
            f"JOIN accounts c ON c.kind = 'cash' AND c.owner = '' AND c.currency = :currency ORDER BY w.id",
            # one hold transfer per hold: wallet → hold account
            f"INSERT INTO transfers ({TRANSFER_COLUMNS}) "
            f"SELECT w.id, e.id, h.amount, :currency, 'hold', h.round_id, h.wager_id, h.id, NULL, '', :now "
            f"FROM holds h JOIN accounts w ON w.kind = 'wallet' AND w.owner = h.player AND w.currency = :currency "
            f"JOIN accounts e ON e.kind = 'hold' AND e.owner = h.player AND e.currency = :currency "
            f"WHERE h.round_id = :round ORDER BY h.id",
            f"UPDATE accounts a SET balance = a.balance + :buffer FROM ({held}) t "
            f"WHERE a.kind = 'wallet' AND a.owner = t.player AND a.currency = :currency",
            f"UPDATE accounts a SET balance = a.balance + t.total FROM ({held}) t "
            f"WHERE a.kind = 'hold' AND a.owner = t.player AND a.currency = :currency",
            f"UPDATE accounts SET balance = balance - (SELECT sum(t.total + :buffer) FROM ({held}) t) "
            f"WHERE kind = 'cash' AND owner = '' AND currency = :currency",
        ]
        values = {"round": round_id, "currency": CURRENCY, "buffer": BUFFER, "now": now}
        for statement in statements:
            connection.execute(text(statement), values)
    with engine.begin() as connection:
        connection.execute(text("ANALYZE accounts; ANALYZE holds; ANALYZE transfers"))


# ---- the timed parts ----------------------------------------------------------------------


@dataclass
class Settled:
    seconds: float
    cpu: float  # of this process (Python: the ledger, SQLAlchemy, psycopg)
    claimed: int
    statements: Counter[str]
    profile: str = ""


def settle(engine: Engine, round_id: str, results: list[StakeResult], profile: bool) -> Settled:
    statements: Counter[str] = Counter()

    def count(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        words = statement.split(None, 3)
        statements[" ".join(words[:3]) if words[0] in ("INSERT", "UPDATE") else " ".join(words[:2])] += 1

    sessions = session_factory(engine)
    profiler = cProfile.Profile() if profile else None
    event.listen(engine, "before_cursor_execute", count)
    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        with sessions() as session, session.begin():
            claimed = settle_round(Ledger(session, CURRENCY), round_id, results)
        if profiler:
            profiler.disable()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    finally:
        event.remove(engine, "before_cursor_execute", count)
    report = ""
    if profiler:
        buffer = io.StringIO()
        pstats.Stats(profiler, stream=buffer).sort_stats("cumulative").print_stats(30)
        report = buffer.getvalue()
    return Settled(seconds, cpu, claimed, statements, report)


def written(engine: Engine, round_id: str) -> tuple[int, int]:
    """The rows the settlement wrote: hold resolutions, transfers."""
    with engine.connect() as connection:
        values = {"round": round_id}
        lines = connection.scalar(
            text("SELECT count(*) FROM hold_resolutions r JOIN holds h ON h.id = r.hold_id WHERE h.round_id = :round"),
            values,
        )
        moved = connection.scalar(
            text("SELECT count(*) FROM transfers WHERE round_id = :round AND kind <> 'hold'"), values
        )
        return int(lines or 0), int(moved or 0)


def checkpoint(engine: Engine) -> None:
    """Write the dirty pages out now, so a checkpoint does not start inside the next timed part (if the role may)."""
    try:
        with engine.begin() as connection:
            connection.execute(text("CHECKPOINT"))
    except DBAPIError:
        pass  # not a superuser (nor pg_checkpoint): the timings are the noisier for it


def floor_rows(engine: Engine, round_id: str) -> list[tuple[Any, ...]]:
    """One transfer-shaped row per wager: the round's hold transfers, as the floor's rows."""
    with engine.connect() as connection:
        result = connection.execute(
            text(f"SELECT {TRANSFER_COLUMNS} FROM transfers WHERE round_id = :round AND kind = 'hold' ORDER BY id"),
            {"round": round_id},
        )
        return [tuple(row) for row in result]


def create_scratch(engine: Engine) -> Table:
    """A copy of ``transfers`` as production has it: same columns, indexes and checks (no foreign keys: 0013)."""
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE scratch_transfers (LIKE transfers INCLUDING ALL)"))
    return Table("scratch_transfers", MetaData(), autoload_with=engine)


def floor_copy(engine: Engine, rows: list[tuple[Any, ...]]) -> float:
    """``rows`` into the scratch copy by ``COPY`` in one transaction, formatted as the ledger formats them."""
    lines = "".join(map(copy_line, rows))  # formatted before the clock starts: the floor is the database's part
    start = time.perf_counter()
    copy_sql = f"COPY scratch_transfers ({TRANSFER_COLUMNS}) FROM STDIN"
    with engine.begin() as connection, raw(connection).cursor() as cursor, cursor.copy(copy_sql) as copy:
        copy.write(lines)
    seconds = time.perf_counter() - start
    with engine.begin() as connection:
        connection.execute(text("TRUNCATE scratch_transfers"))
    return seconds


def floor_insert(engine: Engine, scratch: Table, rows: list[tuple[Any, ...]]) -> float:
    names = [name.strip() for name in TRANSFER_COLUMNS.split(",")]
    parameters = [dict(zip(names, row, strict=True)) for row in rows]  # built before the clock starts
    start = time.perf_counter()
    with engine.begin() as connection:
        connection.execute(insert(scratch), parameters)
    return time.perf_counter() - start


# ---- the check ----------------------------------------------------------------------------


def check(engine: Engine) -> str:
    """Double entry holds: every balance equals its transfers; nothing pending; escrow empty; money sums to 0."""
    with engine.connect() as connection:
        wrong = connection.scalar(
            text(
                "SELECT count(*) FROM accounts a LEFT JOIN ("
                "  SELECT id, sum(delta) AS total FROM ("
                "    SELECT credit_account_id AS id, amount AS delta FROM transfers"
                "    UNION ALL SELECT debit_account_id, -amount FROM transfers) m GROUP BY id"
                ") t ON t.id = a.id WHERE a.balance <> coalesce(t.total, 0)"
            )
        )
        pending = connection.scalar(
            text(
                "SELECT count(*) FROM holds h "
                "WHERE NOT EXISTS (SELECT 1 FROM hold_resolutions r WHERE r.hold_id = h.id)"
            )
        )
        escrow = connection.scalar(text("SELECT coalesce(sum(balance), 0) FROM accounts WHERE kind = 'hold'"))
        total = connection.scalar(text("SELECT sum(balance) FROM accounts"))
    if wrong or pending or escrow or total:
        raise SystemExit(f"check failed: {wrong} balances off, {pending} holds pending, escrow {escrow}, sum {total}")
    return "check: every balance equals its transfers, no hold pending, escrow 0, balances sum to 0"


# ---- main ---------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL), help="PostgreSQL URL")
    parser.add_argument("--sizes", default="1000,10000,100000", help="wagers per round, comma-separated")
    parser.add_argument("--players", type=int, default=3_000, help="players the wagers are spread over")
    parser.add_argument(
        "--wagers-per-player", type=int, default=0, help="instead of --players: ceil(size / K) players per round"
    )
    parser.add_argument("--history", type=int, default=0, help="wagers settled in earlier rounds, untimed")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of each size; the median's figures count")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="cProfile settle_round (inflates its times)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    if not all(1 <= size <= 1_000_000 for size in sizes) or not 1 <= args.players <= 1_000_000:
        parser.error("sizes and --players must be 1–1,000,000")
    if not 0 <= args.history <= 10_000_000:
        parser.error("--history must be 0–10,000,000")
    if not 1 <= args.repeat <= 99:
        parser.error("--repeat must be 1–99")
    per_size = {
        size: math.ceil(size / args.wagers_per_player) if args.wagers_per_player else args.players for size in sizes
    }
    rng = random.Random(args.seed)

    schema = f"bench_settle_{uuid.uuid4().hex[:8]}"
    admin = make_engine(args.url, pool_size=1)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = schema_engine(args.url, schema, pool_size=2)
    rows_out = []
    try:
        migrate(engine)
        start = time.perf_counter()
        create_accounts(engine, max(per_size.values()))
        scratch = create_scratch(engine)
        print(f"set-up: {max(per_size.values())} players' accounts in {time.perf_counter() - start:.1f} s")
        past = [10] + [min(100_000, args.history - done) for done in range(0, args.history, 100_000)]
        for number, size in enumerate(past):  # untimed: the warm-up round, then the table's history
            round_id = f"past-{number}"
            stakes, results = make_round(rng, round_id, size, min(size, max(per_size.values())))
            place_holds(engine, round_id, stakes)
            settle(engine, round_id, results, profile=False)
        if args.history:
            print(f"history: {args.history} wagers settled in {len(past) - 1} earlier rounds")
        for size in sizes:
            runs = []
            for repetition in range(args.repeat):
                round_id = f"bench-{size}-{repetition}"
                stakes, results = make_round(rng, round_id, size, per_size[size])
                start = time.perf_counter()
                place_holds(engine, round_id, stakes)
                setup = time.perf_counter() - start
                checkpoint(engine)
                settled = settle(engine, round_id, results, args.profile)
                rows = floor_rows(engine, round_id)
                checkpoint(engine)
                floor_seconds = floor_copy(engine, rows)  # one transfer-shaped row per wager
                insert_seconds = floor_insert(engine, scratch, rows)
                lines, moved = written(engine, round_id)
                runs.append((size, per_size[size], settled, lines, moved, floor_seconds, insert_seconds))
                print(
                    f"  {size} wagers: holds set up in {setup:.1f} s, settled in {settled.seconds:.2f} s, "
                    f"floor {floor_seconds:.3f} s ({settled.seconds / floor_seconds:.2f}×)"
                )
                if settled.profile:
                    print(settled.profile)
            runs.sort(key=lambda run: run[2].seconds / run[5])
            rows_out.append(runs[len(runs) // 2])
        print(check(engine))
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    print(
        f"\n{'wagers':>8}{'players':>9}{'lines':>9}{'transfers':>11}{'statements':>12}{'settle s':>10}{'µs/wager':>10}"
        f"{'py CPU s':>9}{'floor s':>9}{'INSERT s':>10}{'÷floor':>8}"
    )
    for size, players, settled, lines, moved, floor_seconds, insert_seconds in rows_out:
        print(
            f"{size:>8,}{players:>9,}{lines:>9,}{moved:>11,}{sum(settled.statements.values()):>12,}"
            f"{settled.seconds:>10.2f}{1e6 * settled.seconds / size:>10.1f}{settled.cpu:>9.2f}{floor_seconds:>9.3f}"
            f"{insert_seconds:>10.3f}{settled.seconds / floor_seconds:>7.2f}×"
        )
    for (size_a, _, a, *_), (size_b, _, b, *_) in itertools.pairwise(rows_out):
        print(f"growth {size_a:,} → {size_b:,} wagers ({size_b / size_a:.0f}×): time {b.seconds / a.seconds:.1f}×")
    largest = rows_out[-1][2]
    print(
        f"statements of the {rows_out[-1][0]:,}-wager settlement: "
        + ", ".join(f"{name} × {n:,}" for name, n in largest.statements.most_common())
    )
    size, _players, settled, lines, moved, floor_seconds, insert_seconds = rows_out[-1]
    figures = {
        "wagers": size, "settle_s": round(settled.seconds, 3), "floor_s": round(floor_seconds, 3),
        "ratio": round(settled.seconds / floor_seconds, 2), "insert_s": round(insert_seconds, 3),
        "resolutions": lines, "transfers": moved,
    }  # fmt: skip
    print(json.dumps(figures))  # the last line: the largest run's figures


if __name__ == "__main__":
    main()
