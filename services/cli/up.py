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
from services.studio.assembly import StudioConfig, running_studio


def register(commands: Any) -> None:
    parser = commands.add_parser("up", help="run the whole studio (broker, API, controller, simulated shoes)")
    parser.add_argument("--tables", default="T1,T2", help="comma-separated table ids (default T1,T2)")
    parser.add_argument("--run-dir", type=Path, default=Path(".studio"), help="database, outboxes, broker URL")
    parser.add_argument("--api-port", type=int, default=8000, help="0: any free port")
    parser.set_defaults(run=run_up)


def run_up(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    tables = tuple(t.strip() for t in args.tables.split(",") if t.strip())
    config = StudioConfig(
        tables=tables, run_dir=args.run_dir, database_url=os.environ.get("STUDIO_DATABASE_URL"),
        mqtt_url=os.environ.get("STUDIO_MQTT_URL"), api_port=args.api_port,
    )  # fmt: skip
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with running_studio(config) as studio:
        print(f"studio up: tables {', '.join(tables)} (simulated shoe and dealer each)")
        print(f"  API        {studio.api_url}   (OpenAPI: {studio.api_url}/docs)")
        login = "embedded amqtt, anonymous" if not config.mqtt_url else "public feed: the 'public' user of deploy/"
        print(f"  broker     {studio.mqtt_url}   ({login})")
        for table in tables:
            print(f"  {table}: public state {topics.round_state(table)}   dealer {topics.round_dealer(table)}")
        print("  the dealer console and overlay web pages are not built yet: subscribe to the topics above")
        print("  an operator token: studio players add NAME --role operator; stop with Ctrl-C", flush=True)
        stop.wait()
    return 0
