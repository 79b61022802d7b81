"""``studio pokdeng rtp``: the expected return of each Pok Deng bet for a table's settings."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from services.cli.arguments import seed
from services.cli.commands import help_of
from services.cli.coups import whole
from services.games.pokdeng.settings import LARGEST_LOSS_MULTIPLE, LARGEST_STAKE, THRESHOLDS

MAX_ROUNDS = 100_000_000  # about 5 minutes on one core (10,000,000 rounds, the default, take about 30 s)


def register(commands: Any) -> None:
    parser = commands.add_parser("pokdeng", help=help_of("pokdeng"))
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    rtp = tools.add_parser(
        "rtp",
        help="the return of each bet type (player side, banker side, insurance) for a table's settings",
        description="Insurance exactly; the player and banker sides by simulating whole rounds (vectorised), with "
        "the 95 % interval. Returns are per unit staked: 1.0 is break-even.",
    )
    rtp.add_argument("--commission-bps", type=_commission, default=0, help="commission on wins (default 0)")
    rtp.add_argument("--threshold", type=_threshold, default=4, help="every seat's auto-draw threshold, 1–5 (4)")
    rtp.add_argument(
        "--hold-multiple", type=_hold_multiple, default=3, help="the credit hold (it does not change the returns)"
    )
    rtp.add_argument(
        "--rounds", type=_rounds, default=10_000_000, help=f"rounds to simulate, 1–{MAX_ROUNDS:,} (10,000,000)"
    )
    rtp.add_argument("--seed", type=seed, default=1, help="the simulation's seed (1)")
    rtp.add_argument(
        "--collusion",
        action="store_true",
        help="instead: the best return per unit staked together that a group reaches on one seat (a decider and "
        "friends on the banker side), exact, under the decision rule the tables play and under the spec's first rule",
    )
    rtp.add_argument("--min-stake", type=_stake, default=1, help="the table's least stake (1; --collusion)")
    rtp.add_argument("--max-stake", type=_stake, default=1_000_000, help="its largest (1,000,000; --collusion)")
    rtp.add_argument("--json", action="store_true", help="one JSON object")
    rtp.set_defaults(run=run)


def _bounded(text: str, low: int, high: int, what: str) -> int:
    return whole(low, high, what)(text)


def _rounds(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_ROUNDS:
        raise argparse.ArgumentTypeError(f"rounds to simulate are 1–{MAX_ROUNDS:,} (a few minutes), got {value}")
    return value


def _commission(text: str) -> int:
    return _bounded(text, 0, 10_000, "a commission in basis points")


def _threshold(text: str) -> int:
    return _bounded(text, THRESHOLDS.start, THRESHOLDS.stop - 1, "a threshold")


def _hold_multiple(text: str) -> int:
    return _bounded(text, LARGEST_LOSS_MULTIPLE, 1_000, "a hold multiple (never below the largest loss, 3)")


def _stake(text: str) -> int:
    return _bounded(text, 1, LARGEST_STAKE, "a stake in minor units")


def run(args: argparse.Namespace) -> int:
    from services.games.pokdeng.rtp import returns

    if args.collusion:
        return _collusion(args)
    started = time.perf_counter()
    result = returns(args.rounds, args.threshold, args.commission_bps, args.seed)
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(result.as_dict() | {"settings": _settings(args)}))
        return 0
    print(f"Pok Deng returns per unit staked ({_describe(args)}; {args.rounds:,} rounds in {seconds:.1f} s):")
    rows = [("player side", result.player), ("banker side", result.banker), ("insurance (exact)", result.insurance)]
    for name, estimate in rows:
        low, high = estimate.ci95
        above = "  ≥ 100 %: the bettor has the edge" if low >= 1.0 else ""
        print(f"  {name:<18} {estimate.rtp:.4%}  (95 % interval {low:.4%} – {high:.4%}){above}")
    for seat, sides in result.seats.items():
        print(f"  seat {seat}: player side {sides['player'].rtp:.4%}, banker side {sides['banker'].rtp:.4%}")
    return 0


def _settings(args: argparse.Namespace) -> dict[str, int]:
    return {
        "commission_bps": args.commission_bps, "threshold": args.threshold, "hold_multiple": args.hold_multiple,
        "rounds": args.rounds, "seed": args.seed,
    }  # fmt: skip


def _describe(args: argparse.Namespace) -> str:
    return f"commission {args.commission_bps} bps, threshold {args.threshold}, hold {args.hold_multiple}×"


def _collusion(args: argparse.Namespace) -> int:
    from services.games.pokdeng import collusion

    if args.min_stake > args.max_stake:
        print(
            f"studio pokdeng rtp: --min-stake {args.min_stake} is above --max-stake {args.max_stake}", file=sys.stderr
        )
        return 2
    table = (args.threshold, args.min_stake, args.max_stake)
    found = {
        rule: collusion.worst_pair(collusion.kept(), args.commission_bps, *table, rule=rule).as_dict()
        | {"least_commission_bps": collusion.table_least_commission(*table, rule=rule)}
        for rule in ("guarded", "open")
    }
    settings = {"commission_bps": args.commission_bps, "threshold": args.threshold, "min_stake": args.min_stake,
                "max_stake": args.max_stake}  # fmt: skip
    if args.json:
        print(json.dumps(found["guarded"] | {"open_rule": found["open"], "settings": settings}))
        return 0
    print(f"Pok Deng: the best return per unit staked together by a group on one seat ({_describe(args)}, stakes "
          f"{args.min_stake:,}–{args.max_stake:,}):")  # fmt: skip
    for rule, words in (("guarded", "the rule the tables play"), ("open", "a decider however outweighed")):
        group = found[rule]
        least = group["least_commission_bps"]
        print(f"  {words:<30} {group['worst_pair_rtp']:.4%}  (under 100 % from a commission of {least} bps)")
    return 0
