"""The returns of every Pok Deng table, without simulating when a table is created: the wins and losses of each bet
were simulated once per auto-draw threshold (``rtp_table.json``, made by ``python -m
services.games.pokdeng.rtp_table``), and a table's commission is applied to them exactly (a wager's net is
``wins × (1 − commission) + losses``), with the 95 % interval of that many rounds.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import cache
from pathlib import Path
from typing import Any, Final

from services.games.pokdeng.rtp import SIDES, Moments, Returns, Simulated, from_moments, simulate

TABLE: Final = Path(__file__).with_name("rtp_table.json")
THRESHOLDS: Final = range(1, 6)


def build(rounds: int, seed: int) -> dict[str, Any]:
    """Every threshold's simulated wins and losses, as the file keeps them."""
    found = {str(threshold): simulate(rounds, threshold, seed + threshold) for threshold in THRESHOLDS}
    return {
        "rounds": rounds,
        "seed": seed,
        "thresholds": {
            threshold: {seat: {side: sides[side].as_list() for side in SIDES} for seat, sides in by_seat.items()}
            for threshold, by_seat in found.items()
        },
    }


@cache
def _kept(threshold: int) -> Simulated:
    data = json.loads(TABLE.read_text())["thresholds"][str(threshold)]
    return {seat: {side: Moments.from_list(data[seat][side]) for side in SIDES} for seat in data}


def table_returns(commission_bps: int, threshold: int) -> Returns:
    """The returns of a table with this commission and default threshold (every seat deciding by it)."""
    if threshold not in THRESHOLDS:
        raise ValueError(f"threshold must be 1–5, got {threshold}")
    return from_moments(_kept(threshold), commission_bps)


def under_100(returns: Returns) -> bool:
    """Whether every bet type — each side of each seat, both sides pooled, insurance — is shown to return less than
    it takes (the whole 95 % interval below 1)."""
    estimates = [returns.player, returns.banker, returns.insurance]
    estimates += [estimate for sides in returns.seats.values() for estimate in sides.values()]
    return all(estimate.ci95[1] < 1 for estimate in estimates)


@cache
def least_commission(threshold: int, step: int = 25) -> int | None:
    """The least commission (a multiple of ``step`` bps) under which every bet returns less than it takes."""
    return next((bps for bps in range(0, 10_001, step) if under_100(table_returns(bps, threshold))), None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Simulate every threshold once and write the returns table.")
    parser.add_argument("--rounds", type=int, default=20_000_000)
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument("--out", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    args.out.write_text(json.dumps(build(args.rounds, args.seed), indent=1) + "\n")
    print(f"wrote {args.out}: {args.rounds:,} rounds per threshold", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
