"""``studio controller --tables T1,T2``: the round controller for those tables.

It fails closed: a table whose shoe has no signing key in ``--shoe-keys`` is refused at start (exit status 2,
one line naming the table and the fix) unless ``--allow-unsigned`` (tests and benchmarks only); a broker that
refuses its login stops it at start too, before it takes any table's lease.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from services.bus import broker
from services.bus.client import LoginRefusedError
from services.catalog import STUDIO_GAMES
from services.cli.arguments import add_database_options, mqtt_url, open_database, port, seconds, table_ids
from services.cli.commands import help_of
from services.controller.errors import LeaseHeldError, UnsignedShoeError
from services.controller.leases import RENEW_S, TTL_S
from services.controller.runner import Controller
from services.controller.table import ControllerSettings
from services.db import session_factory
from services.observability.http import serve_health
from services.observability.logs import configure as configure_logs
from services.rounds.errors import RoundError
from services.rounds.models import GameTable
from services.rounds.returns import HOUSE_SETTINGS
from services.rounds.service import RoundService
from services.shoe.signing import KeyRing


def register(commands: Any) -> None:
    parser = commands.add_parser("controller", help=help_of("controller"))
    parser.add_argument(
        "--tables",
        required=True,
        type=table_ids,
        help="comma-separated table ids (one missing is made: Pok Deng, 5 %% commission)",
    )
    parser.add_argument("--shoe-id", default=None, help="the shoe of every table (default: TABLE-shoe)")
    parser.add_argument(
        "--cameras",
        action="store_true",
        help="every table has an overhead camera, TABLE-camera (studio shoe --witness), checking its shoe's cards",
    )
    parser.add_argument("--camera-id", default=None, help="the overhead camera of every table (implies --cameras)")
    parser.add_argument(
        "--result-pause", type=seconds, default=7.0,
        help="seconds a result stays up before the next round, where the table sets none (default 7)",
    )  # fmt: skip
    parser.add_argument("--manual", action="store_true", help="do not open rounds by themselves (operator opens)")
    parser.add_argument("--http-port", type=port, default=0, help="/metrics, /healthz, /readyz (0: a free port)")
    parser.add_argument("--http-host", default="127.0.0.1", help="their address (0.0.0.0: all)")
    parser.add_argument("--broker", type=mqtt_url, default=None)
    parser.add_argument(
        "--standby", action="store_true", help="if another controller writes a table, wait and take over when it stops"
    )
    parser.add_argument(
        "--lease-seconds", type=seconds, default=TTL_S, help="how long a table's lease lasts unrenewed (default 5)"
    )
    add_database_options(parser)
    parser.add_argument(
        "--shoe-keys",
        type=Path,
        default=None,
        help="the folder of the shoes' signing keys (default .studio/keys; read again when it changes)",
    )
    parser.add_argument(
        "--allow-unsigned",
        action="store_true",
        help="drive a table whose shoe has no key (any client of the broker could deal there): tests and benchmarks",
    )
    parser.set_defaults(run=run_controller)


def keys_folder(given: Path | None) -> Path:
    """The shoes' keys folder: one given must be a folder (a file or a mistyped path would leave every table without
    a key); the default may not exist yet (then no table has a key, which the start refuses unless allowed)."""
    if given is None:
        return broker.RUN_DIR / "keys"
    if given.is_dir():
        return given
    if given.exists():
        raise ValueError(f"--shoe-keys {given} is not a folder (give the folder of the shoes' *.key files)")
    raise ValueError(f"--shoe-keys {given}: no folder there (make keys with: studio shoe-key new --shoe-id ID)")


def run_controller(args: argparse.Namespace) -> int:
    if args.lease_seconds < 2 * RENEW_S:
        print(f"studio controller: --lease-seconds must be at least {2 * RENEW_S:g} (renewed every {RENEW_S:g} s)",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        keys = keys_folder(args.shoe_keys)
    except ValueError as error:
        print(f"studio controller: {error}", file=sys.stderr)
        return 2
    tables = list(args.tables)
    try:
        url = broker.broker_url(args.broker, role="controller")
    except broker.BrokerNotFoundError as error:
        print(f"studio controller: {error}", file=sys.stderr)
        return 2
    engine = open_database(args, "studio controller")
    if engine is None:
        return 2
    service = RoundService(session_factory(engine), games=STUDIO_GAMES)
    for table in tables:
        with service.sessions() as session:
            exists = session.get(GameTable, table) is not None
        if not exists:  # a convenience for a first run: the studio's house commission (HOUSE_SETTINGS)
            try:
                service.create_table(table, settings=HOUSE_SETTINGS)
            except RoundError as error:
                print(f"studio controller: {error}", file=sys.stderr)
                return 2
    settings = {
        table: ControllerSettings(
            args.shoe_id or f"{table}-shoe",
            result_pause_ms=int(1000 * args.result_pause),
            auto_open=not args.manual,
            camera_id=args.camera_id or (f"{table}-camera" if args.cameras else ""),
        )
        for table in tables
    }
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        controller = Controller(
            service, url, settings, keys=KeyRing(keys), standby=args.standby, lease_ttl=args.lease_seconds,
            allow_unsigned=args.allow_unsigned,
        )  # fmt: skip
    except UnsignedShoeError as error:
        print(f"studio controller: {error}", file=sys.stderr)
        return 2
    configure_logs()  # from here on, JSON lines: a refusal to start above is one plain line, nothing else

    def ready() -> dict[str, bool]:
        return {"broker": controller.client.is_connected(), "database": database_answers(engine)}

    server = serve_health(args.http_host, args.http_port, ready)
    logging.getLogger("studio.controller").info(
        "controller for %s; metrics and health on http://%s:%d", ", ".join(tables), args.http_host,
        server.server_address[1],
    )  # fmt: skip
    try:
        controller.run(stop)
    except LeaseHeldError as error:
        print(f"studio controller: {error}", file=sys.stderr)
        return 1
    except (LoginRefusedError, UnsignedShoeError) as error:  # a key removed since the start is refused here
        print(f"studio controller: {error}", file=sys.stderr)
        return 2
    finally:
        server.shutdown()
    if controller.lost:
        for why in sorted(controller.lost.values()):
            print(f"studio controller: stopped: {why}", file=sys.stderr)
        return 3
    return 0


def database_answers(engine: Engine) -> bool:
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return False
    return True
