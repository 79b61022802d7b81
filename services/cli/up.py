"""``studio up``: the whole studio on this machine until Ctrl-C (embedded defaults, or the env URLs)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
from pathlib import Path
from typing import Any

from services.bus import topics
from services.bus.broker import public_feed_url, without_login
from services.cli.arguments import port, table_ids
from services.cli.commands import help_of
from services.rounds import queries
from services.rounds.returns import HOUSE_SETTINGS
from services.studio.assembly import RunningStudio, StudioConfig, running_studio


def register(commands: Any) -> None:
    parser = commands.add_parser("up", help=help_of("up"))
    parser.add_argument(
        "--tables", type=table_ids, default=("T1", "T2"), help="comma-separated table ids (default T1,T2)"
    )
    parser.add_argument(
        "--baccarat", type=table_ids, default=(), help="comma-separated baccarat table ids, 8-deck shoes (default none)"
    )
    parser.add_argument(
        "--dragontiger", type=table_ids, default=(),
        help="comma-separated Dragon Tiger table ids, 8-deck shoes (default none)",
    )  # fmt: skip
    parser.add_argument("--run-dir", type=Path, default=Path(".studio"), help="database, outboxes, broker URL")
    parser.add_argument("--api-port", type=port, default=8000, help="0: any free port")
    parser.add_argument(
        "--recordings", type=Path, default=None, metavar="DIR",
        help="the folder `studio record --out DIR/TABLE` writes each table's camera under: served to operators",
    )  # fmt: skip
    parser.set_defaults(run=run_up)


def coup_tables(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    """The coup tables asked for (``--baccarat``, ``--dragontiger``), each with its game."""
    return tuple((table, "baccarat") for table in args.baccarat) + tuple((t, "dragontiger") for t in args.dragontiger)


def public_login(configured: str | None, running: str) -> str:
    """How a read-only public-feed client logs in to the broker (``configured``: the URL given, if any)."""
    if configured is None:
        return (
            f"embedded amqtt, role logins in the run directory's broker.passwords (0600); "
            f"the read-only public feed: {public_feed_url(running)}"
        )
    return "the read-only public feed: user 'public', password from deploy/mosquitto/make-passwords"


def studio_urls(studio: RunningStudio, tables: tuple[str, ...], login: str, rooms: tuple[str, ...] = ()) -> str:
    """The studio's addresses, a line each: the API, the broker, each table's console, overlay and player's page, each
    room's page (``rooms``: Mậu Binh and Tiến Lên rooms, dealt online), the operator's page."""
    api = studio.api_url
    lines = [
        f"studio up: tables {', '.join(tables)} (a simulated shoe and dealer each)",
        f"  API            {api}   (OpenAPI {api}/docs, tables {api}/)",
        f"  broker         {without_login(studio.mqtt_url)}   ({login})",
    ]
    for table in tables:
        lines += [
            f"  {table} dealer console  {api}/console/{table}   (a dealer or operator token)",
            f"  {table} overlay         {api}/overlay/{table}   (public; MQTT {topics.round_state(table)})",
            f"  {table} player's page   {api}{queries.table(studio.service, table)['player_page']}   (a player token)",
        ]
    for room in rooms:
        page = queries.table(studio.service, room)["player_page"]
        lines.append(f"  {room} room page  {api}{page}   (a player token: sit at a free seat, then play)")
    lines.append(f"  operator's page  {api}/ops   (rounds, evidence, void, corrections: an operator token)")
    database = "" if studio.config.database_url else f" --database {studio.database_url}"  # else the env URL is used
    lines.append(
        f"  a console token: studio players add NAME --role dealer --tables {','.join(tables)}{database}; "
        f"an operator's: studio players add NAME --role operator{database}; an admin's (staff accounts and tokens): "
        f"studio players add NAME --role admin{database}; stop with Ctrl-C"
    )
    return "\n".join(lines)


def run_up(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    coups = coup_tables(args)
    tables = tuple(args.tables) + tuple(table for table, _game in coups)
    config = StudioConfig(
        tables=tuple(args.tables), run_dir=args.run_dir, database_url=os.environ.get("STUDIO_DATABASE_URL"),
        mqtt_url=os.environ.get("STUDIO_MQTT_URL"), api_port=args.api_port, table_settings=HOUSE_SETTINGS,
        coup_tables=coups, recordings=args.recordings,
    )  # fmt: skip
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with running_studio(config) as studio:
        print(studio_urls(studio, tables, public_login(config.mqtt_url, studio.mqtt_url)), flush=True)
        stop.wait()
    return 0
