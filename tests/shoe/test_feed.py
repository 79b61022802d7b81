"""The feed's ordering logic alone: duplicates, reorderings, gaps, restarts without an outbox."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from services.bus.feed import OutOfSequence, ShoeFeed, ShoeInlet, Taken
from services.bus.messages import ShoeCard, ShoeNewDeck, ShoeStatus, encode
from services.shoe.timecode import VideoClock

DECK = [rank + suit for suit in "SHDC" for rank in "A23456789TJQK"]


def card(seq: int, boot: str = "b1", shoe: str = "s1", minute: int = 0) -> ShoeCard:
    return ShoeCard(
        shoe_id=shoe, boot_id=boot, seq=seq, ts=f"2026-12-03T00:{minute:02d}:00.000+00:00", video_tc="00:00:00:00",
        deck=0, card=DECK[(seq - 1) % 52], source="sim", confidence=1.0, raw="",
    )  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@given(st.permutations(range(1, 31)), st.lists(st.integers(1, 30), max_size=30))
def test_any_arrival_order_with_duplicates_is_delivered_once_in_seq_order(order: list[int], again: list[int]) -> None:
    feed = ShoeFeed("s1", next_seq=1)
    delivered = []
    for seq in [*order, *again]:
        delivered += [m.seq for m in feed.receive(card(seq))]
    assert delivered == list(range(1, 31))
    assert feed.duplicates == len(again)


def test_a_gap_is_asked_for_again_and_not_more_often_than_the_retry_interval() -> None:
    clock = Clock()
    feed = ShoeFeed("s1", next_seq=1, retry_after=0.5, clock=clock)
    assert [m.seq for m in feed.receive(card(1))] == [1]
    assert feed.receive(card(4)) == []
    request = feed.gap()
    assert request is not None and (request.from_seq, request.to_seq) == (2, 3)
    assert feed.gap() is None  # asked a moment ago
    clock.now = 0.6
    assert feed.gap() is not None
    assert [m.seq for m in feed.receive(card(3))] == []
    assert [m.seq for m in feed.receive(card(2))] == [2, 3, 4]
    assert feed.gap() is None


def test_the_shoes_latest_seq_reveals_a_gap_at_the_tail() -> None:
    feed = ShoeFeed("s1", next_seq=1)
    feed.receive(card(1))
    assert feed.gap(last_seq=1) is None
    request = feed.gap(last_seq=3)
    assert request is not None and (request.from_seq, request.to_seq) == (2, 3)


def test_a_daemon_that_lost_its_outbox_starts_a_new_sequence() -> None:
    feed = ShoeFeed("s1", next_seq=1)
    for seq in (1, 2, 3):
        feed.receive(card(seq, boot="b1"))
    assert [m.seq for m in feed.receive(card(1, boot="b2", minute=1))] == [1]  # stamped after b1's: a restart
    assert [m.seq for m in feed.receive(card(2, boot="b2", minute=1))] == [2]


def test_other_shoes_are_ignored_and_new_decks_are_ordered_like_cards() -> None:
    feed = ShoeFeed("s1", next_seq=1)
    assert feed.receive(card(1, shoe="other")) == []
    deck = ShoeNewDeck(shoe_id="s1", boot_id="b1", seq=1, ts="t", video_tc="00:00:00:00", deck=1, raw="SHUFFLE")
    assert feed.receive(card(2)) == []
    assert [m.seq for m in feed.receive(deck)] == [1, 2]


def test_video_timecode_counts_frames_of_the_day() -> None:
    clock = VideoClock(fps=25, offset=0.0)
    assert clock.timecode(3600 * 6 + 60 * 22 + 4.606) == "06:22:04:15"
    assert VideoClock(fps=30, offset=-1.0).timecode(86_400 + 0.5) == "23:59:59:15"


def test_a_message_of_an_earlier_run_sent_again_is_refused_and_does_not_reset_the_sequence() -> None:
    """A replayed old message carries a valid signature; only its stamp shows it is older than what was taken."""
    feed = ShoeFeed("s1", next_seq=1)
    for seq in range(1, 6):
        feed.receive(card(seq, boot="b2", minute=5))
    assert feed.receive(card(1, boot="b0", minute=1)) == []  # a capture of an earlier run, replayed
    assert feed.receive(card(1, boot="b9", minute=5)) == []  # stamped no later than what was taken
    assert feed.replays == 2
    assert [m.seq for m in feed.receive(card(6, boot="b2", minute=6))] == [6]  # the real feed goes on
    assert feed.gap() is None


def status(first_seq: int, last_seq: int) -> bytes:
    return encode(
        ShoeStatus(shoe_id="s1", boot_id="b1", state="online", first_seq=first_seq, last_seq=last_seq, ts="2026-12-03")
    )


def test_a_table_with_nothing_journaled_starts_at_the_oldest_message_the_shoe_holds() -> None:
    """Its first card on the wire was lost: the shoe's retained status says where to start, so it is asked for."""
    inlet = ShoeInlet("s1", next_seq=None)
    inlet.status(status(first_seq=1, last_seq=2))
    assert inlet.card(encode(card(2))) == []  # held: seq 1 comes first
    request = inlet.gap()
    assert request is not None and (request.from_seq, request.to_seq) == (1, 1)
    assert [event.seq for event, why in inlet.card(encode(card(1)))] == [1, 2]


