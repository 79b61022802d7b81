"""Shared fixtures: a real, migrated, isolated database, and a real MQTT broker, for the tests that ask.

Database: a fresh SQLite file by default. With ``STUDIO_TEST_DATABASE_URL`` (CI: PostgreSQL) each
test gets its own schema, dropped afterwards, so tests never see each other's rows.

Broker: the embedded amqtt broker on a free port by default; with ``STUDIO_TEST_MQTT_URL`` (CI:
Mosquitto) that broker. Tests keep apart by using their own table ids, hence their own topics.
Tests that kill and restart a broker start their own process on a free port (``broker_process``):
Mosquitto's binary when CI points at Mosquitto, else the embedded broker in a subprocess.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.orm import Session, sessionmaker

from services.bus.access import ADMIN
from services.bus.broker import embedded_broker, role_url
from services.db import make_engine, migrate, session_factory

TEST_DATABASE_URL = os.environ.get("STUDIO_TEST_DATABASE_URL")


TEST_MQTT_URL = os.environ.get("STUDIO_TEST_MQTT_URL")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests that use the database or a broker are marked ``db``/``broker``: CI reruns them on the real servers."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "database" in fixtures:
            item.add_marker(pytest.mark.db)
        if "mqtt_url" in fixtures or "broker_process" in fixtures:
            item.add_marker(pytest.mark.broker)


@pytest.fixture
def mqtt_url() -> Iterator[str]:
    if TEST_MQTT_URL:
        yield TEST_MQTT_URL
        return
    with embedded_broker() as url:
        yield url


@pytest.fixture
def broker_process(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path, mosquitto=bool(TEST_MQTT_URL))
    process.start()
    yield process
    process.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class BrokerProcess:
    """A broker of the test's own, killable and restartable on the same port."""

    @property
    def url(self) -> str:
        """The superuser's login (kept across restarts in the run directory); Mosquitto's anonymous URL."""
        return role_url(self.plain_url, ADMIN, self.run_dir) if self.run_dir else self.plain_url

    def __init__(self, directory: Path, mosquitto: bool) -> None:
        self.port = free_port()
        self.plain_url = f"mqtt://127.0.0.1:{self.port}"
        self.directory = directory
        self.run_dir: Path | None = None  # the embedded broker's: its role logins are kept there
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if mosquitto and Path(binary).exists():
            config = directory / "mosquitto.conf"
            config.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
            self.command = [binary, "-c", str(config)]
        else:
            run_dir = self.run_dir = directory / "broker-run"
            self.command = [
                sys.executable,
                "-m",
                "services.bus.broker",
                "--port",
                str(self.port),
                "--run-dir",
                str(run_dir),
            ]
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = (self.directory / "broker.log").open("ab")
        self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"broker {self.command} did not listen on {self.port}: see {self.directory / 'broker.log'}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Engine]:
    if not TEST_DATABASE_URL:
        engine = make_engine(f"sqlite:///{tmp_path / 'studio.db'}")
        migrate(engine)
        yield engine
        engine.dispose()
        return
    schema = f"t_{uuid.uuid4().hex[:16]}"
    admin = make_engine(TEST_DATABASE_URL, pool_size=1)
    with admin.begin() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = make_engine(TEST_DATABASE_URL, connect_args={"options": f"-csearch_path={schema}"})
    try:
        migrate(engine)
        yield engine
    finally:
        engine.dispose()
        with admin.begin() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


@pytest.fixture
def sessions(database: Engine) -> sessionmaker[Session]:
    return session_factory(database)
