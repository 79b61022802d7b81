"""The ``studio`` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from services.cli import api, cards, controller, demo, maubinh, replay, shoe, tienlen, up


class Parser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr and exit status 2 (the usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="studio", description="Live-dealer card studio backend.")
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
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # the last line of defence: one line, never a traceback (STUDIO_DEBUG=1 shows it)
        if os.environ.get("STUDIO_DEBUG"):
            raise
        message = " ".join(str(error).split()) or type(error).__name__
        print(f"studio {args.command}: {type(error).__name__}: {message[:500]}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
