"""``studio tienlen replay FILE``: recompute Tiến Lên rounds from transcripts (JSON in, JSON out)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from services.cli.jsonfile import JsonFileError, load
from services.games.tienlen.transcript import replay_to_dict


def register(commands: Any) -> None:
    parser = commands.add_parser("tienlen", help="Tiến Lên Miền Nam tools")
    tools = parser.add_subparsers(dest="tool", required=True, metavar="TOOL")
    replay = tools.add_parser("replay", help="recompute rounds from a transcript file (or - for stdin)")
    replay.add_argument("file", metavar="FILE", help="a transcript object or a JSON list of them; - reads stdin")
    replay.set_defaults(run=run_replay)


def run_replay(args: argparse.Namespace) -> int:
    try:
        document = load(args.file)
    except JsonFileError as error:
        print(f"studio tienlen replay: {error}", file=sys.stderr)
        return 1
    output: Any
    if isinstance(document, list):
        output = [replay_to_dict(transcript) for transcript in document]
        failed = any("error" in result for result in output)
    else:
        output = replay_to_dict(document)
        failed = "error" in output
    json.dump(output, sys.stdout, indent=2, ensure_ascii=False)
    print()
    return 1 if failed else 0
