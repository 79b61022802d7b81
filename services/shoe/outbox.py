"""The shoe daemon's durable outbox: every card is on disk before it is published.

A message is written (and fsynced: SQLite ``synchronous=FULL``) with its sequence number before
the first publish, marked acknowledged when the broker's PUBACK arrives, and published again
after a restart if it never was. ``seq`` keeps counting across restarts of the daemon, so a
consumer orders one shoe's messages by it alone. The messages of the current and the previous
deck stay, acknowledged or not, for consumers that ask for a gap again. The file and SQLite's beside it are
its owner's alone (mode 0600): they hold every card. Its folder must exist (the caller makes the default one).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY,
    deck INTEGER NOT NULL,
    payload BLOB NOT NULL,
    acked INTEGER NOT NULL DEFAULT 0
);
"""


PRIVATE = 0o600  # the outbox holds the cards (and the camera's crops): its owner's alone
SIDE_FILES = ("-wal", "-shm", "-journal")  # SQLite's, beside the database; they hold cards too


def open_private(path: Path) -> None:
    """Make ``path`` (mode 0600) if it is not there, and tighten it and SQLite's files beside it if looser.

    Its folder must exist: a mistyped path is refused (``FileNotFoundError``), not made. SQLite gives the files it
    makes beside a database the database's own mode.
    """
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE)
    try:
        if os.fstat(descriptor).st_mode & 0o077:
            os.fchmod(descriptor, PRIVATE)
    finally:
        os.close(descriptor)
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        with suppress(FileNotFoundError):
            if side.stat().st_mode & 0o077:
                side.chmod(PRIVATE)


class Outbox:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        open_private(self.path)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = FULL")
        self._db.executescript(SCHEMA)

    def _counter(self, name: str) -> int:
        row = self._db.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()
        return int(row[0]) if row else 0

    @property
    def last_seq(self) -> int:
        with self._lock:
            return self._counter("seq")

    @property
    def first_seq(self) -> int:
        """The oldest message it can still send again (holding none: the next it will stamp)."""
        with self._lock:
            oldest = self._db.execute("SELECT min(seq) FROM messages").fetchone()[0]
            return int(oldest) if oldest is not None else self._counter("seq") + 1

    @property
    def deck(self) -> int:
        with self._lock:
            return self._counter("deck")

    def append(self, build: Callable[[int, int], bytes], new_deck: bool = False) -> tuple[int, bytes]:
        """Store the next message: ``build(seq, deck)`` makes its payload. Returns (seq, payload)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                seq, deck = self._counter("seq") + 1, self._counter("deck") + (1 if new_deck else 0)
                payload = build(seq, deck)
                self._db.executemany(
                    "INSERT INTO counters (name, value) VALUES (?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    [("seq", seq), ("deck", deck)],
                )
                self._db.execute("INSERT INTO messages (seq, deck, payload) VALUES (?, ?, ?)", (seq, deck, payload))
                if new_deck:  # keep the previous deck too: a consumer may still be refilling its end
                    self._db.execute("DELETE FROM messages WHERE deck < ? AND acked = 1", (deck - 1,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            return seq, payload

    def ack(self, seqs: list[int]) -> None:
        with self._lock:
            self._db.executemany("UPDATE messages SET acked = 1 WHERE seq = ?", [(seq,) for seq in seqs])

    def depth(self) -> int:
        """How many messages wait for the broker's acknowledgement."""
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM messages WHERE acked = 0").fetchone()[0])

    def pending(self) -> list[tuple[int, bytes]]:
        """Messages the broker has not acknowledged yet, in order."""
        with self._lock:
            return list(self._db.execute("SELECT seq, payload FROM messages WHERE acked = 0 ORDER BY seq"))

    def between(self, first: int, last: int) -> list[tuple[int, bytes]]:
        """Stored messages with ``first <= seq <= last`` (for a consumer's resend request)."""
        with self._lock:
            return list(
                self._db.execute(
                    "SELECT seq, payload FROM messages WHERE seq BETWEEN ? AND ? ORDER BY seq", (first, last)
                )
            )

    def close(self) -> None:
        with self._lock:
            self._db.close()
