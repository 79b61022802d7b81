"""The durable outbox: what was stored survives a reopen; seq keeps counting; old decks are pruned."""

from __future__ import annotations

import contextlib
from pathlib import Path

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
