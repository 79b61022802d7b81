"""Punto Banco: golden coups for every drawing branch, the rules as properties, exact returns against a simulation."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.cards import FULL_DECK, Card
from services.games.baccarat.bets import outcome
from services.games.baccarat.exact import odds, returns
from services.games.baccarat.rules import Coup, Winner, coup_of, total, value
from services.games.baccarat.settings import BaccaratSettings
from services.games.baccarat.transcript import replay_to_dict
from services.games.base import GameSettingsError

GOLDEN = json.loads((Path(__file__).parent / "golden.json").read_text())
# The Banker's drawing table when the Player drew, from the rules' text: its total -> the Player's third-card values
# on which it draws.
BANKER_DRAWS_ON = {
    0: set(range(10)), 1: set(range(10)), 2: set(range(10)), 3: set(range(10)) - {8},
    4: set(range(2, 8)), 5: set(range(4, 8)), 6: {6, 7}, 7: set(),
}  # fmt: skip


@pytest.mark.parametrize("case", GOLDEN, ids=[case["why"] for case in GOLDEN])
def test_each_golden_coup_replays_as_worked_by_hand(case: dict[str, Any]) -> None:
    assert replay_to_dict(case["transcript"]) == case["expected"]


def test_the_golden_coups_cover_every_banker_branch() -> None:
    """Naturals, the Player standing, and each Banker total 0–7 after a Player's third card, drawing and not."""
    seen = set()
    for case in GOLDEN:
        coup = coup_of([Card.from_code(code) for code in case["transcript"]["cards"]])
        if coup.natural:
            seen.add("natural")
        elif len(coup.player) == 2:
            seen.add("player stood")
        else:
            seen.add((total(coup.banker[:2]) if total(coup.banker[:2]) > 2 else "0-2", len(coup.banker) == 3))
    branches = {(3, True), (3, False), (4, True), (4, False), (5, True), (5, False), (6, True), (6, False)}
    assert {"natural", "player stood", ("0-2", True), (7, False)} | branches <= seen


@given(st.permutations(FULL_DECK * 2))
def test_every_coup_follows_the_drawing_rules(shoe: list[Card]) -> None:
    player: list[Card] = []
    coup: Coup | None = None
    for size in range(4, 7):  # the coup is the first 4, 5 or 6 cards: exactly one of them is complete
        try:
            coup = coup_of(shoe[:size])
            break
        except ValueError:
            continue
    assert coup is not None
    player, banker = list(coup.player), list(coup.banker)
    assert shoe[: len(player) + len(banker)][:4] == [player[0], banker[0], player[1], banker[1]]
    natural = total(player[:2]) >= 8 or total(banker[:2]) >= 8
    assert coup.natural == natural
    assert (len(player) == 3) == (not natural and total(player[:2]) <= 5)
    if natural:
        assert len(banker) == 2
    elif len(player) == 2:
        assert (len(banker) == 3) == (total(banker[:2]) <= 5)
    else:
        assert (len(banker) == 3) == (value(player[2]) in BANKER_DRAWS_ON.get(total(banker[:2]), set()))
    player_total, banker_total = total(player), total(banker)
    expected = Winner.PLAYER if player_total > banker_total else Winner.BANKER if banker_total > player_total else None
    assert coup.winner == (expected or Winner.TIE)


def test_a_transcript_is_refused_in_one_line_naming_what_is_wrong() -> None:
    assert replay_to_dict({"cards": ["9H", "8C", "KD"]}) == {"error": "the coup needs more cards than the 3 given"}
    assert replay_to_dict({"cards": ["9H", "8C", "KD", "KC", "2H"]}) == {
        "error": "the coup was complete after 4 cards, but 5 were given"
    }
    assert replay_to_dict({"cards": ["9H", "9H", "KD", "KC"], "settings": {"decks": 1}}) == {
        "error": "card 9H is given 2 times; a shoe of 1 deck(s) holds it once"
    }
    assert "card #3: invalid card code: 'KX'" in replay_to_dict({"cards": ["9H", "8C", "KX", "KC"]})["error"]
    assert replay_to_dict({"cards": ["9H", "8C", "KD", "KC"], "bets": [{"on": "dragon", "stake": 1}]}) == {
        "error": "bet #1: no bet 'dragon' (bets: player, banker, tie, player_pair, banker_pair)"
    }
    assert "setting decks" in replay_to_dict({"cards": [], "settings": {"decks": 9}})["error"]
    assert replay_to_dict([1]) == {"error": "a transcript must be a JSON object, got list"}


def test_the_exact_returns_are_the_published_eight_deck_figures() -> None:
    chance = odds(8)
    assert chance.player + chance.banker + chance.tie == 1
    got = {spot: round(float(rtp), 6) for spot, rtp in returns(BaccaratSettings()).items()}
    assert got == {"player": 0.987649, "banker": 0.989421, "tie": 0.856404, "player_pair": 0.896386,
                   "banker_pair": 0.896386}  # fmt: skip
    assert round(float(returns(BaccaratSettings(super6=True))["banker"]), 6) == 0.985419


def test_the_exact_returns_match_a_simulation_of_real_shoes() -> None:
    """60,000 coups dealt in turn from shuffled 8-deck shoes: each outcome's share within five standard errors."""
    rng = random.Random(20261206)
    settings = BaccaratSettings()
    counts = {"player": 0, "banker": 0, "tie": 0, "pair": 0}
    net = {spot: 0 for spot in ("player", "banker", "tie")}
    coups = 0
    while coups < 60_000:
        shoe = list(FULL_DECK) * 8
        rng.shuffle(shoe)
        while len(shoe) > 14:
            coup = _next_coup(shoe)
            coups += 1
            counts[str(coup.winner)] += 1
            counts["pair"] += coup.player_pair
            for spot in net:
                net[spot] += outcome(spot, 10_000, coup, settings).net
    chance = odds(8)
    for name, p in (("player", chance.player), ("banker", chance.banker), ("tie", chance.tie), ("pair", chance.pair)):
        error = (float(p) * (1 - float(p)) / coups) ** 0.5
        assert abs(counts[name] / coups - float(p)) < 5 * error, name
    exact = returns(settings)
    assert abs(1 + net["banker"] / (10_000 * coups) - float(exact["banker"])) < 0.02


def _next_coup(shoe: list[Card]) -> Coup:
    for size in range(4, 7):
        try:
            coup = coup_of(shoe[:size])
        except ValueError:
            continue
        del shoe[:size]
        return coup
    raise AssertionError("no coup in six cards")


def test_settings_are_checked_naming_the_one_that_is_wrong() -> None:
    with pytest.raises(GameSettingsError, match="setting banker_commission_bps: expected a whole number 0–2,500"):
        BaccaratSettings.of({"banker_commission_bps": -1})
    with pytest.raises(GameSettingsError, match="unknown setting 'commission'"):
        BaccaratSettings.of({"commission": 5})
    with pytest.raises(GameSettingsError, match="min_stake 500 is above max_stake 100"):
        BaccaratSettings.of({"min_stake": 500, "max_stake": 100})
