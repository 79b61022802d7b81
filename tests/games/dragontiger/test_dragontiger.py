"""Dragon Tiger: coups worked by hand, exact returns against the published figures and a simulation."""

from __future__ import annotations

import random

import pytest

from services.cards import FULL_DECK
from services.games.dragontiger.rules import Coup, DragonTigerSettings, Winner, returns
from services.games.dragontiger.transcript import replay_to_dict

EVERY_BET = [{"on": spot, "stake": 101} for spot in ("dragon", "tiger", "tie", "suited_tie")]


@pytest.mark.parametrize(
    ("cards", "settings", "winner", "suited", "nets"),
    [
        (["KH", "QD"], {}, "dragon", False, [101, -101, -101, -101]),  # K high
        (["AS", "2C"], {}, "tiger", False, [-101, 101, -101, -101]),  # A low
        (["7S", "7D"], {}, "tie", False, [-51, -51, 808, -101]),  # half back: the house keeps the odd unit
        (["7S", "7S"], {}, "tie", True, [-51, -51, 808, 5050]),
        (["7S", "7D"], {"tie_half_back": False, "tie_pays": 11}, "tie", False, [-101, -101, 1111, -101]),
    ],
)
def test_coups_worked_by_hand(
    cards: list[str], settings: dict[str, object], winner: str, suited: bool, nets: list[int]
) -> None:
    answer = replay_to_dict({"cards": cards, "bets": EVERY_BET, "settings": settings})
    assert answer == {
        "dragon": cards[0], "tiger": cards[1], "winner": winner, "suited_tie": suited,
        "payouts": [bet | {"net": net} for bet, net in zip(EVERY_BET, nets, strict=True)],
    }  # fmt: skip


def test_a_transcript_is_refused_in_one_line() -> None:
    assert replay_to_dict({"cards": ["KH"]}) == {"error": "a coup is two cards, Dragon then Tiger; 1 given"}
    assert replay_to_dict({"cards": ["KH", "KH"], "settings": {"decks": 1}}) == {
        "error": "card KH is given 2 times; a shoe of 1 deck(s) holds it once"
    }
    assert replay_to_dict({"cards": ["KH", "QD"], "bets": [{"on": "dragon", "stake": 0}]}) == {
        "error": "bet #1: a stake is a whole number 1–10^12 minor units, got 0"
    }


def test_the_exact_returns_are_the_published_eight_deck_figures() -> None:
    got = {spot: round(float(rtp), 6) for spot, rtp in returns(DragonTigerSettings()).items()}
    assert got == {"dragon": 0.962651, "tiger": 0.962651, "tie": 0.672289, "suited_tie": 0.860241}


def test_the_exact_returns_match_a_simulation_of_real_shoes() -> None:
    rng = random.Random(6)
    ties = suited = dragons = coups = 0
    while coups < 100_000:
        shoe = list(FULL_DECK) * 8
        rng.shuffle(shoe)
        for index in range(0, len(shoe) - 1, 2):
            coup = Coup(shoe[index], shoe[index + 1])
            coups += 1
            ties += coup.winner is Winner.TIE
            suited += coup.suited_tie
            dragons += coup.winner is Winner.DRAGON
    settings = DragonTigerSettings()
    exact = returns(settings)
    tie, suited_tie = float(exact["tie"]) / 9, float(exact["suited_tie"]) / 51
    for share, p in ((ties, tie), (suited, suited_tie), (dragons, (1 - tie) / 2)):
        assert abs(share / coups - p) < 5 * (p * (1 - p) / coups) ** 0.5
