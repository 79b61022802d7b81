"""``studio sim``: the deterministic studio simulation, seed by seed; a violation prints how to reproduce it.

Each seed runs on a database of its own: a fresh SQLite file (removed afterwards), or the database
of ``--database`` / ``STUDIO_DATABASE_URL`` with the run's tables and players under a tag of their
own. The last line of the output is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from services.cli.arguments import database_url, non_negative_int, positive_int, seed
from services.cli.commands import help_of

if TYPE_CHECKING:
    from sqlalchemy import Engine

NONE = "none"
ALL = "all"


def register(commands: Any) -> None:
    from services.sim.runs import FAULTS

    parser = commands.add_parser(
        "sim",
        help=help_of("sim"),
        description="Run the studio (shoe → feed → controller → round service → ledger, the API's money paths) "
        "under a simulated clock, network and people; every invariant is checked after every step.",
        epilog="faults: " + "; ".join(f"{name}: {text}" for name, text in FAULTS.items()),
    )
    parser.add_argument("--seed", type=seed, default=1, help="the first seed (default 1)")
    parser.add_argument("--seeds", type=positive_int, default=1, help="how many seeds from --seed (default 1)")
    parser.add_argument("--rounds", type=positive_int, default=20, help="rounds per seed, across its tables")
    parser.add_argument("--tables", type=positive_int, default=2, help="Pok Deng tables per seed (default 2)")
    parser.add_argument(
        "--baccarat", type=non_negative_int, default=0, help="baccarat tables per seed besides (default 0)"
    )
    parser.add_argument(
        "--dragontiger", type=non_negative_int, default=0, help="Dragon Tiger tables per seed besides (default 0)"
    )
    parser.add_argument(
        "--maubinh", type=non_negative_int, default=0,
        help="Mậu Binh rooms per seed besides (from the shoe and online in turn, seed to seed; default 0)",
    )  # fmt: skip
    parser.add_argument(
        "--tienlen", type=non_negative_int, default=0, help="Tiến Lên rooms per seed besides (as --maubinh; default 0)"
    )
    parser.add_argument("--faults", type=faults, default=frozenset(FAULTS), help="all (default), none, or a,b,…")
    parser.add_argument("--jobs", type=positive_int, default=1, help="seeds run side by side, one process each")
    parser.add_argument(
        "--database", type=database_url, default=None, help="a database to run on (default: a fresh SQLite file)"
    )
    parser.add_argument("--quiet", action="store_true", help="print only violations and the summary")
    parser.set_defaults(run=run)


def faults(text: str) -> frozenset[str]:
    from services.sim.runs import FAULTS

    if text == ALL:
        return frozenset(FAULTS)
    if text == NONE:
        return frozenset()
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(names - set(FAULTS))
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown fault {', '.join(unknown) or repr(text)} (use all, none, or some of: {', '.join(FAULTS)})"
        )
    return names


def run(args: argparse.Namespace) -> int:
    from services.sim.runs import SimSettings

    url = args.database or os.environ.get("STUDIO_DATABASE_URL")
    settings = [
        SimSettings(
            number,
            rounds=args.rounds,
            tables=args.tables,
            baccarat=args.baccarat,
            dragontiger=args.dragontiger,
            maubinh=args.maubinh,
            tienlen=args.tienlen,
            faults=args.faults,
        )
        for number in range(args.seed, args.seed + args.seeds)
    ]
    started = time.perf_counter()
    if args.jobs > 1 and len(settings) > 1:
        with ProcessPoolExecutor(min(args.jobs, len(settings))) as pool:
            reports = pool.map(one, settings, [url] * len(settings))
            results = [_print(report, args.quiet) for report in reports]
    else:
        results = [_print(one(setting, url), args.quiet) for setting in settings]
    wall = time.perf_counter() - started
    failed = [result for result in results if result["violation"]]
    counts: Counter[str] = Counter()
    for result in results:
        counts.update(result["counts"])
    rounds = sum(result["rounds"] for result in results)
    summary = {
        "seeds": len(results),
        "rounds": rounds,
        "steps": sum(result["steps"] for result in results),
        "checks": sum(result["checks"] for result in results),
        "simulated_s": round(sum(result["simulated_s"] for result in results), 1),
        "violations": len(failed),
        "failed_seeds": [result["seed"] for result in failed],
        "digests": {str(result["seed"]): result["digest"] for result in results},  # equal runs, equal digests
        "wall_s": round(wall, 2),
        "rounds_per_s": round(rounds / wall, 1) if wall else None,
        "counts": dict(sorted(counts.items())),
    }
    verdict = "every invariant held" if not failed else f"{len(failed)} seed(s) broke an invariant"
    print(f"{len(results)} seed(s), {rounds} rounds, {summary['checks']} checks in {wall:.1f} s: {verdict}")
    print(json.dumps(summary, separators=(",", ":")))
    return 1 if failed else 0


def scratch_engine(directory: Path, url: str | None = None) -> Engine:
    """``url``'s engine, else a SQLite file in ``directory`` that is thrown away after the run (so no need to wait
    for the disk at each commit); migrated."""
    from sqlalchemy import event

    from services.db import make_engine, migrate

    engine = make_engine(url or f"sqlite:///{directory / 'sim.db'}")
    if url is None:
        event.listen(engine, "connect", lambda connection, _record: connection.execute("PRAGMA synchronous = OFF"))
    migrate(engine)
    return engine


def one(settings: Any, url: str | None) -> dict[str, Any]:
    """One seed on a database of its own (a fresh SQLite file, or ``url`` under a tag of its own)."""
    from services.sim.world import Simulation

    logging.getLogger("studio").setLevel(logging.CRITICAL)  # the faults make the controller log by design
    with tempfile.TemporaryDirectory(prefix="studio-sim-") as directory:
        engine = scratch_engine(Path(directory), url)
        try:
            tag = f"s{uuid.uuid4().hex[:6]}-" if url else ""
            report = Simulation(settings, engine, tag).run()
        finally:
            engine.dispose()
    result = asdict(report)
    result["seed"], result["command"] = settings.seed, report.command() + (f" --database {url}" if url else "")
    return result


def _print(result: dict[str, Any], quiet: bool) -> dict[str, Any]:
    seed = result["seed"]
    if result["violation"] is None:
        if not quiet:
            print(
                f"seed {seed}: {result['rounds']} rounds, {result['steps']} steps, {result['checks']} checks, "
                f"{result['simulated_s'] / 60:.0f} min simulated: ok (digest {result['digest']})"
            )
        return result
    print(f"seed {seed}: VIOLATION at step {result['step']}: {result['violation']}")
    print("  the steps before it (step, simulated time, what happened):")
    for line in result["trace"]:
        print(f"    {line}")
    print(f"  reproduce: {result['command']}")
    sys.stdout.flush()
    return result
