"""``studio wallet``: the operator's wallet (seamless wallet) from the command line.

``reconcile --round R | --since T`` pairs each call to the operator's wallet with the studio's mirror of it and
prints the verdicts (exit status 1 on any mismatch); ``drain`` sends the outbox's pending calls once, mirrors
accepted take-backs and rolls back debits of stakes never placed (what ``studio api`` does in the background),
with the wallet of ``STUDIO_WALLET_URL`` / ``STUDIO_WALLET_SECRET``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from services.cli.arguments import add_database_options, moment, open_database
from services.cli.commands import help_of


def register(commands: Any) -> None:
    parser = commands.add_parser("wallet", help=help_of("wallet"))
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    reconcile = actions.add_parser("reconcile", help="the studio's mirror against the operator's answers")
    scope = reconcile.add_mutually_exclusive_group(required=True)
    scope.add_argument("--round", dest="round_id", default=None, metavar="ROUND", help="one round's calls")
    scope.add_argument("--since", type=moment, default=None, help="calls made at or after (ISO time, UTC if no zone)")
    reconcile.add_argument("--json", action="store_true", help="one JSON document")
    drain = actions.add_parser("drain", help="send the outbox's pending calls once (and what follows from answers)")
    for action in (reconcile, drain):
        add_database_options(action)
        action.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.action == "drain":
        return _drain(args)
    engine = open_database(args, "studio wallet reconcile")
    if engine is None:
        return 2
    from services.db import session_factory
    from services.wallet.reconcile import reconcile

    with session_factory(engine)() as session:
        report = reconcile(session, args.round_id, args.since)
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        for line in report.lines:
            print(
                f"{line.verdict:9} {line.transaction_id:40} {line.kind or '-':8} {line.player or '-':12} "
                f"{line.amount:>10} operator {line.operator or '-':8} mirror {line.mirrored:>+10}"
                + (f"  ({line.note})" if line.note else "")
            )
        counts = ", ".join(f"{n} {verdict}" for verdict, n in report.counts.items())
        print(f"{len(report.lines)} calls: {counts}")
    return 0 if report.clean else 1


def _drain(args: argparse.Namespace) -> int:
    from services.db import session_factory
    from services.wallet.outbox import SeamlessWallet
    from services.wallet.protocol import WalletSettingsError, config_from
    from services.wallet.sender import WalletSender

    try:
        config = config_from(os.environ)
    except WalletSettingsError as error:
        print(f"studio wallet drain: {error}", file=sys.stderr)
        return 2
    if config is None:
        print("studio wallet drain: STUDIO_WALLET_URL is not set: no operator's wallet to send to", file=sys.stderr)
        return 2
    engine = open_database(args, "studio wallet drain")
    if engine is None:
        return 2
    done = WalletSender(SeamlessWallet(session_factory(engine), config)).step()
    print(json.dumps(done))
    return 0 if done["pending"] == 0 else 1
