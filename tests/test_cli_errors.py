"""Every ``studio`` subcommand answers bad arguments with one line and exit status 1–2, never a traceback."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import wait_until

pytestmark = pytest.mark.xdist_group("cli-errors")  # its module fixture (70 subprocesses) once, on one worker

NOBODY = "mqtt://127.0.0.1:1"  # nothing listens there: a command that got that far would fail to connect
BAD = [
    (["nonsense"], "invalid choice: 'nonsense'"),
    (["replay", "/nonexistent.json"], "cannot read /nonexistent.json"),
    (["tienlen", "replay", "/nonexistent.json"], "cannot read /nonexistent.json"),
    (["verify", "/nonexistent.json"], "cannot read /nonexistent.json"),
    (["verify"], "the following arguments are required: FILE"),
    (["maubinh", "score", "/nonexistent.json"], "cannot read /nonexistent.json"),
    (["maubinh", "arrange", "AS", "KS"], "expected 13 cards, got 2"),
    (["baccarat", "replay", "/nonexistent.json"], "cannot read /nonexistent.json"),
    (["baccarat", "rtp", "--tie-pays", "x"], "expected a whole number, got 'x'"),
    (["dragontiger", "rtp", "--suited-tie-pays", "0"], "what a suited tie pays is 1–1000, got 0"),
    (["demo", "--rounds", "0"], "expected a whole number ≥ 1, got 0"),
    (["demo", "--tables", "bad table"], "invalid table id 'bad table'"),
    (["up", "--api-port", "70000"], "a port is 0–65535, got 70000"),
    (["up", "--tables", ","], "expected comma-separated table ids"),
    (["api", "--database", "nosuchdb://x"], "unsupported database 'nosuchdb'"),
    (["api", "--port", "http"], "expected a whole number, got 'http'"),
    (["players", "add", "bad id!", "--database", "sqlite:///{tmp}/p.db", "--create-database"], "invalid id 'bad id!'"),
    (
        ["players", "add", "ana", "--database", "sqlite:///{tmp}/none.db"],
        "none.db: point --database or STUDIO_DATABASE_URL",
    ),
    (["api", "--database", "sqlite:///{tmp}/none.db"], "no database at"),
    (["players", "add", "ana", "--role", "king"], "invalid choice: 'king'"),
    (["broker", "--port", "-5"], "a port is 0–65535, got -5"),
    (["broker", "--host", "999.1.1.1"], "studio broker: cannot listen on 999.1.1.1:0: "),
    (["broker", "--port", "{busy}"], "studio broker: cannot listen on 127.0.0.1:{busy}: Address already in use"),
    (["shoe", "--table", "T/1#", "--device", "sim://serial"], "invalid table id 'T/1#'"),
    (["shoe", "--table", "T1", "--device", "sim://serial", "--broker", "http://x"], "invalid MQTT URL 'http://x'"),
    (["shoe", "--table", "T1", "--device", "sim://serial?interval=-1", "--broker", NOBODY], "interval must be within"),
    (["shoe", "--table", "T1", "--device", "usb://x", "--broker", NOBODY], "unknown device usb://x"),
    (["record", "--table", "T1", "--device", "usb://x", "--out", "{tmp}/rec"], "unknown device usb://x"),
    (["shoe", "--table", "T1", "--device", "sim://serial", "--fps", "0"], "expected a whole number ≥ 1, got 0"),
    (
        ["shoe", "--table", "T1", "--device", "sim://serial", "--outbox", "/nonexistent/dir/o", "--broker", NOBODY],
        "--outbox /nonexistent/dir/o: no directory /nonexistent/dir",
    ),
    (
        ["shoe", "--table", "T1", "--device", "sim://serial", "--outbox", "{tmp}", "--broker", NOBODY],
        "cannot open the outbox",
    ),
    (["new-deck", "--table", "T/1"], "invalid table id 'T/1'"),
    (["shoe-key", "new", "--shoe-id", "a b"], "invalid table id 'a b'"),
    (
        ["shoe", "--table", "T1", "--device", "sim://serial", "--key", "/no.key", "--broker", NOBODY],
        "cannot read the key",
    ),
    (["cards", "calibrate", "/nonexistent", "--out", "{tmp}/t.npz"], "/nonexistent is not a folder"),
    (["cards", "recognize", "{tmp}/empty.png", "--templates", "{tmp}/t.npz"], "is not a readable image"),
    (["cards", "recognize", "{tmp}/card.png", "--templates", "{tmp}/empty.npz"], "not a templates file"),
    (["controller", "--tables", "bad table", "--broker", NOBODY], "invalid table id 'bad table'"),
    (["controller", "--tables", "T1", "--database", "nosuchdb://x"], "unsupported database 'nosuchdb'"),
    (["controller", "--tables", "T1", "--database", "sqlite", "--broker", NOBODY], "not a database URL: 'sqlite'"),
    (["controller", "--tables", "T1", "--result-pause", "-1"], "expected 0–86400 seconds"),
    (
        ["controller", "--tables", "T1", "--lease-seconds", "1", "--broker", NOBODY],
        "--lease-seconds must be at least 2",
    ),
    (["controller", "--tables", "T1", "--broker", NOBODY, "--database", "sqlite:///{tmp}/none.db"], "no database at"),
    # fail closed: the shoe's keys folder must be a folder, and a table whose shoe has no key there is refused
    (["controller", "--tables", "T1", "--shoe-keys", "{tmp}/empty.png", "--broker", NOBODY], "is not a folder"),
    (["controller", "--tables", "T1", "--shoe-keys", "/nonexistent/keys", "--broker", NOBODY], "no folder"),
    (
        ["controller", "--tables", "T1", "--broker", NOBODY, "--database", "sqlite:///{tmp}/k.db", "--create-database"],
        "table T1: shoe T1-shoe has no signing key in .studio/keys: make one (studio shoe-key new --shoe-id T1-shoe)",
    ),
    (["pokdeng", "rtp", "--threshold", "7"], "a threshold is 1–5, got 7"),
    (
        ["pokdeng", "rtp", "--rounds", "99999999999999999999"],
        "rounds to simulate are 1–100,000,000 (a few minutes), got 99999999999999999999",
    ),
    (["pokdeng", "rtp", "--hold-multiple", "2"], "a hold multiple (never below the largest loss, 3) is 3–1000, got 2"),
    (["ops", "rounds", "--state", "won"], "invalid choice: 'won'"),
    (["ops", "correct", "r1", "--card", "8"], "expected INDEX=CARD such as 8=2C, got '8'"),
    (["ops", "approve", "one"], "invalid int value: 'one'"),
    (["ops", "approve", "1", "--database", "sqlite:///{tmp}/p.db"], "name the acting operator with --token"),
    (["ops", "rounds", "--since", "yesterday"], "expected an ISO time such as 2026-12-04T13:00:00Z, got 'yesterday'"),
    (["ops", "show", "r1", "--database", "sqlite:///{tmp}/none.db"], "no database at"),
    (["wallet", "reconcile"], "one of the arguments --round --since is required"),
    (["wallet", "reconcile", "--since", "friday"], "expected an ISO time such as 2026-12-04T13:00:00Z, got 'friday'"),
    (["wallet", "reconcile", "--round", "r1", "--database", "sqlite:///{tmp}/none.db"], "no database at"),
    (["wallet", "drain"], "STUDIO_WALLET_URL is not set: no operator's wallet to send to"),
    (["sim", "--faults", "gremlins"], "unknown fault gremlins (use all, none, or some of: crash, network"),
    (["sim", "--rounds", "0"], "expected a whole number ≥ 1, got 0"),
    (["sim", "--seed", "-1"], "a seed is 0 to 2^63-1, got -1"),
    (["sim", "--database", "postgresql+psycopg://x@127.0.0.1:1/none"], "OperationalError"),
    (
        ["controller", "--tables", "T1", "--broker", NOBODY, "--database", "postgresql+psycopg://x@127.0.0.1:1/none"],
        "OperationalError",
    ),
]


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def busy_port() -> Iterator[int]:
    """A port something listens on (never assumed free or taken: this test's own socket holds it)."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        yield int(busy.getsockname()[1])


@pytest.fixture(scope="session")  # once a worker: xdist may run the module in pieces
def answers(tmp_path_factory: pytest.TempPathFactory, busy_port: int) -> list[tuple[int, str, str]]:
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "empty.npz").write_bytes(b"")
    (tmp / "empty.png").write_bytes(b"")
    import cv2
    import numpy as np

    cv2.imwrite(str(tmp / "card.png"), np.full((40, 30, 3), 255, np.uint8))

    # each command line its own process, forked from one that loaded the CLI once (``tests/forked_cli.py``)
    cases = [{"argv": [arg.format(tmp=tmp, busy=busy_port) for arg in argv], "cwd": str(tmp)} for argv, _ in BAD]
    done = subprocess.run(
        [sys.executable, "-m", "tests.forked_cli"], input=json.dumps(cases), capture_output=True, text=True,
        timeout=300, check=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    return [(status, out, err) for status, out, err in json.loads(done.stdout)]


@pytest.mark.parametrize("case", range(len(BAD)), ids=[" ".join(argv[:3]) for argv, _ in BAD])
def test_bad_arguments_get_one_line_naming_them(answers: list[tuple[int, str, str]], busy_port: int, case: int) -> None:
    status, _out, err = answers[case]
    expected = BAD[case][1].format(busy=busy_port)
    assert "Traceback" not in err
    assert status in (1, 2), err
    assert expected in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("studio"), err


def test_every_subcommand_is_covered() -> None:
    from services.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    covered = {argv[0] for argv, _ in BAD}
    assert set(commands) <= covered, f"no bad-argument case for: {sorted(set(commands) - covered)}"


def test_debugging_shows_the_traceback(tmp_path: Path) -> None:
    """STUDIO_DEBUG=1 lets an unexpected error through whole, for the developer."""
    command = [sys.executable, "-m", "services.cli", "controller", "--tables", "T1", "--broker", NOBODY]
    command += ["--database", "postgresql+psycopg://x@127.0.0.1:1/none"]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=60, check=False, env={"STUDIO_DEBUG": "1", "PATH": ""}
    )
    assert "Traceback" in done.stderr


