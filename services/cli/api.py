"""``studio api``: the betting API on the embedded defaults (SQLite file) or ``STUDIO_DATABASE_URL``.

``studio players add ID --role admin`` creates an account and prints its bearer token.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from services.cli.arguments import add_database_options, open_database, port, table_ids
from services.cli.commands import help_of
from services.db import session_factory
from services.rounds.errors import RoundError
from services.rounds.players import ROLES, PlayerService


def register(commands: Any) -> None:
    api = commands.add_parser("api", help=help_of("api"))
    api.add_argument("--host", default="127.0.0.1")
    api.add_argument("--port", type=port, default=8000)
    api.add_argument(
        "--trusted-proxy", default="", metavar="IPS",
        help="the reverse proxies (comma-separated addresses) whose X-Forwarded-For names the client; by default "
        "none: the address recorded for each request (proposals, the staff log) is the connection's own",
    )  # fmt: skip
    api.add_argument(
        "--recordings", type=Path, default=None, metavar="DIR",
        help="the folder `studio record` writes each table's camera under (DIR/TABLE/index.m3u8): served to operators",
    )  # fmt: skip
    add_database_options(api)
    api.set_defaults(run=run_api)
    players = commands.add_parser("players", help=help_of("players"))
    actions = players.add_subparsers(dest="action", required=True)
    add = actions.add_parser(
        "add",
        help="create an account and print its bearer token (the first admin comes from here: an admin makes the "
        "other staff accounts over the API, each in the staff log; this command's are logged as cli@HOST)",
    )
    add.add_argument("id")
    add.add_argument("--role", choices=ROLES, default="player")
    add.add_argument("--tables", type=table_ids, default=(), help="a dealer's tables (comma-separated)")
    add_database_options(add)
    add.set_defaults(run=run_add_player)
    confirm = actions.add_parser(
        "confirm", help="confirm an operator's token an admin issued (until then it proposes and decides nothing)"
    )
    confirm.add_argument("id")
    add_database_options(confirm)
    confirm.set_defaults(run=run_confirm)


def run_api(args: argparse.Namespace) -> int:

    from services.api.app import create_app
    from services.api.consoles import ViewRelay
    from services.api.notify import RoundNotifier
    from services.bus.broker import BrokerNotFoundError, broker_url
    from services.wallet.protocol import WalletSettingsError, config_from

    try:
        wallet = config_from(os.environ)
    except WalletSettingsError as error:
        print(f"studio api: {error}", file=sys.stderr)
        return 2
    engine = open_database(args, "studio api")
    if engine is None:
        return 2
    try:
        url = broker_url(role="api")
    except BrokerNotFoundError:
        # no broker: the controller still sees API changes at its next re-read (within a second);
        # the dealer console feed answers 503 until the API runs beside a broker
        app = create_app(engine, wallet=wallet, recordings=args.recordings)
    else:
        relay = ViewRelay(url)
        app = create_app(engine, notify=RoundNotifier(url), relay=relay, wallet=wallet, recordings=args.recordings)
    serve(app, args.host, args.port, args.trusted_proxy)
    return 0


def run_add_player(args: argparse.Namespace) -> int:
    engine = open_database(args, "studio players add")
    if engine is None:
        return 2
    if args.tables and args.role != "dealer":
        print("studio players add: --tables is for dealers (operators run every table)", file=sys.stderr)
        return 2
    players = PlayerService(session_factory(engine))
    try:
        token = players.register(args.id, args.role)
        for table in args.tables:
            players.assign(table, args.id)
    except RoundError as error:
        print(f"studio players add: {error}", file=sys.stderr)
        return 1
    tables = {"tables": list(args.tables)} if args.role == "dealer" else {}
    print(json.dumps({"id": args.id, "role": args.role, "token": token} | tables))
    return 0


def run_confirm(args: argparse.Namespace) -> int:
    engine = open_database(args, "studio players confirm")
    if engine is None:
        return 2
    try:
        confirmed = PlayerService(session_factory(engine)).confirm(args.id)
    except RoundError as error:
        print(f"studio players confirm: {error}", file=sys.stderr)
        return 1
    print(json.dumps(confirmed))
    return 0


def serve(app: Any, host: str, port: int, trusted_proxy: str = "") -> None:
    """uvicorn until SIGINT/SIGTERM: a clean stop ends the open state streams and exits 0 (``services.api.server``)."""
    from services.api.server import api_server

    api_server(app, host, port, log_level="info", **proxies(trusted_proxy)).run()


def proxies(trusted: str) -> dict[str, Any]:
    """uvicorn's proxy settings: X-Forwarded-For is believed only from ``trusted`` addresses (none by default: any
    local process could otherwise name itself any address in the records)."""
    if not trusted:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": trusted}
