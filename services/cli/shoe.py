"""``studio shoe``: the shoe daemon; ``studio broker``: the embedded MQTT broker."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from services.bus import broker, topics
from services.bus.client import connect, make_client
from services.bus.messages import NewDeckCommand, encode
from services.cli.arguments import frame_rate, mqtt_url, port, shoe_id, table_id
from services.cli.commands import help_of
from services.observability.http import serve_health
from services.observability.logs import configure as configure_logs
from services.shoe.daemon import ShoeAlreadyOnlineError, ShoeConfig, ShoeDaemon
from services.shoe.devices import DeviceURLError, open_device
from services.shoe.signing import ShoeKey, new_key, write_key
from services.shoe.timecode import VideoClock


def register(commands: Any) -> None:
    shoe = commands.add_parser("shoe", help=help_of("shoe"))
    shoe.add_argument("--table", required=True, type=table_id)
    shoe.add_argument("--device", required=True, help="serial:///dev/ttyUSB0?dialect=monitor, socket://…, sim://serial")
    shoe.add_argument("--shoe-id", default=None, help="default: TABLE-shoe (TABLE-camera with --witness)")
    shoe.add_argument(
        "--witness",
        action="store_true",
        help="an overhead camera that checks the shoe's cards (the table's verify setting), dealing none",
    )
    shoe.add_argument("--outbox", type=Path, default=None, help="default: .studio/shoe-ID.outbox")
    shoe.add_argument(
        "--broker", type=mqtt_url, default=None, help="mqtt://host:port (default: STUDIO_MQTT_URL or the embedded one)"
    )
    shoe.add_argument("--fps", type=frame_rate, default=25, help="studio video frame rate for timecodes")
    shoe.add_argument("--tc-offset", type=float, default=0.0, help="seconds from UTC time of day to the video clock")
    shoe.add_argument("--http-port", type=port, default=None, help="serve /metrics, /healthz, /readyz (0: a free port)")
    shoe.add_argument("--http-host", default="127.0.0.1", help="their address (0.0.0.0: all)")
    shoe.add_argument("--key", type=Path, default=None, help="the shoe's signing key file (studio shoe-key new)")
    shoe.set_defaults(run=run_shoe)
    deck = commands.add_parser("new-deck", help=help_of("new-deck"))
    deck.add_argument("--table", required=True, type=table_id)
    deck.add_argument("--by", default="operator", help="who announces it (recorded with the deck)")
    deck.add_argument("--broker", type=mqtt_url, default=None)
    deck.set_defaults(run=run_new_deck)
    keys = commands.add_parser("shoe-key", help=help_of("shoe-key"))
    key_actions = keys.add_subparsers(dest="action", required=True, metavar="ACTION")
    new = key_actions.add_parser("new", help="write a new key for a shoe into the keys folder")
    new.add_argument("--shoe-id", required=True, type=shoe_id)
    new.add_argument("--dir", type=Path, default=broker.RUN_DIR / "keys", help="the keys folder (default .studio/keys)")
    new.set_defaults(run=run_new_key)
    mqtt = commands.add_parser("broker", help=help_of("broker"))
    mqtt.add_argument("--host", default="127.0.0.1")
    mqtt.add_argument("--port", type=port, default=0, help="0 (default): any free port; the URL goes to .studio/")
    mqtt.set_defaults(run=lambda args: broker.main(["--host", args.host, "--port", str(args.port)]))


def run_new_key(args: argparse.Namespace) -> int:
    key = new_key(args.shoe_id)
    path = write_key(args.dir, key)
    print(json.dumps({"shoe_id": key.shoe_id, "key_id": key.key_id, "file": str(path)}))
    return 0


def run_shoe(args: argparse.Namespace) -> int:
    configure_logs()
    try:
        spec = open_device(args.device)
        url = broker.broker_url(args.broker, role="shoe")
        video = VideoClock(fps=args.fps, offset=args.tc_offset)
        key = ShoeKey.load(args.key) if args.key else None
    except (DeviceURLError, broker.BrokerNotFoundError, ValueError) as error:
        print(f"studio shoe: {error}", file=sys.stderr)
        return 2
    if args.witness and spec.source == "serial":
        print(f"studio shoe: --witness needs a camera (camera://… or sim://camera), not {args.device}", file=sys.stderr)
        return 2
    shoe_id = args.shoe_id or f"{args.table}-{'camera' if args.witness else 'shoe'}"
    if key is not None and key.shoe_id != shoe_id:
        print(f"studio shoe: {args.key} is a key of shoe {key.shoe_id}, not of {shoe_id}", file=sys.stderr)
        return 2
    outbox = args.outbox or broker.RUN_DIR / f"shoe-{shoe_id}.outbox"
    if args.outbox is None:
        broker.RUN_DIR.mkdir(parents=True, exist_ok=True)  # only the default's directory is made
    elif not args.outbox.parent.is_dir():
        print(f"studio shoe: --outbox {args.outbox}: no directory {args.outbox.parent}", file=sys.stderr)
        return 2
    config = ShoeConfig(args.table, shoe_id, outbox, url, source=spec.source, key=key, witness=args.witness)
    try:
        daemon = ShoeDaemon(config, spec.device, video)
    except (OSError, sqlite3.Error) as error:
        print(f"studio shoe: cannot open the outbox {outbox}: {_reason(error)}", file=sys.stderr)
        return 2
    if key is None:
        logging.getLogger("studio.shoe").warning("shoe %s signs nothing (--key): any client could deal", shoe_id)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    logging.getLogger("studio.shoe").info(
        "shoe %s (boot %s) → %s, outbox %s", shoe_id, daemon.boot_id, broker.redacted(url), outbox
    )
    if args.http_port is not None:
        ready = lambda: {"broker": daemon.client.is_connected(), "device": daemon.device_state == "connected"}  # noqa: E731
        server = serve_health(args.http_host, args.http_port, ready)
        where = (args.http_host, server.server_address[1])
        logging.getLogger("studio.shoe").info("metrics and health on http://%s:%d", *where)
    try:
        daemon.run(stop)
    except ShoeAlreadyOnlineError as error:
        print(f"studio shoe: {error}", file=sys.stderr)
        return 2
    return 0


def _reason(error: Exception) -> str:
    return (error.strerror or str(error)) if isinstance(error, OSError) else " ".join(str(error).split())


def run_new_deck(args: argparse.Namespace) -> int:
    try:
        url = broker.broker_url(args.broker, role="operator")
        payload = encode(NewDeckCommand(by=args.by))
        topic = topics.shoe_control(args.table)
    except (broker.BrokerNotFoundError, ValueError) as error:
        print(f"studio new-deck: {error}", file=sys.stderr)
        return 2
    client = make_client(f"new-deck-{args.table}")
    connect(client, url)
    try:
        deadline = time.monotonic() + 10
        while not client.is_connected() and time.monotonic() < deadline:
            time.sleep(0.02)
        info = client.publish(topic, payload, qos=1)
        if client.is_connected():
            info.wait_for_publish(timeout=10)
    finally:
        client.disconnect()
        client.loop_stop()
    if not info.is_published():
        print(f"studio new-deck: the broker at {broker.redacted(url)} did not acknowledge within 10 s", file=sys.stderr)
        return 1
    print(f"new deck announced on {topic}")
    return 0
