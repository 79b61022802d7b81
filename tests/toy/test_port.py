"""The game port's contract, checked on every registered game by one generic driver.

The driver knows nothing of any game: it ends each window with the game's own timeout command and
deals the next card of a shuffled deck wherever the round wants one, until the round is over.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.cards import FULL_DECK, Card
from services.catalog import STUDIO_GAMES
from services.games import base
from services.games.base import DEALER, PUBLIC, CardWanted, Window, viewer
from services.games.pokdeng.port import POKDENG
from services.rounds.adapters import CatalogError
from tests.toy import highcard, overunder

CATALOG = highcard.GAMES.adding(overunder.OverUnderAdapter(overunder.GAME))  # the studio's games and both toys
GAMES = CATALOG.names()
SEATS = {"highcard": ["P1", "P2"], "tienlen": ["1", "2", "3"], "maubinh": ["1", "2", "3"]}
UNSEATED = {"pokdeng", "overunder", "baccarat", "dragontiger"}  # house games: players bet, they take no seat
READY = {"maubinh"}  # rooms whose players say they are ready before the deal


def test_the_contract_covers_every_game_the_studio_plays() -> None:
    assert {"pokdeng", "maubinh", "tienlen", "baccarat", "dragontiger", "highcard", "overunder"} <= set(GAMES)
    assert set(SEATS) | UNSEATED >= set(GAMES), "a new game: say how its players join (SEATS, READY, UNSEATED)"


def seat_players(name: str, round_: Any) -> list[str]:
    """Seat players where the game has seats of its own, through its stored commands (``sit``, then ``ready``)."""
    game = CATALOG.game(name)
    players = ["ana", "binh", "chai"][: len(SEATS.get(name, []))]
    for player, seat in zip(players, SEATS.get(name, []), strict=False):
        game.apply(round_, game.command_from_dict({"type": "sit", "player": player, "seat": seat}))
    for player in players if name in READY else []:
        game.apply(round_, game.command_from_dict({"type": "ready", "player": player}))
    return players


def drive(name: str, seed: int, check: Any = None) -> Any:
    game = CATALOG.game(name)
    round_ = game.new_round(game.settings({}))
    players = seat_players(name, round_)
    deck = list(FULL_DECK)
    random.Random(seed).shuffle(deck)
    while (expecting := game.expecting(round_)) is not None:
        if isinstance(expecting, Window):
            assert expecting.ms > 0
            game.apply(round_, game.timeout(round_))
        else:
            assert isinstance(expecting, CardWanted) and expecting.text
            game.apply(round_, game.deal(deck.pop()))
        if check is not None:
            check(game, round_, players)
    return round_


def shown(view: dict[str, Any], cards: frozenset[Card]) -> list[str]:
    text = json.dumps(view)
    return [str(card) for card in cards if f'"{card}"' in text]


def no_hidden_card_in_any_view(game: Any, round_: Any, players: list[str]) -> None:
    assert shown(game.view(round_, PUBLIC), game.hidden(round_, PUBLIC)) == []
    assert shown(game.view(round_, DEALER), game.hidden(round_, DEALER)) == []
    assert game.views(round_) == {"public": game.view(round_, PUBLIC), "dealer": game.view(round_, DEALER)}
    for player in players:
        audience = viewer(player)
        assert shown(game.view(round_, audience), game.hidden(round_, audience)) == []
        mine = game.hidden(round_, PUBLIC) - game.hidden(round_, audience)
        assert set(shown(game.view(round_, audience), mine)) == {str(card) for card in mine}  # own cards shown


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_every_view_leaves_out_the_cards_its_audience_may_not_see(name: str, seed: int) -> None:
    round_ = drive(name, seed, no_hidden_card_in_any_view)
    assert CATALOG.game(name).phase(round_) == base.SETTLED


@pytest.mark.parametrize("name", GAMES)
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_replaying_the_stored_commands_rebuilds_the_round(name: str, seed: int) -> None:
    game = CATALOG.game(name)
    round_ = drive(name, seed)
    stored = [json.loads(json.dumps(game.command_to_dict(c))) for c in game.commands(round_)]
    again = game.replay([game.command_from_dict(entry) for entry in stored], game.settings({}))
    assert game.view(again, PUBLIC) == game.view(round_, PUBLIC)
    assert game.payouts(again) == game.payouts(round_) and game.result(again) == game.result(round_)
    assert game.cards(again) == game.cards(round_)


@pytest.mark.parametrize("name", GAMES)
def test_a_void_round_expects_nothing_and_pays_nothing(name: str) -> None:
    game = CATALOG.game(name)
    round_ = game.new_round(game.settings({}))
    game.apply(round_, game.void("camera lost the table"))
    assert game.expecting(round_) is None and game.payouts(round_) is None and game.phase(round_) == base.VOID
    with pytest.raises(base.GameError):
        game.apply(round_, game.void("again"))


def test_high_card_pays_the_higher_rank_against_the_house_for_every_pair_of_ranks() -> None:
    game = highcard.GAME
    ranks = highcard.ORDER
    for mine in ranks:
        for house in ranks:
            round_ = game.new_round(game.settings({"stake": 7}))
            game.apply(round_, highcard.Sit("ana", "P1"))
            game.apply(round_, game.timeout(round_))
            game.apply(round_, game.deal(Card(mine, "H")))
            game.apply(round_, game.deal(Card(house, "S")))
            expected = 7 if ranks.index(mine) > ranks.index(house) else -7 if mine != house else 0
            assert game.payouts(round_) == [base.Payout("ana", "seat:P1", expected)]


def test_the_catalog_names_every_game_and_refuses_an_unknown_one() -> None:
    # the composition root's, sorted
    assert STUDIO_GAMES.names() == ["baccarat", "dragontiger", "maubinh", "pokdeng", "tienlen"]
    assert {"pokdeng", "highcard"} <= set(GAMES)
    with pytest.raises(base.UnknownGameError, match="unknown game 'chemin_de_fer'"):
        highcard.GAMES.game("chemin_de_fer")
    with pytest.raises(CatalogError, match="'pokdeng' is named twice"):
        STUDIO_GAMES.adding(POKDENG)


def test_a_house_banked_game_must_say_what_its_bets_return() -> None:
    class Banked(highcard.HighCard):
        name = "banked"
        house_banked = True

    with pytest.raises(CatalogError, match="'banked' is banked by the house: its adapter must say"):
        STUDIO_GAMES.adding(Banked())
