"""The ``studio`` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from services.cli import api, cards, controller, demo, maubinh, replay, shoe, tienlen, up


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="studio", description="Live-dealer card studio backend.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (replay, tienlen, maubinh, demo, up, api, shoe, cards, controller):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status: int = args.run(args)
    except BrokenPipeError:  # the reader went away (``studio … | head``): nothing more to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
