"""``studio tienlen replay FILE``: recompute Tiến Lên rounds from transcripts (JSON in, JSON out)."""

from __future__ import annotations

import argparse
from typing import Any

from services.cli.commands import help_of
from services.cli.jsonfile import mirror
from services.games.tienlen.transcript import replay_to_dict


def register(commands: Any) -> None:
    parser = commands.add_parser("tienlen", help=help_of("tienlen"))
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    replay = tools.add_parser("replay", help="recompute rounds from a transcript file (or - for stdin)")
    replay.add_argument("file", metavar="FILE", help="a transcript object or a JSON list of them; - reads stdin")
    replay.set_defaults(run=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    return mirror(args.file, "studio tienlen replay", replay_to_dict)
