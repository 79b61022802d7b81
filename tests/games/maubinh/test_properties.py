"""Random tables of 2–4 players: money is conserved, pairs are antisymmetric, no pair exceeds the largest loss."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from services.games.maubinh import (
    INSTANT_WINS,
    LEFT,
    Hand,
    MauBinhSettings,
    Seat,
    auto_arrange,
    score_pair,
    score_table,
)

OPTIONAL = INSTANT_WINS[2:]
SEAT_KINDS = ("shuffled", "arranged", "left", "sanh_rong", "rong_cuon")


def deal(rng: random.Random, kinds: list[str], room: MauBinhSettings) -> dict[str, Seat]:
    deck = list(range(52))
    rng.shuffle(deck)
    seats: dict[str, Seat] = {}
    for index, kind in enumerate(kinds):
        if kind == "left":
            seats[f"p{index}"] = LEFT
            continue
        if kind in ("sanh_rong", "rong_cuon"):  # one card of each rank, if the deck still has them
            suit = rng.randrange(4)
            wanted = [
                next((c for c in deck if c >> 2 == rank and (kind == "sanh_rong" or c & 3 == suit)), -1)
                for rank in range(13)
            ]
            cards = wanted if -1 not in wanted else deck[:13]
        else:
            cards = deck[:13]
        deck = [card for card in deck if card not in cards]
        if kind == "arranged":
            best = auto_arrange(cards, room)
            seats[f"p{index}"] = Hand.of(best.chi1, best.chi2, best.chi3)
        else:
            rng.shuffle(cards)  # a random split: often binh lủng
            seats[f"p{index}"] = Hand.of(cards[:5], cards[5:10], cards[10:])
    return seats


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    kinds=st.lists(st.sampled_from(SEAT_KINDS), min_size=2, max_size=4),
    multiplier=st.integers(min_value=1, max_value=10),
    optional=st.sets(st.sampled_from(OPTIONAL)),
    units=st.integers(min_value=1, max_value=100),
)
def test_totals_sum_to_zero_and_pairs_agree_from_both_sides(
    seed: int, kinds: list[str], multiplier: int, optional: set[str], units: int
) -> None:
    room = MauBinhSettings.from_mapping(
        {"scoop_multiplier": multiplier, "optional_instant_wins": sorted(optional), "optional_instant_win_units": units}
    )
    seats = deal(random.Random(seed), kinds, room)
    result = score_table(seats, room)
    assert sum(result.totals.values()) == 0
    assert len(result.pairs) == len(seats) * (len(seats) - 1) // 2
    for pair in result.pairs:
        assert score_pair(pair.b, seats[pair.b], pair.a, seats[pair.a], room) == pair.flipped()
        assert abs(pair.units) <= room.largest_loss_per_opponent
        assert (pair.chi is None) == (pair.instant is not None)
        if pair.scoop:
            assert pair.chi is not None and abs(sum(pair.chi)) == 3 and pair.units % multiplier == 0