def test_a_status_does_not_move_a_feed_that_has_started() -> None:
    inlet = ShoeInlet("s1", next_seq=5)
    inlet.status(status(first_seq=1, last_seq=5))
    assert inlet.feed.next_seq == 5
    assert [event.seq for event, _ in inlet.card(encode(card(5)))] == [5]


def test_a_start_taken_from_an_old_status_moves_up_to_what_the_shoe_still_holds() -> None:
    """Found in review: a retained last will is as old as its daemon's connection; if the outbox has since dropped
    those messages, the feed would wait for ever for a resend that cannot come."""
    inlet = ShoeInlet("s1", next_seq=None)
    inlet.status(status(first_seq=3, last_seq=9))  # the old last will
    assert inlet.card(encode(card(8))) == [] and inlet.card(encode(card(9))) == []  # waiting for 3…7
    assert [event.seq for event in inlet.status(status(first_seq=8, last_seq=9))] == [8, 9]  # the shoe holds 8 on
    assert [event.seq for event, _ in inlet.card(encode(card(10)))] == [10]
    inlet.status(status(first_seq=10, last_seq=10))
    assert inlet.feed.next_seq == 11  # once messages were taken, a status never moves the start


def test_a_feed_that_resumes_from_its_journal_ignores_the_shoes_first_seq() -> None:
    inlet = ShoeInlet("s1", next_seq=4)
    assert inlet.status(status(first_seq=9, last_seq=9)) == []
    assert inlet.feed.next_seq == 4 and inlet.gap() is not None  # it asks for 4…9: the journal is the truth


# ---- a shoe restarted: with its outbox (the count goes on) or without it (the count starts again) ----------------


def run_card(seq: int, boot: str, minute: int, boot_seq: int | None = None) -> ShoeCard:
    """A card of one run (boot) of the shoe's daemon; ``boot_seq``: the first seq that run stamped, as it says."""
    return card(seq, boot=boot, minute=minute).model_copy(update={"boot_seq": boot_seq})


def test_a_new_run_whose_first_message_is_late_still_starts_a_new_sequence_and_asks_for_it() -> None:
    """Found in review: a run without its outbox was recognised only from its seq 1 arriving first."""
    feed = ShoeFeed("s1", next_seq=1)
    for seq in (1, 2, 3):
        feed.receive(card(seq, boot="b1"))
    assert feed.receive(card(2, boot="b2", minute=1)) == []  # held: seq 1 of the new run comes first
    request = feed.gap()
    assert request is not None and (request.from_seq, request.to_seq) == (1, 1)
    assert [m.seq for m in feed.receive(card(1, boot="b2", minute=1))] == [1, 2]
    assert feed.restarts == 1


