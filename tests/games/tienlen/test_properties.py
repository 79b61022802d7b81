"""Random legal games by random bots: they end, money is conserved, no card is played twice."""

from __future__ import annotations

import random
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from services.games.tienlen import Pass, Play, Played, TienLenRound, TienLenSettings
from services.games.tienlen.combos import classify
from services.games.tienlen.moves import all_combinations

PLAYERS = ("ana", "bao", "chi", "dung")


def random_round(rng: random.Random, seats: int, settings: TienLenSettings) -> TienLenRound:
    deck = list(range(52))
    rng.shuffle(deck)
    players = PLAYERS[:seats]
    hands = {player: deck[13 * index : 13 * (index + 1)] for index, player in enumerate(players)}
    starting = rng.random() < 0.5
    return TienLenRound(
        players, hands, starting_round=starting, leader=None if starting else rng.choice(players), settings=settings
    )


def bot_step(round_: TienLenRound, rng: random.Random) -> None:
    """Sometimes someone chops out of turn; otherwise the player to act plays a random legal move or passes."""
    assert round_.to_act is not None
    others = [player for player in round_.players if player != round_.to_act and round_.legal_moves(player)]
    if others and rng.random() < 0.5:
        player = rng.choice(others)
        round_.play(player, rng.choice(round_.legal_moves(player)).cards)
        return
    moves = round_.legal_moves(round_.to_act)
    if round_.can_pass(round_.to_act) and (not moves or rng.random() < 0.3):
        round_.pass_turn(round_.to_act)
    else:
        round_.play(round_.to_act, rng.choice(moves).cards)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), seats=st.integers(min_value=2, max_value=4))
def test_random_games_end_conserve_money_and_play_each_card_once(seed: int, seats: int) -> None:
    rng = random.Random(seed)
    round_ = random_round(rng, seats, TienLenSettings())
    steps = 0
    while round_.result is None:
        bot_step(round_, rng)
        steps += 1
        assert steps <= 52 * 4, "every pass or play moves the round on; it must end"
    assert sum(round_.result.payments.values()) == 0
    played = [card for event in round_.events if isinstance(event, Played) for card in event.combination.cards]
    assert len(played) == len(set(played)), "no card is played twice"
    for player in round_.players:
        plays = [event for event in round_.events if isinstance(event, Played) and event.player == player]
        mine = [card for event in plays for card in event.combination.cards]
        assert set(mine) | round_.hands[player] == round_.dealt[player] and not set(mine) & round_.hands[player]
    winner = round_.result.winner
    assert round_.result.instant_win is not None or not round_.hands[winner]
    again = TienLenRound.replay(
        round_.players,
        round_.dealt,
        round_.history,
        starting_round=round_.starting_round,
        leader=None if round_.starting_round else round_.leader,
    )
    assert again.result == round_.result and again.events == round_.events


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_legal_moves_are_exactly_the_plays_the_round_accepts(seed: int) -> None:
    """Every subset of every hand, at a random point of a random game: listed iff accepted."""
    rng = random.Random(seed)
    round_ = random_round(rng, 4, TienLenSettings(instant_wins=()))
    for _ in range(rng.randrange(0, 12)):
        if round_.result is not None:
            break
        bot_step(round_, rng)
    for player in round_.players:
        listed = {move.cards for move in round_.legal_moves(player)}
        hand = sorted(round_.hands[player])
        accepted = {
            cards
            for size in range(1, min(len(hand), 12) + 1)
            for cards in combinations(hand, size)
            if classify(cards) is not None and round_.can_play(player, cards)
        }
        assert listed == accepted


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=51), min_size=1, max_size=13, unique=True))
def test_the_generator_finds_every_combination_a_hand_holds(hand: list[int]) -> None:
    listed = [move.cards for move in all_combinations(hand)]
    assert len(listed) == len(set(listed))
    brute = {
        cards
        for size in range(1, len(hand) + 1)
        for cards in combinations(sorted(hand), size)
        if classify(cards) is not None
    }
    assert set(listed) == brute


def test_a_timeout_always_produces_an_accepted_command() -> None:
    rng = random.Random(7)
    for _ in range(50):
        round_ = random_round(rng, rng.randrange(2, 5), TienLenSettings(instant_wins=()))
        while round_.result is None:
            command = round_.timeout_command()
            assert isinstance(command, Play | Pass)
            round_.apply(command)
        assert sum(round_.result.payments.values()) == 0
