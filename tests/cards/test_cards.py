from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.cards import (
    FULL_DECK,
    Card,
    DeckCount,
    DeckTracker,
    DuplicateCardError,
    InvalidCardCodeError,
    parse_cards,
)


@pytest.mark.parametrize(
    ("code", "rank", "suit"), [("AS", "A", "S"), ("td", "T", "D"), ("9h", "9", "H"), ("Kc", "K", "C")]
)
def test_codes_parse_case_insensitively(code: str, rank: str, suit: str) -> None:
    card = Card.from_code(code)
    assert (card.rank, card.suit) == (rank, suit)
    assert card.code() == rank + suit


@pytest.mark.parametrize("code", ["", "A", "10H", "1S", "AX", "ZS", " AS", "AS ", "SA", "AS\n", "♠A", "Aſ"])
def test_bad_codes_are_refused_with_the_input_named(code: str) -> None:
    with pytest.raises(InvalidCardCodeError) as error:
        Card.from_code(code)
    assert repr(code) in str(error.value)


def test_non_string_code_is_refused() -> None:
    with pytest.raises(InvalidCardCodeError, match="expected an ASCII string"):
        Card.from_code(10)  # type: ignore[arg-type]


def test_card_constructor_validates() -> None:
    with pytest.raises(InvalidCardCodeError, match="rank"):
        Card("1", "S")
    with pytest.raises(InvalidCardCodeError, match="suit"):
        Card("A", "X")


def test_parse_cards_names_the_position_of_the_bad_code() -> None:
    with pytest.raises(InvalidCardCodeError, match=r"card #3: .*'XX'"):
        parse_cards(["AS", "KD", "XX"])


def test_full_deck_has_52_distinct_cards() -> None:
    assert len(FULL_DECK) == 52
    assert len(set(FULL_DECK)) == 52
    assert {str(card) for card in FULL_DECK} == {rank + suit for rank in "A23456789TJQK" for suit in "SHDC"}


def test_deck_tracker_refuses_a_second_scan_until_shuffle() -> None:
    deck = DeckTracker()
    deck.record(Card.from_code("AS"))
    deck.record(Card.from_code("KD"))
    with pytest.raises(DuplicateCardError, match=r"AS was already dealt as card #1"):
        deck.record(Card.from_code("as"))
    assert deck.remaining == 50
    assert deck.dealt == (Card.from_code("AS"), Card.from_code("KD"))
    deck.shuffle()
    assert deck.remaining == 52 and deck.shuffles == 1
    deck.record(Card.from_code("AS"))
    assert deck.has_seen(Card.from_code("AS")) and not deck.has_seen(Card.from_code("KD"))


def test_deck_tracker_knows_when_a_round_cannot_finish() -> None:
    deck = DeckTracker(FULL_DECK[:41])
    assert deck.remaining == 11
    assert deck.can_deal(11) and not deck.can_deal(12)


@given(st.permutations(FULL_DECK), st.integers(0, 52), st.lists(st.integers(0, 51), max_size=4))
def test_a_deck_reconciles_missing_and_doubled_cards_exactly(
    deck: list[Card], dealt_count: int, again: list[int]
) -> None:
    """Cards dealt or burned, then some scanned again (refused): whatever was never seen is missing, whatever was seen
    more than once is doubled, and nothing else."""
    tracker = DeckTracker()
    dealt = deck[:dealt_count]
    for card in dealt:
        tracker.record(card)
    for index in again:
        tracker.note_refused(deck[index])
    count = tracker.reconcile()
    seen = Counter([*dealt, *(deck[index] for index in again)])
    assert set(count.missing) == set(FULL_DECK) - set(seen)
    assert set(count.doubled) == {card for card, times in seen.items() if times > 1}
    assert count.seen == dealt_count + len(again)
    # whole: every card of the deck seen exactly once (a refused scan of the one card never dealt completes it)
    assert count.clean == (set(seen) == set(FULL_DECK) and max(seen.values(), default=0) == 1)
    assert tracker.touched == bool(dealt or again)
    tracker.shuffle()
    assert not tracker.touched and len(tracker.reconcile().missing) == 52


def test_a_whole_deck_reconciles_clean() -> None:
    assert DeckTracker(FULL_DECK).reconcile() == DeckCount(52, (), ())
    assert DeckTracker(FULL_DECK).reconcile().clean


def test_an_eight_deck_shoe_takes_eight_of_each_card_and_refuses_the_ninth() -> None:
    shoe = DeckTracker(decks=8)
    ace = Card.from_code("AS")
    for _ in range(8):
        shoe.record(ace)
    assert shoe.has_seen(ace) and not shoe.can_take(ace) and shoe.remaining == 416 - 8
    with pytest.raises(DuplicateCardError, match=r"AS was already dealt 8 times \(every copy\), first as card #1"):
        shoe.record(ace)
    assert DeckTracker(FULL_DECK * 8, decks=8).reconcile() == DeckCount(416, (), ())
    with pytest.raises(ValueError, match="a shoe holds 1–16 decks, got 0"):
        DeckTracker(decks=0)


@given(st.integers(1, 8), st.data())
def test_a_shoe_of_any_size_reconciles_each_missing_and_extra_copy(decks: int, data: st.DataObject) -> None:
    """Whatever copies left the shoe: each copy short of ``decks`` is missing once; a card seen beyond them, doubled."""
    copies = data.draw(st.lists(st.sampled_from(FULL_DECK), max_size=60))
    tracker = DeckTracker(decks=decks)
    taken = Counter[Card]()
    for card in copies:
        if tracker.can_take(card):
            tracker.record(card)
        else:
            tracker.note_refused(card)
        taken[card] += 1
    count = tracker.reconcile()
    assert Counter(count.missing) == Counter({card: decks - taken[card] for card in FULL_DECK if taken[card] < decks})
    assert set(count.doubled) == {card for card, n in taken.items() if n > decks}
    assert len(count.doubled) == len(set(count.doubled))
    assert count.seen == len(copies) and tracker.remaining == 52 * decks - sum(min(n, decks) for n in taken.values())
