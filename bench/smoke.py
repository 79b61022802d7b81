"""Every benchmark at a smoke size, so one that stops running is caught (CI runs this).

Each benchmark runs as its own command, the way ``bench/RESULTS.md`` shows it, with sizes cut to seconds: it must exit
0 and its last output line must be one JSON object of its figures. The figures of a smoke run mean nothing; that it
ran does. PostgreSQL benchmarks use ``BENCH_DATABASE_URL`` (or ``STUDIO_TEST_DATABASE_URL``); the broker ones
``STUDIO_TEST_MQTT_URL`` when set (else each starts its embedded broker).

    python bench/smoke.py [--only NAME,…] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DATABASE = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("STUDIO_TEST_DATABASE_URL", "")
BROKER = os.environ.get("STUDIO_TEST_MQTT_URL", "")


def _broker() -> list[str]:
    return ["--broker", BROKER] if BROKER else []


def _database() -> list[str]:
    return ["--url", DATABASE] if DATABASE else []


# name -> its arguments at a smoke size; those needing PostgreSQL say so. A name "script:mode" runs script.py in
# another mode (its arguments say which).
SMOKE: dict[str, tuple[list[str], bool]] = {
    "engine": (["--rounds", "500"], False),
    "coups": (["--coups", "2000"], False),
    "maubinh": (["--decks", "4", "--passes", "2"], False),
    "tienlen": (["--games", "40"], False),
    "camera": (["--frames", "20"], False),
    "recorder": (["--seconds", "3"], False),
    "shoe": (["--cards", "40", *_broker()], False),
    "controller": (["--cards", "40", *_broker()], False),
    "deal": (["--cards", "200"], False),
    "sim": (["--rounds", "20", "--seeds", "2"], False),
    "tables": (["--tables", "3", "--seconds", "4", "--warmup", "2", "--shoe-processes", "1", *_broker()], False),
    "fanout": (["--clients", "200", "--changes", "3", "--client-procs", "1", *_broker()], False),
    "fanout:proxies": (["--clients", "200", "--changes", "3", "--proxies", "1", *_broker()], False),
    "bets": ([*_database(), "--players", "40", "--slips", "2", "--concurrency", "8"], True),
    "bets:burst": ([*_database(), "--burst", "60", "--burst-seconds", "1", "--concurrency", "8"], True),
    "settlement": ([*_database(), "--sizes", "200", "--players", "50"], True),
    "wallet": ([*_database(), "--players", "40", "--slips", "2", "--concurrency", "8"], True),
    "wallet:credits": ([*_database(), "--credits", "40"], True),
}


NOT_BENCHMARKS = ("smoke", "processes")  # this runner, and a helper module the benchmarks share


def script(name: str) -> str:
    return name.split(":")[0]


def run(name: str, arguments: list[str], timeout: float) -> tuple[bool, str, float]:
    """Run one benchmark: (it ran and ended with its JSON line, what to say, seconds)."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, str(BENCH / f"{script(name)}.py"), *arguments],
            capture_output=True, text=True, timeout=timeout, cwd=BENCH.parent,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return False, f"did not finish within {timeout:g} s", time.monotonic() - started
    took = time.monotonic() - started
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or lines or ["(no output)"])[-1]
        return False, f"exit {done.returncode}: {tail[:300]}", took
    try:
        figures = json.loads(lines[-1]) if lines else None
    except ValueError:
        figures = None
    if not isinstance(figures, dict):
        return False, f"its last line is not one JSON object: {(lines or [''])[-1][:200]!r}", took
    return True, f"{len(figures)} figures", took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--timeout", type=float, default=240, help="seconds one benchmark may take")
    args = parser.parse_args()
    names = [name for name in args.only.split(",") if name] or list(SMOKE)
    unknown = sorted(set(names) - set(SMOKE))
    smoked = {script(name) for name in SMOKE}
    missing = sorted(path.stem for path in BENCH.glob("*.py") if path.stem not in {*smoked, *NOT_BENCHMARKS})
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r} (known: {', '.join(SMOKE)})")
    failed: list[str] = []
    for name in names:
        arguments, needs_database = SMOKE[name]
        if needs_database and not DATABASE:
            print(f"{name:<12} skipped: it needs PostgreSQL (BENCH_DATABASE_URL or STUDIO_TEST_DATABASE_URL)")
            continue
        ok, said, took = run(name, arguments, args.timeout)
        print(f"{name:<12} {'ok' if ok else 'FAILED':<7} {took:6.1f} s  {said}", flush=True)
        if not ok:
            failed.append(name)
    summary = {"ran": len(names), "failed": failed, "not_smoked": missing}
    if missing:
        print(f"benchmarks with no smoke size here: {', '.join(missing)} (add them to SMOKE)")
    print(json.dumps(summary))
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
