"""Baccarat and Dragon Tiger on the game port: a live coup equals its replayed transcript, bets are refused by the
table's rules naming why, the dealer is told which card comes next, and the roads go on from the shoe's coups."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.cards import FULL_DECK, Card
from services.games.baccarat.port import BACCARAT
from services.games.baccarat.transcript import replay
from services.games.base import CardWanted, GameError, NotExpectedError, Payout, Window
from services.games.coup_game import CloseBetting, Shoe, Wager
from services.games.dragontiger.port import DRAGON_TIGER
from services.games.dragontiger.transcript import replay as replay_dragon_tiger

SHOE = [card for card in FULL_DECK for _ in range(8)]
BACCARAT_BETS = st.lists(
    st.tuples(st.sampled_from(["player", "banker", "tie", "player_pair", "banker_pair"]), st.integers(100, 100_000)),
    max_size=5,
    unique_by=lambda bet: bet[0],
)


def live(game: Any, cards: list[Card], bets: list[tuple[str, int]], raw: dict[str, Any] | None = None) -> Any:
    """A coup through the port: its bets (each its own player), the close, then cards until it wants none."""
    round_ = game.new_round(game.settings(raw or {}))
    for index, (spot, stake) in enumerate(bets):
        game.apply(round_, Wager(f"w{index}", f"p{index}", spot, stake))
    game.apply(round_, game.timeout(round_))
    while isinstance(game.expecting(round_), CardWanted):
        game.apply(round_, game.deal(cards.pop(0)))
    return round_


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), bets=BACCARAT_BETS, super6=st.booleans())
def test_a_live_baccarat_coup_equals_its_replayed_transcript(
    seed: int, bets: list[tuple[str, int]], super6: bool
) -> None:
    shoe = list(SHOE)
    random.Random(seed).shuffle(shoe)
    round_ = live(BACCARAT, list(shoe), bets, {"super6": super6})
    used = BACCARAT.cards(round_)
    assert used == shoe[: len(used)]
    replayed = replay({"cards": [str(c) for c in used], "bets": [{"on": s, "stake": n} for s, n in bets],
                       "settings": {"super6": super6}})  # fmt: skip
    result = BACCARAT.result(round_) or {}
    assert result["hands"] == {"player": replayed["player"], "banker": replayed["banker"]}
    assert {key: result[key] for key in ("winner", "natural", "player_pair", "banker_pair")} == {
        key: replayed[key] for key in ("winner", "natural", "player_pair", "banker_pair")
    }
    assert [payout.net for payout in BACCARAT.payouts(round_) or []] == [p["net"] for p in replayed["payouts"]]


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), spot=st.sampled_from(["dragon", "tiger", "tie", "suited_tie"]))
def test_a_live_dragon_tiger_coup_equals_its_replayed_transcript(seed: int, spot: str) -> None:
    shoe = list(SHOE)
    random.Random(seed).shuffle(shoe)
    round_ = live(DRAGON_TIGER, list(shoe), [(spot, 500)])
    assert DRAGON_TIGER.cards(round_) == shoe[:2]
    replayed = replay_dragon_tiger({"cards": [str(c) for c in shoe[:2]], "bets": [{"on": spot, "stake": 500}]})
    result = DRAGON_TIGER.result(round_) or {}
    assert [result["hands"][side]["cards"] for side in ("dragon", "tiger")] == [
        [replayed["dragon"]],
        [replayed["tiger"]],
    ]
    assert (result["winner"], result["suited_tie"]) == (replayed["winner"], replayed["suited_tie"])
    assert DRAGON_TIGER.payouts(round_) == [Payout("p0", "w0", replayed["payouts"][0]["net"])]


def cards(codes: str) -> list[Card]:
    return [Card.from_code(code) for code in codes.split()]


def test_the_dealer_is_told_each_card_and_the_banker_third_card_only_when_the_rules_draw_it() -> None:
    round_ = BACCARAT.new_round(BACCARAT.settings({}))
    assert BACCARAT.expecting(round_) == Window("betting", 15_000, text="place your bets")
    BACCARAT.apply(round_, CloseBetting())
    asked = []
    for card in cards("4H 3S TD 2C 9H"):  # Player 4, Banker 5: the Player draws a 9, on which a Banker 5 stands
        wanted = BACCARAT.expecting(round_)
        assert isinstance(wanted, CardWanted) and wanted.face_up
        asked.append(wanted.text)
        BACCARAT.apply(round_, BACCARAT.deal(card))
    assert asked == ["the Player's first card", "the Banker's first card", "the Player's second card",
                     "the Banker's second card", "the Player's third card"]  # fmt: skip
    assert BACCARAT.expecting(round_) is None and BACCARAT.phase(round_) == "settled"
    view = BACCARAT.view(round_)
    assert view["hands"] == {"player": {"cards": ["4H", "TD", "9H"], "total": 3},
                             "banker": {"cards": ["3S", "2C"], "total": 5}}  # fmt: skip
    assert view["result"]["winner"] == "banker" and view["next"] is None


def test_a_banker_win_pays_less_commission_and_the_house_keeps_it() -> None:
    round_ = live(BACCARAT, cards("2H 9S 3D KC"), [("banker", 1_000), ("player", 999)])  # Banker natural 9
    assert BACCARAT.payouts(round_) == [Payout("p0", "w0", 950, 50), Payout("p1", "w1", -999)]


def test_bets_are_refused_by_the_table_rules_naming_why() -> None:
    game = BACCARAT
    round_ = game.new_round(game.settings({"min_stake": 100, "max_stake": 1_000}))
    game.apply(round_, Wager("w1", "ana", "banker", 600))
    with pytest.raises(GameError, match=r"a bet of 1,200 on banker is outside the table's limits \(100–1,000\)"):
        game.apply(round_, Wager("w1", "ana", "banker", 600))
    with pytest.raises(GameError, match="one side only: you bet on banker in this coup, so not on player too"):
        game.apply(round_, Wager("w2", "ana", "player", 100))
    game.apply(round_, Wager("w3", "binh", "player", 100))  # another player may take the other side
    with pytest.raises(GameError, match="no bet 'dragon' at baccarat"):
        game.apply(round_, Wager("w4", "ana", "dragon", 100))
    game.apply(round_, CloseBetting())
    with pytest.raises(NotExpectedError, match="betting is closed"):
        game.apply(round_, Wager("w5", "ana", "tie", 100))
    with pytest.raises(NotExpectedError, match="the shoe's earlier coups come first"):
        game.apply(round_, Shoe(()))


def test_the_roads_go_on_from_the_shoe_and_take_the_coup_once_settled() -> None:
    earlier = ({"winner": "banker", "player_pair": False, "banker_pair": True, "natural": False},)
    round_ = BACCARAT.new_round(BACCARAT.settings({}))
    BACCARAT.apply(round_, Shoe(earlier))
    assert BACCARAT.view(round_)["roads"]["bead_plate"] == [earlier[0]]
    BACCARAT.apply(round_, CloseBetting())
    for card in cards("2H 9S 3D KC"):  # a Banker natural: its streak goes on
        BACCARAT.apply(round_, BACCARAT.deal(card))
    shown = BACCARAT.view(round_)["roads"]
    assert shown["big_road"] == [[{"winner": "banker", "ties": 0}, {"winner": "banker", "ties": 0}]]
    assert shown["bead_plate"][-1] == {"winner": "banker", "player_pair": False, "banker_pair": False, "natural": True}
    with pytest.raises(GameError, match="a road mark needs a winner"):
        BACCARAT.apply(BACCARAT.new_round(BACCARAT.settings({})), Shoe(({"winner": "dragon"},)))


def test_dragon_tiger_refuses_both_sides_but_takes_a_side_and_the_tie() -> None:
    round_ = DRAGON_TIGER.new_round(DRAGON_TIGER.settings({}))
    DRAGON_TIGER.apply(round_, Wager("w1", "ana", "dragon", 100))
    DRAGON_TIGER.apply(round_, Wager("w2", "ana", "tie", 100))
    with pytest.raises(GameError, match="one side only: you bet on dragon in this coup, so not on tiger too"):
        DRAGON_TIGER.apply(round_, Wager("w3", "ana", "tiger", 100))
    DRAGON_TIGER.apply(round_, CloseBetting())
    assert [w.text for w in [DRAGON_TIGER.expecting(round_)] if isinstance(w, CardWanted)] == ["the Dragon's card"]
    DRAGON_TIGER.apply(round_, DRAGON_TIGER.deal(Card.from_code("7S")))
    DRAGON_TIGER.apply(round_, DRAGON_TIGER.deal(Card.from_code("7S")))  # a suited tie: the half back on Dragon
    assert DRAGON_TIGER.payouts(round_) == [Payout("ana", "w1", -50), Payout("ana", "w2", 800)]
    assert set(DRAGON_TIGER.view(round_)["roads"]) == {"coups", "counts", "bead_plate", "big_road"}


def test_a_settled_coup_voided_pays_nothing_and_leaves_the_roads() -> None:
    round_ = live(BACCARAT, cards("2H 9S 3D KC"), [("banker", 1_000)])
    assert BACCARAT.payouts(round_) == [Payout("p0", "w0", 950, 50)]
    BACCARAT.apply(round_, BACCARAT.void("the wrong shoe was on the table"))
    assert BACCARAT.payouts(round_) is None and BACCARAT.result(round_) is None
    assert BACCARAT.view(round_)["roads"]["coups"] == 0
    with pytest.raises(NotExpectedError, match="void already"):
        BACCARAT.apply(round_, BACCARAT.void("again"))


def test_a_stored_command_that_is_not_whole_and_a_wager_raised_on_another_spot_are_refused() -> None:
    with pytest.raises(GameError, match="a stored 'wager' command of baccarat is not whole"):
        BACCARAT.command_from_dict({"type": "wager", "player": "ana"})
    with pytest.raises(GameError, match="a stored 'shoe' command of baccarat is not whole"):
        BACCARAT.command_from_dict({"type": "shoe", "marks": None})
    round_ = BACCARAT.new_round(BACCARAT.settings({}))
    BACCARAT.apply(round_, Wager("w1", "ana", "tie", 100))
    with pytest.raises(GameError, match="wager w1 is ana's on tie: it is raised only so"):
        BACCARAT.apply(round_, Wager("w1", "ana", "banker", 100))
