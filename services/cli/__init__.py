"""The ``studio`` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from services.cli.commands import COMMANDS


class Parser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr and exit status 2 (the usage is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with ``command``'s module loaded (None: every module, as for tests of the whole CLI)."""
    parser = Parser(prog="studio", description="Live-dealer card studio backend.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = {module for module, _ in COMMANDS.values()} if command is None else set()
    if command in COMMANDS:
        modules.add(COMMANDS[command][0])
    for module in sorted(modules):
        importlib.import_module(f"services.cli.{module}").register(commands)
    registered = set(commands.choices)
    for name, (_, help_text) in COMMANDS.items():
        if name not in registered:
            commands.add_parser(name, help=help_text)  # listed; its module loads when it is the command
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(arguments[0] if arguments else None).parse_args(arguments)
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
