"""Benchmark: bets through the operator's wallet over HTTP, beside the same bets on an internal table and two floors.

    .venv/bin/python bench/wallet.py [--players 1000] [--slips 3] [--concurrency 32] [--rate R] [--repeat R]
    .venv/bin/python bench/wallet.py --credits 300

The reference operator's wallet (``services.wallet.reference``: signed JSON over HTTP, as an operator would run it)
serves from its own uvicorn process; the API (``bench.bets``'s server, with ``STUDIO_WALLET_URL`` pointing at that
wallet) from another, on PostgreSQL in a schema of its own. Four phases, the same number of requests each from the
same load generator (``bench.bets.drive``; ``--rate`` offers the two bet phases open-loop):

- ``GET /healthz`` of the API: HTTP, routing and the thread pool — the floor of any request;
- a signed ``debit`` straight to the operator's wallet: the floor of the call every seamless bet makes;
- the bet slips on an ``internal`` table (the studio's ledger);
- the same slips on an ``operator`` table: each debited at the operator, then placed with its mirror.

``--credits N`` measures settlement's side instead: a round's N credits sent by the outbox's sender as one request
(``POST /credits``, ``services.wallet.credits``) and one by one, against N bare signed calls to the wallet in a row.

``--repeat R`` runs the four phases R times, each on new tables, and reports the run whose seamless share of the
internal table is the median (one run's phases can meet different neighbours on a shared machine).

Checked after each run: every slip accepted on the operator's table has exactly one accepted debit, mirrored, and the
table's holds equal the debits. The last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import Engine, func, select

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.bets import (  # noqa: E402
    DEFAULT_URL,
    FUNDS,
    Load,
    Request,
    bench_schema,
    bet_requests,
    drive,
    free_port,
    open_round,
    register_and_fund,
    table,
    uvicorn_server,
)
from bench.processes import stop  # noqa: E402
from services.ledger.models import Hold  # noqa: E402
from services.wallet.models import WalletCallRecord  # noqa: E402
from services.wallet.protocol import SIGNATURE_HEADER, WalletCall, signature  # noqa: E402

SECRET = "bench-wallet-secret-" + uuid.uuid4().hex[:8]


@contextmanager
def operator_wallet() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The reference operator's wallet in its own uvicorn process; every player opens with ``FUNDS``."""
    port = free_port()
    env = os.environ | {"REFERENCE_WALLET_OPENING": str(FUNDS), "REFERENCE_WALLET_SECRET": SECRET,
                        "PYTHONPATH": str(ROOT)}  # fmt: skip
    command = [sys.executable, "-m", "uvicorn", "services.wallet.reference:app_from_environment", "--factory",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if process.poll() is not None:
                raise RuntimeError(f"the operator's wallet exited with status {process.returncode}")
            try:
                httpx.get(base, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise RuntimeError("the operator's wallet did not come up within 30 s")
        yield base, process
    finally:
        stop(process, signal.SIGINT, timeout=20)


def direct_debits(count: int, run: int = 0) -> list[Request]:
    """Signed debits of 1 unit straight to the operator's wallet, each its own transaction."""
    requests = []
    for index in range(count):
        call = WalletCall(
            request_id=uuid.uuid4().hex, transaction_id=f"floor:{run}:{index}", kind="debit", player=f"f{index % 997}",
            amount=1, currency="THB", round_id="floor-1", sent_at=datetime.now(UTC).isoformat(),
        )  # fmt: skip
        body = call.body()
        headers = {"Content-Type": "application/json", SIGNATURE_HEADER: signature(body, SECRET.encode())}
        requests.append(Request("POST", "/debit", headers, content=body))
    return requests


def credits_run(engine: Engine, count: int) -> dict[str, float]:
    """A round's ``count`` settlement credits sent by the outbox's sender, as one batch request (``POST /credits``)
    and one by one, each on a round of its own, against the floor of as many bare signed calls in a row."""
    from services.db import session_factory
    from services.wallet.models import PAYOUT
    from services.wallet.outbox import SeamlessWallet
    from services.wallet.protocol import WalletConfig
    from services.wallet.seamless import new_call

    sessions = session_factory(engine)
    seconds: dict[str, float] = {}
    with operator_wallet() as (wallet_base, _process):
        floor = direct_debits(count, 99)
        with httpx.Client(base_url=wallet_base) as client:
            started = time.perf_counter()
            for request in floor:
                assert client.post(request.path, content=request.content, headers=request.headers).is_success
            seconds["floor"] = time.perf_counter() - started
        for mode, batch in (("batch", True), ("one_by_one", False)):
            studio = SeamlessWallet(sessions, WalletConfig(wallet_base, SECRET.encode(), batch_credits=batch))
            for n in range(count):
                call = new_call("credit", f"p{n}", 100, "THB", f"credits-{mode}", f"credit:{mode}:{n}", "settlement")
                studio._record(call, PAYOUT, True)
            started = time.perf_counter()
            if studio.drain() != 0:
                raise SystemExit(f"check failed: {mode}: credits left pending")
            seconds[mode] = time.perf_counter() - started
    return seconds


def check(engine: Engine, round_id: str, accepted: int) -> str:
    with engine.connect() as connection:
        debits = connection.execute(
            select(func.count(), func.coalesce(func.sum(WalletCallRecord.amount), 0)).where(
                WalletCallRecord.round_id == round_id, WalletCallRecord.purpose == "stake",
                WalletCallRecord.status == "ok", WalletCallRecord.mirrored_at.is_not(None),
            )
        ).one()  # fmt: skip
        held = connection.scalar(select(func.coalesce(func.sum(Hold.amount), 0)).where(Hold.round_id == round_id))
    if debits[0] != accepted or debits[1] != held:
        raise SystemExit(
            f"check failed: {debits[0]} mirrored debits for {accepted} slips; debits {debits[1]}, held {held}"
        )
    return f"check: {accepted} slips, each one accepted debit, mirrored; holds = debits = {held}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL), help="PostgreSQL URL")
    parser.add_argument("--players", type=int, default=1_000)
    parser.add_argument("--slips", type=int, default=3, help="most bet requests per player (1–N each)")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight")
    parser.add_argument("--rate", type=float, default=0.0, help="offered bets/s, open loop (0: as fast as it goes)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--credits", type=int, default=0, help="instead: N credits of a round, batched and one by one")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the four phases (new tables each): the median's")
    args = parser.parse_args()
    if not 1 <= args.concurrency <= 1_000 or not 1 <= args.players <= 100_000 or not 1 <= args.slips <= 20:
        parser.error("keep --concurrency ≤ 1000, --players ≤ 100,000 and --slips ≤ 20")
    if not 1 <= args.repeat <= 20:
        parser.error("keep --repeat 1–20")
    if not 0 <= args.credits <= 10_000:
        parser.error("keep --credits ≤ 10,000")
    if args.credits:
        with bench_schema(args.url, "bench_credits") as (_admin, _schema, engine):
            took = credits_run(engine, args.credits)
        print(f"{args.credits} credits of one round, sent by the outbox's sender (one attempt each):")
        for name, what in (("floor", "floor: bare signed calls in a row"), ("batch", "one request (POST /credits)"),
                           ("one_by_one", "one by one")):  # fmt: skip
            print(f"  {what:<36} {took[name]:7.3f} s  {args.credits / took[name]:8,.0f} credits/s")
        figures = {f"{name}_s": round(value, 4) for name, value in took.items()}
        figures |= {"credits": args.credits, "batch_vs_floor": round(took["batch"] / took["floor"], 3),
                    "one_by_one_vs_floor": round(took["one_by_one"] / took["floor"], 3)}  # fmt: skip
        print(json.dumps(figures))
        return

    with bench_schema(args.url, "bench_wallet") as (_admin, schema, engine):
        operator_token, tokens = register_and_fund(engine, args.players)
        with operator_wallet() as (wallet_base, wallet_process):
            extra = {"STUDIO_WALLET_URL": wallet_base, "STUDIO_WALLET_SECRET": SECRET}
            with uvicorn_server(args.url, schema, 1, 0, extra) as (base, process):
                runs = []
                for run in range(args.repeat):  # each run on new tables: a round of each kind
                    internal_round = open_round(base, operator_token, f"house{run or ''}", "internal")
                    seamless_round = open_round(base, operator_token, f"seamless{run or ''}", "operator")
                    internal = bet_requests(random.Random(args.seed + run), internal_round, tokens, args.slips)
                    seamless = bet_requests(random.Random(args.seed + run), seamless_round, tokens, args.slips)
                    n = len(seamless)
                    floor = asyncio.run(drive(base, [Request("GET", "/healthz")] * n, args.concurrency, process.pid))
                    wallet_floor = asyncio.run(drive(wallet_base, direct_debits(n, run), args.concurrency,
                                                     wallet_process.pid))  # fmt: skip
                    internal_load = asyncio.run(drive(base, internal, args.concurrency, process.pid, args.rate))
                    seamless_load = asyncio.run(drive(base, seamless, args.concurrency, process.pid, args.rate))
                    print(check(engine, seamless_round, seamless_load.accepted(201)))
                    share = seamless_load.accepted(201) / seamless_load.seconds
                    share /= internal_load.accepted(201) / internal_load.seconds
                    if args.repeat > 1:
                        print(f"run {run + 1}: the operator's wallet at {100 * share:.1f} % of the internal table")
                    runs.append((share, floor, wallet_floor, internal_load, seamless_load))
        runs.sort(key=lambda each: each[0])
        _, floor, wallet_floor, internal_load, seamless_load = runs[len(runs) // 2]  # the median run
        shares = [round(100 * each[0], 1) for each in runs]

    offered = f"offered {args.rate:g}/s open loop" if args.rate else "closed loop"
    median = f", the median of {args.repeat} runs" if args.repeat > 1 else ""
    print(f"{args.players} players, {n} bet slips per phase, {args.concurrency} connections, bets {offered}{median}")
    rows: list[tuple[str, Load, int]] = [
        ("floor: GET /healthz", floor, 200),
        ("floor: debit at the wallet", wallet_floor, 200),
        ("bets, internal table", internal_load, 201),
        ("bets, operator's wallet", seamless_load, 201),
    ]
    table(rows)
    print("CPU columns: the API process (the wallet's own process in the wallet floor's row)")

    def rate(load: Load, status: int) -> float:
        return load.accepted(status) / load.seconds

    figures = {
        "accepted_per_s": round(rate(seamless_load, 201), 1),
        "p99_ms": round(1000 * seamless_load.percentile(0.99), 1),
        "p50_ms": round(1000 * seamless_load.percentile(0.5), 1),
        "internal_per_s": round(rate(internal_load, 201), 1),
        "internal_p99_ms": round(1000 * internal_load.percentile(0.99), 1),
        "floor_per_s": round(rate(floor, 200), 1),
        "wallet_floor_per_s": round(rate(wallet_floor, 200), 1),
        "wallet_floor_p99_ms": round(1000 * wallet_floor.percentile(0.99), 1),
        "offered_per_s": args.rate or None,
        "share_pct": round(100 * rate(seamless_load, 201) / rate(internal_load, 201), 1),
        "run_shares_pct": shares,
    }
    print(json.dumps(figures))  # the last line: this run's figures


if __name__ == "__main__":
    main()