def test_a_feed_resumed_from_the_journal_knows_the_shoes_run_and_the_newest_stamp_taken() -> None:
    """Found in review: a restarted controller knew no run of the shoe, so a run that had restarted without its outbox
    meanwhile was never recognised — its cards were dropped as duplicates of the old run's seq, in silence."""
    newest = datetime(2026, 12, 3, 0, 5, tzinfo=UTC)
    feed = ShoeFeed("s1", next_seq=31, boot="b1", newest=newest)
    taken = feed.take(card(1, boot="b0", minute=5))  # an older run's message, stamped no later than the newest taken
    assert taken.ready == () and [(m.boot_id, m.seq) for m, _why in taken.refused] == [("b0", 1)]
    assert "not after the newest" in taken.refused[0][1] and feed.replays == 1
    assert [m.seq for m in feed.receive(card(1, boot="b2", minute=6))] == [1]  # the shoe restarted: a new sequence
    assert [m.seq for m in feed.receive(card(2, boot="b2", minute=6))] == [2]


def test_a_run_that_kept_its_outbox_goes_on_counting_and_its_old_messages_still_fill_a_gap() -> None:
    feed = ShoeFeed("s1", next_seq=1)
    for seq in (1, 2, 3):
        feed.receive(run_card(seq, "b1", 0, boot_seq=1))
    assert feed.receive(run_card(5, "b2", 1, boot_seq=5)) == []  # b1 stamped 4 before it stopped: still wanted
    request = feed.gap()
    assert request is not None and (request.from_seq, request.to_seq) == (4, 4)
    assert [m.seq for m in feed.receive(run_card(4, "b1", 0, boot_seq=1))] == [4, 5]  # resent from the same outbox
    assert feed.restarts == 0


def test_a_run_that_lost_its_outbox_says_so_even_when_its_first_message_seen_is_past_the_old_count() -> None:
    feed = ShoeFeed("s1", next_seq=1)
    for seq in (1, 2, 3):
        feed.receive(run_card(seq, "b1", 0, boot_seq=1))
    assert feed.receive(run_card(4, "b2", 1, boot_seq=1)) == []  # the new run counts from 1: 1…3 are new cards
    assert feed.restarts == 1
    request = feed.gap()
    assert request is not None and (request.from_seq, request.to_seq) == (1, 3)


def test_what_a_restart_leaves_behind_is_refused_with_why_never_dropped() -> None:
    feed = ShoeFeed("s1", next_seq=1)
    feed.receive(card(1, boot="b1"))
    assert feed.receive(card(3, boot="b1")) == []  # waiting for 2, which the old run will never send now
    taken = feed.take(card(1, boot="b2", minute=1))
    assert [m.seq for m in taken.ready] == [1]
    assert [(m.boot_id, m.seq) for m, _why in taken.refused] == [("b1", 3)]
    late = feed.take(card(2, boot="b1"))  # the old run's message, late
    assert late.ready == () and [(m.boot_id, m.seq) for m, _ in late.refused] == [("b1", 2)]
    assert "before it restarted" in late.refused[0][1]


def test_a_message_the_feed_already_passed_is_handed_back_unless_it_delivered_it_itself() -> None:
    """Below where the feed resumed, only the journal knows whether a message was taken: the consumer looks."""
    feed = ShoeFeed("s1", next_seq=5, boot="b1")
    behind = feed.take(card(3, boot="b1"))
    assert behind.ready == () and [m.seq for m, _ in behind.refused] == [3]
    assert [m.seq for m in feed.receive(card(5, boot="b1"))] == [5]
    again = feed.take(card(5, boot="b1"))  # delivered by this feed a moment ago: a duplicate, counted
    assert again == Taken() and feed.duplicates == 1


def test_the_inlet_hands_back_a_refused_message_with_why_it_takes_no_place_in_the_sequence() -> None:
    inlet = ShoeInlet("s1", next_seq=31, boot="b1", newest=datetime(2026, 12, 3, 0, 5, tzinfo=UTC))
    [(event, why)] = inlet.card(encode(card(1, boot="b0", minute=1)))
    assert event.boot_id == "b0" and isinstance(why, OutOfSequence) and "b0" in why.why
