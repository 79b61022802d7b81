"""Instant wins found in 13 dealt cards: each kind, the strongest enabled one, optional kinds off by default."""

from __future__ import annotations

import pytest

from services.games.maubinh import INSTANT_WINS, InstantWin, MauBinhSettings, instant_win

from .helpers import DEFAULT, c

ALL_ON = MauBinhSettings(optional_instant_wins=tuple(kind for kind in INSTANT_WINS if kind.strength <= 5))

HELD = [
    ("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", InstantWin.RONG_CUON),
    ("2S 3H 4S 5S 6S 7S 8S 9S TS JS QS KS AS", InstantWin.SANH_RONG),  # one card of another suit
    ("2H 2D 3H 3D 4H 5H 6H 7D 8D 9D TD JD 2S", InstantWin.ONE_COLOUR),  # 12 red
    ("2S 2C 3S 3C 4S 5S 6C 7C 8S 9C TC JS KC", InstantWin.ONE_COLOUR),  # 13 black
    ("2S 2H 3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 7D", InstantWin.FIVE_PAIRS_THREE_OF_A_KIND),
    ("5S 5H 5D 5C 6S 6H 7S 7H 8S 8H 9S 9H 9D", InstantWin.FIVE_PAIRS_THREE_OF_A_KIND),  # 5555 is two pairs
    ("2S 2H 3S 3H 4S 4D 5S 5H 6S 6D 7C 7H 8D", InstantWin.SIX_PAIRS),
    ("2S 2H 2D 2C 4S 4D 5S 5H 6S 6D 7C 7H 8D", InstantWin.SIX_PAIRS),  # 2222 is two pairs
    ("2S 4S 6S 8S TS 3H 5H 7H 9H JH 2D 5D 9D", InstantWin.THREE_FLUSHES),  # 5 + 5 + 3
    ("2S 3S 5S 7S 9S JS KS AS 2D 4D 6D 8D TD", InstantWin.THREE_FLUSHES),  # 8 + 5
    ("2S 3H 4D 5C 6S 2H 3D 4C 5S 6H 7D 8C 9S", InstantWin.THREE_STRAIGHTS),
    ("AS 2H 3D 4C 5S 9H TD JC QS KH AD 2C 3H", InstantWin.THREE_STRAIGHTS),  # A-2-3-4-5 and A-2-3
    ("9S TH JD QC KS 9H TD JC QS KH QD KC AH", InstantWin.THREE_STRAIGHTS),  # Q-K-A on top
]


@pytest.mark.parametrize(("cards", "kind"), HELD, ids=[kind.value + str(i) for i, (_, kind) in enumerate(HELD)])
def test_each_kind_is_found_when_on(cards: str, kind: InstantWin) -> None:
    assert instant_win(c(cards), ALL_ON) is kind
    only = MauBinhSettings(
        optional_instant_wins=() if kind in (InstantWin.RONG_CUON, InstantWin.SANH_RONG) else (kind,)
    )
    assert instant_win(c(cards), only) is kind


@pytest.mark.parametrize(("cards", "kind"), HELD[2:])
def test_optional_kinds_are_off_by_default(cards: str, kind: InstantWin) -> None:
    assert instant_win(c(cards), DEFAULT) is None


@pytest.mark.parametrize(
    "cards",
    [
        "2H 2D 3H 3D 4H 5H 6H 7D 8D 9D TD 2S 3S",  # 11 red
        "2S 2H 3S 3H 4D 4C 5S 5H 6D 6C 8S TH QD",  # five pairs, no six
        "2S 2H 2D 3C 3H 3D 4S 4C 5D 5H 6S 6C 8H",  # two threes and a single: not five pairs and a set
        "2S 4S 6S 8S TS QS 3H 5H 7H 9H 2D 5D 9D",  # suits 6 + 4 + 3
        "2S 3H 4D 5C 6S 2H 3D 4C 5S 6H 7D 8C TS",  # two straights and 7-8-T
        "KS AH 2D 3C 4S 5H 6D 7C 3S 4H 5D 6C 7S",  # two straights and K-A-2: no wrap-around
    ],
)
def test_near_misses_are_no_instant_win(cards: str) -> None:
    assert instant_win(c(cards), ALL_ON) is None


def test_the_strongest_kind_held_is_the_one_reported() -> None:
    # 13 black cards in two flushes (8 + 5): one colour outranks three flushes
    black_flushes = c("2S 3S 5S 7S 9S JS KS AS 2C 4C 6C 8C TC")
    assert instant_win(black_flushes, ALL_ON) is InstantWin.ONE_COLOUR
    assert instant_win(black_flushes, MauBinhSettings(optional_instant_wins=(InstantWin.THREE_FLUSHES,))) is (
        InstantWin.THREE_FLUSHES
    )
    # five pairs and a set hold six pairs too (the set holds a pair)
    five_and_set = c("2S 2H 3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 7D")
    assert instant_win(five_and_set, MauBinhSettings(optional_instant_wins=(InstantWin.SIX_PAIRS,))) is (
        InstantWin.SIX_PAIRS
    )
    # rồng cuốn is one colour, three flushes and three straights as well
    assert instant_win(c("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"), ALL_ON) is InstantWin.RONG_CUON


def test_kinds_are_ordered_strongest_first() -> None:
    assert [kind.strength for kind in INSTANT_WINS] == list(range(len(INSTANT_WINS), 0, -1))
    assert INSTANT_WINS[:2] == (InstantWin.RONG_CUON, InstantWin.SANH_RONG)
