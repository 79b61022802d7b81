"""Benchmark: simulated studio rounds per second on one core, beside the database's bare commits (the floor).

    .venv/bin/python bench/sim.py [--rounds 1000] [--seeds 10] [--faults all]

Runs ``studio sim``'s simulation (every fault, every invariant checked after every step) seed after
seed in this one process, on the same scratch SQLite files as the command. The floor is the same
number of transactions as the simulation committed, each a bare one-row ``INSERT`` and commit on a
scratch file with the same settings: what any design that writes each step durably pays. Also
reported: the share of the time spent checking invariants, and how much faster than real time the
studio runs.
"""

from __future__ import annotations

import argparse
import json
import logging
import tempfile
import time
from pathlib import Path

from sqlalchemy import text

from services.cli.sim import faults, scratch_engine
from services.sim import checks
from services.sim.runs import SimSettings
from services.sim.world import Simulation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1_000, help="rounds in all, split evenly across the seeds")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--faults", type=faults, default="all", help="all, none, or a,b,… (see studio sim --help)")
    args = parser.parse_args()
    logging.getLogger("studio").setLevel(logging.CRITICAL)

    checking = 0.0
    real_after_step = checks.Checker.after_step

    def timed_after_step(self: checks.Checker) -> list[str]:
        nonlocal checking
        started = time.perf_counter()
        try:
            return real_after_step(self)
        finally:
            checking += time.perf_counter() - started

    checks.Checker.after_step = timed_after_step  # type: ignore[method-assign]
    rounds = steps = commits = violations = 0
    simulated = wall = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as directory:
        for seed in range(1, args.seeds + 1):
            scratch = Path(directory) / str(seed)
            scratch.mkdir()
            engine = scratch_engine(scratch)
            sim = Simulation(SimSettings(seed, rounds=args.rounds // args.seeds, faults=args.faults), engine)
            started = time.perf_counter()
            report = sim.run()
            wall += time.perf_counter() - started
            rounds, steps, simulated = rounds + report.rounds, steps + report.steps, simulated + report.simulated_s
            commits += sim.database.commits
            violations += report.violation is not None
            engine.dispose()
        floor_engine = scratch_engine(Path(directory))
        with floor_engine.begin() as connection:
            connection.execute(text("CREATE TABLE floor (id INTEGER PRIMARY KEY, value TEXT)"))
        started = time.perf_counter()
        for number in range(commits):
            with floor_engine.begin() as connection:
                connection.execute(text("INSERT INTO floor (value) VALUES (:v)"), {"v": f"commit {number}"})
        floor = time.perf_counter() - started
        floor_engine.dispose()

    figures = {
        "rounds": rounds,
        "seeds": args.seeds,
        "faults": sorted(args.faults),
        "violations": violations,
        "wall_s": round(wall, 2),
        "rounds_per_s": round(rounds / wall, 1),
        "steps_per_s": round(steps / wall),
        "commits": commits,
        "check_share": round(checking / wall, 3),
        "times_real_time": round(simulated / wall, 1),
        "floor_commits_s": round(floor, 2),
        "ratio_to_floor": round(wall / floor, 1),
    }
    print(f"{rounds} rounds over {args.seeds} seeds in {wall:.1f} s: {figures['rounds_per_s']} rounds/s on one core")
    print(f"{steps} steps, {commits} commits; checking the invariants took {checking / wall:.0%} of the time")
    print(f"{simulated / 60:.0f} simulated minutes: {simulated / wall:.0f}× faster than real time")
    print(f"floor: {commits} bare one-row commits in {floor:.2f} s — the simulation costs {wall / floor:.1f}× that")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