def test_a_new_sqlite_database_is_made_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    command = [sys.executable, "-m", "services.cli", "players", "add", "boss", "--role", "operator"]
    command += ["--database", f"sqlite:///{path}"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert refused.returncode == 2 and not path.exists()
    made = subprocess.run([*command, "--create-database"], capture_output=True, text=True, timeout=60, check=False)
    assert made.returncode == 0 and path.exists() and '"token"' in made.stdout


def test_a_given_outbox_directory_is_never_made(tmp_path: Path) -> None:
    outbox = tmp_path / "missing" / "dir" / "o"
    command = [sys.executable, "-m", "services.cli", "shoe", "--table", "T1", "--device", "sim://serial"]
    done = subprocess.run(
        [*command, "--outbox", str(outbox), "--broker", NOBODY], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and f"no directory {outbox.parent}" in done.stderr
    assert not (tmp_path / "missing").exists()


def test_the_default_outbox_directory_is_made_and_the_outbox_is_private(tmp_path: Path) -> None:
    """Without --outbox, the run directory is made; the outbox in it (it holds the cards) is its owner's alone."""
    run_dir = tmp_path / "run" / "dir"
    command = [sys.executable, "-m", "services.cli", "shoe", "--table", "T1", "--device", "sim://serial"]
    env = os.environ | {"STUDIO_RUN_DIR": str(run_dir)}
    process = subprocess.Popen(
        [*command, "--broker", NOBODY], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    outbox = run_dir / "shoe-T1-shoe.outbox"
    try:
        wait_until(outbox.exists, 30, "the default outbox")
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert stat.S_IMODE(outbox.stat().st_mode) == 0o600
