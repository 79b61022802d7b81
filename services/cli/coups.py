"""``studio baccarat …`` and ``studio dragontiger …``: a coup replayed from its transcript, and each bet's exact
return for a table's settings."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from services.cli.commands import help_of
from services.cli.jsonfile import mirror
from services.games.base import GameSettingsError

Returns = Callable[[Mapping[str, Any]], dict[str, Fraction]]


def register_game(
    commands: Any, game: str, title: str, replay: Callable[[Any], dict[str, Any]], returns: Returns,
    options: Callable[[argparse.ArgumentParser], None],
) -> None:  # fmt: skip
    parser = commands.add_parser(game, help=help_of(game))
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    replayer = tools.add_parser("replay", help="recompute coups from a transcript file (or - for stdin)")
    replayer.add_argument("file", metavar="FILE", help="a transcript object or a JSON list of them; - reads stdin")
    replayer.set_defaults(run=lambda args: mirror(args.file, f"studio {game} replay", replay))
    rtp = tools.add_parser(
        "rtp",
        help="the exact return of each bet for a table's settings",
        description=f"{title}: every coup a full shoe can deal, counted exactly (no simulation). Returns are per "
        "unit staked, the stake included: 1.0 is break-even.",
    )
    options(rtp)
    rtp.add_argument("--json", action="store_true", help="one JSON object")
    rtp.set_defaults(run=lambda args: _run_rtp(args, game, title, returns))


def whole(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} is {low}–{high}, got {value}")
        return value

    return parse


def _run_rtp(args: argparse.Namespace, game: str, title: str, returns: Returns) -> int:
    settings = {name: value for name, value in vars(args).items() if name not in ("command", "tool", "json", "run")}
    try:
        result = returns(settings)
    except GameSettingsError as error:
        print(f"studio {game} rtp: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({spot: {"rtp": float(rtp), "exact": str(rtp)} for spot, rtp in result.items()}))
        return 0
    shown = ", ".join(f"{name} {value}" for name, value in settings.items())
    print(f"{title} returns per unit staked ({shown}):")
    for spot, rtp in result.items():
        print(f"  {spot:<12} {float(rtp):.6f}  (house edge {100 * float(1 - rtp):.4f} %)")
    return 0
