"""``studio replay FILE``: recompute Pok Deng rounds from transcripts (JSON in, JSON out)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from services.cli.commands import help_of
from services.cli.jsonfile import JsonFileError, load
from services.games.pokdeng.errors import TranscriptError
from services.games.pokdeng.transcript import replay, result_to_dict


def register(commands: Any) -> None:
    parser = commands.add_parser("replay", help=help_of("replay"))
    parser.add_argument("file", metavar="FILE", help="a transcript object or a JSON list of them; - reads stdin")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    try:
        document = load(args.file)
    except JsonFileError as error:
        print(f"studio replay: {error}", file=sys.stderr)
        return 1
    if not isinstance(document, list):
        try:
            output: Any = result_to_dict(replay(document))
        except TranscriptError as error:
            print(f"studio replay: {error}", file=sys.stderr)
            return 1
        json.dump(output, sys.stdout, indent=2)
        print()
        return 0
    results: list[dict[str, Any]] = []
    for transcript in document:
        try:
            results.append(result_to_dict(replay(transcript)))
        except TranscriptError as error:
            results.append({"error": str(error)})
    json.dump(results, sys.stdout, indent=2)
    print()
    return 1 if any("error" in result for result in results) else 0
