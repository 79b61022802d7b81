"""``studio controller --tables T1,T2``: the round controller for those tables."""

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
from services.cli.arguments import add_database_options, mqtt_url, open_database, port, seconds, table_ids
from services.cli.commands import help_of
from services.controller.leases import RENEW_S, TTL_S, LeaseHeldError
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
    parser.add_argument("--result-pause", type=seconds, default=5.0, help="seconds results stay before the next round")
    parser.add_argument("--manual", action="store_true", help="do not open rounds by themselves (operator opens)")
    parser.add_argument("--http-port", type=port, default=0, help="/metrics, /healthz, /readyz (0: a free port)")
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
        default=broker.RUN_DIR / "keys",
        help="the shoes' signing keys (default .studio/keys; read again when it changes)",
    )
    parser.set_defaults(run=run_controller)


def run_controller(args: argparse.Namespace) -> int:
    if args.lease_seconds < 2 * RENEW_S:
        print(f"studio controller: --lease-seconds must be at least {2 * RENEW_S:g} (renewed every {RENEW_S:g} s)",
              file=sys.stderr)  # fmt: skip
        return 2
    configure_logs()
    tables = list(args.tables)
    try:
        url = broker.broker_url(args.broker, role="controller")
    except broker.BrokerNotFoundError as error:
        print(f"studio controller: {error}", file=sys.stderr)
        return 2
    engine = open_database(args, "studio controller")
    if engine is None:
        return 2
    service = RoundService(session_factory(engine))
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
    controller = Controller(
        service, url, settings, keys=KeyRing(args.shoe_keys), standby=args.standby, lease_ttl=args.lease_seconds
    )

    def ready() -> dict[str, bool]:
        return {"broker": controller.client.is_connected(), "database": database_answers(engine)}

    server = serve_health("127.0.0.1", args.http_port, ready)
    logging.getLogger("studio.controller").info(
        "controller for %s; metrics and health on http://127.0.0.1:%d", ", ".join(tables), server.server_address[1]
    )
    try:
        controller.run(stop)
    except LeaseHeldError as error:
        print(f"studio controller: {error}", file=sys.stderr)
        return 1
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
