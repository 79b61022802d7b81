"""``studio verify FILE``: check a published shuffle against the commitment made before its deal."""

from __future__ import annotations

import argparse
from typing import Any

from services.cli.commands import help_of
from services.cli.jsonfile import mirror
from services.games.shuffle import ShuffleError, verify


def register(commands: Any) -> None:
    parser = commands.add_parser("verify", help=help_of("verify"))
    parser.add_argument(
        "file", metavar="FILE", help='{"commitment": …, "deck": [52 codes], "salt": …} or a list of them; - is stdin'
    )
    parser.set_defaults(run=run_verify)


def answer(document: Any) -> dict[str, Any]:
    if not isinstance(document, dict):
        return {"error": "expected an object with commitment, deck and salt"}
    unknown = sorted(set(document) - {"commitment", "deck", "salt"})
    if unknown:
        return {"error": f"unknown key {unknown[0]!r} (expected commitment, deck, salt)"}
    try:
        shuffle = verify(document.get("commitment"), document.get("deck"), document.get("salt"))
    except ShuffleError as error:
        return {"error": str(error)}
    return {"verified": True, "commitment": shuffle.commitment()}


def run_verify(args: argparse.Namespace) -> int:
    return mirror(args.file, "studio verify", answer)
