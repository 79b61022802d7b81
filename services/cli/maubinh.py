"""``studio maubinh score FILE`` and ``studio maubinh arrange CARD×13``: Mậu Binh showdowns and auto-arrange.

``score`` reads a table object or a JSON list of them (``-`` reads stdin) and prints the result, or
a list in the same order; a table that cannot be scored gives ``{"error": message}`` in its place
and exit status 1, an unreadable file one line on stderr. ``arrange`` prints the best arrangement
of 13 cards with its expected units and the instant win the cards hold (null if none).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from services.cli.commands import help_of
from services.cli.jsonfile import mirror
from services.games.maubinh import MauBinhError, MauBinhSettings, auto_arrange, codes, parse, score_to_dict


def register(commands: Any) -> None:
    parser = commands.add_parser("maubinh", help=help_of("maubinh"))
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    score = tools.add_parser("score", help="score arranged hands from a file (or - for stdin)")
    score.add_argument("file", metavar="FILE", help="a table object or a JSON list of them; - reads stdin")
    score.set_defaults(run=run_score)
    arrange = tools.add_parser("arrange", help="the best arrangement of 13 cards")
    arrange.add_argument("cards", nargs="*", metavar="CARD", help="13 card codes such as TD AS 2C")
    arrange.add_argument(
        "--settings",
        default="{}",
        help='room settings as a JSON object, e.g. \'{"optional_instant_wins": ["six_pairs"]}\'',
    )
    arrange.set_defaults(run=run_arrange)


def run_score(args: argparse.Namespace) -> int:
    return mirror(args.file, "studio maubinh score", score_to_dict)


def run_arrange(args: argparse.Namespace) -> int:
    try:
        settings = MauBinhSettings.from_mapping(json.loads(args.settings))
        arrangement = auto_arrange(parse(args.cards), settings)
    except json.JSONDecodeError as error:
        print(f"studio maubinh arrange: --settings is not valid JSON: {error}", file=sys.stderr)
        return 1
    except MauBinhError as error:
        print(f"studio maubinh arrange: {error}", file=sys.stderr)
        return 1
    output = {
        "chi1": codes(arrangement.chi1),
        "chi2": codes(arrangement.chi2),
        "chi3": codes(arrangement.chi3),
        "expected_units": arrangement.expected_units,
        "instant": None if arrangement.instant is None else str(arrangement.instant),
    }
    json.dump(output, sys.stdout, indent=2)
    print()
    return 0
