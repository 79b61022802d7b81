"""The durable outbox: what was stored survives a reopen; seq keeps counting; old decks are pruned; it is private."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

import pytest

from services.shoe.outbox import Outbox


def test_unacknowledged_messages_survive_a_restart_and_seq_keeps_counting(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db")
    for _ in range(3):
        box.append(lambda seq, deck: f"m{seq}/{deck}".encode())
    box.ack([1])
    box.close()
    again = Outbox(tmp_path / "o.db")
    assert again.pending() == [(2, b"m2/0"), (3, b"m3/0")]
    assert again.append(lambda seq, deck: f"m{seq}/{deck}".encode()) == (4, b"m4/0")


def test_a_failed_build_writes_nothing(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db")

    def broken(_seq: int, _deck: int) -> bytes:
        raise ValueError("bad card")

    with contextlib.suppress(ValueError):
        box.append(broken)
    assert (box.last_seq, box.pending()) == (0, [])


def test_a_new_deck_keeps_the_previous_deck_for_resends_and_drops_older_acknowledged_ones(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db")
    make = lambda seq, deck: f"{deck}:{seq}".encode()  # noqa: E731
    box.append(make)  # deck 0
    box.append(make, new_deck=True)  # deck 1
    box.append(make)
    box.ack([1, 2, 3])
    box.append(make, new_deck=True)  # deck 2: deck 0 (acknowledged) goes
    assert [seq for seq, _ in box.between(1, 10)] == [2, 3, 4]
    assert box.deck == 2
    assert box.first_seq == 2  # what a consumer with nothing yet starts at (its status says so)


def test_an_empty_outbox_says_a_consumer_starts_at_its_next_seq(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db")
    assert (box.first_seq, box.last_seq) == (1, 0)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_outbox_and_sqlites_files_beside_it_are_its_owners_alone(tmp_path: Path) -> None:
    """The outbox holds every card (and the camera's crops): mode 0600, whatever the umask lets through."""
    previous = os.umask(0o022)
    try:
        box = Outbox(tmp_path / "o.db")
        box.append(lambda seq, deck: b"AS")
        files = sorted(tmp_path.iterdir())
        assert {path.name for path in files} >= {"o.db", "o.db-wal", "o.db-shm"}
        assert {path.name: _mode(path) for path in files} == {path.name: 0o600 for path in files}
        box.close()
    finally:
        os.umask(previous)


def test_an_outbox_others_can_read_is_tightened_when_opened(tmp_path: Path) -> None:
    """As a run before this fix (or a crash: SQLite's files beside it, with cards in them, stay) may have left it."""
    path = tmp_path / "o.db"
    box = Outbox(path)  # left open: its -wal and -shm stay, holding the card
    box.append(lambda seq, deck: b"AS")
    beside = [path, path.with_name("o.db-wal"), path.with_name("o.db-shm")]
    for file in beside:
        assert file.stat().st_size > 0  # (SQLite itself gives only an empty file the database's mode)
        file.chmod(0o644)
    again = Outbox(path)
    assert [_mode(file) for file in beside] == [0o600, 0o600, 0o600]
    assert again.pending() == [(1, b"AS")]
    again.close()
    box.close()


def test_a_missing_directory_is_refused_not_made(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Outbox(tmp_path / "missing" / "o.db")
    assert not (tmp_path / "missing").exists()
