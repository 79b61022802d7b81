"""The shoe's frame parsers: every message of both dialects, any split of the bytes, noise, over-long input."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hardware.serial_shoe import (
    Alarm,
    CardRead,
    DeviceWarning,
    LineParser,
    Misread,
    MonitorParser,
    NewDeck,
    card_code,
    checksum,
    parser_for,
    with_checksum,
)
from hardware.serial_shoe.frames import MAX_FRAME, FrameEvent
from hardware.sim.serial_shoe import shuffle_frame

MONITOR_STREAM = (
    b" [Game]<Card:4S> "
    b" [Manual Burn Cards]<Card:H3> "
    b" [Manual Burn Cards]<Card:KD> "
    b" [Game]<Game> "
    b"<Alarm:E3 Card Not Read>"
    b"[GameAlarm]<Alarm:E7 Shoe Empty>"
    b"<W0x01>\r\n"
    b" [Game]<Card:10C> "
    b" [New Shoe]<Shuffle> "
)
MONITOR_EVENTS: list[FrameEvent] = [
    CardRead("4S", burn=False, raw=b"[Game]<Card:4S>"),
    CardRead("3H", burn=True, raw=b"[Manual Burn Cards]<Card:H3>"),
    CardRead("KD", burn=True, raw=b"[Manual Burn Cards]<Card:KD>"),
    Misread("card not read", raw=b"[Game]<Game>"),
    Alarm("E3", "Card Not Read", raw=b"<Alarm:E3 Card Not Read>"),
    Alarm("E7", "Shoe Empty", raw=b"[GameAlarm]<Alarm:E7 Shoe Empty>"),
    DeviceWarning("0x01", raw=b"<W0x01>"),
    CardRead("TC", burn=False, raw=b"[Game]<Card:10C>"),
    NewDeck(raw=b"[New Shoe]<Shuffle>"),
]


def feed_all(parser: MonitorParser | LineParser, chunks: list[bytes]) -> list[FrameEvent]:
    events: list[FrameEvent] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events


def test_every_monitor_message_becomes_its_event() -> None:
    parser = MonitorParser()
    assert parser.feed(MONITOR_STREAM) == MONITOR_EVENTS
    assert (parser.stats.frames, parser.stats.garbage, parser.stats.overlong) == (9, 0, 0)


def test_monitor_frames_fed_a_byte_at_a_time_give_the_same_events() -> None:
    parser = MonitorParser()
    assert feed_all(parser, [bytes([b]) for b in MONITOR_STREAM]) == MONITOR_EVENTS
    assert parser.stats.garbage == 0


def test_a_monitors_new_shoe_frame_fed_a_byte_at_a_time_announces_a_new_deck() -> None:
    """Found in review: the monitor dialect had no new-deck frame, so a monitor shoe (and its simulator) could never
    say a new deck was loaded; the simulator sends this one."""
    parser = MonitorParser()
    frame = shuffle_frame("monitor")
    assert feed_all(parser, [bytes([b]) for b in b"[Game]<Card:4S>" + frame]) == [
        CardRead("4S", burn=False, raw=b"[Game]<Card:4S>"),
        NewDeck(raw=b"[New Shoe]<Shuffle>"),
    ]
    assert parser.stats.garbage == 0


@given(st.lists(st.integers(min_value=0, max_value=len(MONITOR_STREAM)), max_size=20))
def test_monitor_events_do_not_depend_on_how_the_bytes_were_cut(cuts: list[int]) -> None:
    bounds = [0, *sorted(cuts), len(MONITOR_STREAM)]
    chunks = [MONITOR_STREAM[a:b] for a, b in itertools.pairwise(bounds)]
    assert feed_all(MonitorParser(), chunks) == MONITOR_EVENTS


NOISE = st.binary(max_size=12).filter(lambda b: not set(b) & set(b"[]<>"))


@given(st.lists(NOISE, min_size=len(MONITOR_EVENTS) + 1, max_size=len(MONITOR_EVENTS) + 1))
def test_noise_between_monitor_frames_is_skipped_and_counted(noise: list[bytes]) -> None:
    frames = [event.raw for event in MONITOR_EVENTS]
    stream = noise[0] + b"".join(frame + extra for frame, extra in zip(frames, noise[1:], strict=True))
    parser = MonitorParser()
    events = feed_all(parser, [bytes([b]) for b in stream])
    assert events == MONITOR_EVENTS
    # each noisy run counts once (or more when it is cut between feeds), and only noise counts
    noisy_runs = sum(1 for extra in noise if extra.strip())
    assert (parser.stats.garbage >= noisy_runs) and (parser.stats.garbage == 0) == (noisy_runs == 0)


def test_broken_and_unknown_monitor_frames_are_skipped_and_the_next_good_frame_is_read() -> None:
    parser = MonitorParser()
    events = parser.feed(b"[Game]<Car [Game]<Card:5D> <Hello> [Game]<Card:ZZ> <Card:7H")
    events += parser.feed(b">")
    assert events == [
        CardRead("5D", False, b"[Game]<Card:5D>"),
        Misread("unreadable card code 'ZZ'", b"[Game]<Card:ZZ>"),
        CardRead("7H", False, b"<Card:7H>"),
    ]
    assert parser.stats.by_reason == {"broken frame": 1, "unknown frame": 1}


def test_an_over_long_monitor_frame_is_dropped_and_counted() -> None:
    parser = MonitorParser()
    events = parser.feed(b"<Alarm:" + b"x" * (MAX_FRAME + 10))
    events += parser.feed(b"> [Game]<Card:AS> ")
    assert events == [CardRead("AS", False, b"[Game]<Card:AS>")]
    assert parser.stats.overlong == 1


def test_a_partial_frame_is_forgotten_on_reconnect() -> None:
    parser = MonitorParser()
    assert parser.feed(b" [Game]<Card:4") == []
    parser.reset()
    assert parser.feed(b"S> [Game]<Card:2C> ") == [CardRead("2C", False, b"[Game]<Card:2C>")]
    assert parser.stats.garbage == 2  # the partial frame, then its orphaned tail


# ---- line dialect ------------------------------------------------------------------------------


def test_nmea_style_checksum_is_the_xor_of_the_bytes_before_the_star() -> None:
    assert checksum(b"4S") == f"{ord('4') ^ ord('S'):02X}" == "67"
    assert with_checksum("QH") == b"QH*19\r\n"


def test_line_dialect_reads_codes_with_and_without_checksum_and_announces_new_decks() -> None:
    parser = LineParser()
    stream = with_checksum("4S") + b"th\n" + with_checksum("SHUFFLE") + b"10d\r\n"
    assert parser.feed(stream) == [
        CardRead("4S", False, b"4S*67"),
        CardRead("TH", False, b"th"),
        NewDeck(b"SHUFFLE*" + checksum(b"SHUFFLE").encode()),
        CardRead("TD", False, b"10d"),
    ]


def test_a_checksum_failure_is_reported_as_a_misread_naming_both_sums() -> None:
    parser = LineParser()
    assert parser.feed(b"4S*68\r\n") == [
        Misread("checksum mismatch: frame says '68', computed 67", b"4S*68"),
    ]


def test_line_noise_and_over_long_lines_are_skipped_and_counted() -> None:
    parser = LineParser()
    events = parser.feed(b"hello\n\n" + b"9" * (MAX_FRAME + 5))
    events += parser.feed(b"9999\n" + with_checksum("9C"))
    assert events == [CardRead("9C", False, b"9C*" + checksum(b"9C").encode())]
    assert (parser.stats.garbage, parser.stats.overlong) == (1, 1)


@given(st.lists(st.sampled_from(["AS", "2H", "TD", "KC", "SHUFFLE"]), max_size=8), st.data())
def test_line_events_do_not_depend_on_how_the_bytes_were_cut(codes: list[str], data: st.DataObject) -> None:
    stream = b"".join(with_checksum(code) for code in codes)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10))
    bounds = [0, *sorted(cuts), len(stream)]
    whole = LineParser().feed(stream)
    assert feed_all(LineParser(), [stream[a:b] for a, b in itertools.pairwise(bounds)]) == whole
    assert [e.code if isinstance(e, CardRead) else "SHUFFLE" for e in whole] == codes


@pytest.mark.parametrize(
    ("text", "code"),
    [("4S", "4S"), ("s4", "4S"), ("10h", "TH"), ("H10", "TH"), ("QQ", None), ("4", None), ("AS1", None)],
)
def test_card_codes_are_normalised_to_rank_then_suit(text: str, code: str | None) -> None:
    assert card_code(text) == code


def test_an_unknown_dialect_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="unknown shoe dialect 'nmea'"):
        parser_for("nmea")


@given(st.sampled_from(["monitor", "line"]), st.lists(st.binary(max_size=300), max_size=20))
def test_no_bytes_whatsoever_make_a_parser_raise_or_hoard_memory(dialect: str, chunks: list[bytes]) -> None:
    parser = parser_for(dialect)
    for chunk in chunks:
        for event in parser.feed(chunk):
            assert isinstance(event, FrameEvent)  # one of the typed events, never anything else
    assert len(parser._buffer) <= MAX_FRAME + 300  # a partial frame is all a parser may keep
