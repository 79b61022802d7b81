"""Argument types shared by the ``studio`` subcommands: bad values are refused by argparse, in one line."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from urllib.parse import urlsplit

from sqlalchemy import Engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from services.bus import broker, topics
from services.db import DatabaseNotFoundError, make_engine, migrate, require_existing

DATABASES = ("sqlite", "postgresql", "postgresql+psycopg")


def table_id(text: str) -> str:
    try:
        topics.round_state(text)  # the topic names hold the rule for table ids
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def shoe_id(text: str) -> str:
    return table_id(text)  # the same rule: it names files and appears in client ids


def table_ids(text: str) -> tuple[str, ...]:
    tables = tuple(table_id(part.strip()) for part in text.split(",") if part.strip())
    if not tables:
        raise argparse.ArgumentTypeError(f"expected comma-separated table ids, got {text!r}")
    return tables


def port(text: str) -> int:
    value = _integer(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0–65535, got {value}")
    return value


def positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {value}")
    return value


def frame_rate(text: str) -> int:
    """A video frame rate the studio's video clock counts (``VideoClock``: 1–120 fps)."""
    value = positive_int(text)
    if value > 120:
        raise argparse.ArgumentTypeError(f"a frame rate is 1–120 fps, got {value}")
    return value


def non_negative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 0, got {value}")
    return value


def seed(text: str) -> int:
    value = _integer(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"a seed is 0 to 2^63-1, got {value}")
    return value


def moment(text: str) -> datetime:
    """An ISO 8601 time (UTC when it names no zone)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an ISO time such as 2026-12-04T13:00:00Z, got {text!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value <= 86_400:
        raise argparse.ArgumentTypeError(f"expected 0–86400 seconds, got {text}")
    return value


def mqtt_url(text: str) -> str:
    try:
        broker.host_port(text)
        urlsplit(text).port  # noqa: B018 - raises for a port out of range
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def database_url(text: str) -> str:
    try:
        url = make_url(text)
    except ArgumentError:
        raise argparse.ArgumentTypeError(f"not a database URL: {text!r} (e.g. sqlite:///studio.db)") from None
    if url.drivername not in DATABASES:
        raise argparse.ArgumentTypeError(
            f"unsupported database {url.drivername!r} in {text!r} (use one of: {', '.join(DATABASES)})"
        )
    return text


def add_database_options(parser: argparse.ArgumentParser) -> None:
    """``--database`` (default: STUDIO_DATABASE_URL, else studio.db) and ``--create-database``."""
    parser.add_argument(
        "--database", type=database_url, default=None, help="database URL (default: STUDIO_DATABASE_URL or studio.db)"
    )
    parser.add_argument(
        "--create-database", action="store_true", help="make the SQLite file if it is not there (else refused)"
    )


def open_database(args: argparse.Namespace, prog: str) -> Engine | None:
    """The studio's database, migrated; None (after one line on stderr) for a SQLite file that is not there."""
    if not args.create_database:
        try:
            require_existing(args.database)
        except DatabaseNotFoundError as error:
            print(f"{prog}: {error}", file=sys.stderr)
            return None
    engine = make_engine(args.database)
    migrate(engine)
    return engine


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
