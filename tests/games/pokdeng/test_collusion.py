"""The collusion calculator: every decision state computed exactly and checked against the engine's own hands, the
table's threshold returns equal to the independent simulation's, the known exploit found under the spec's first
decision rule, and no group above 100 % under the rule the engine plays at any commission the guard accepts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from services.cards import Card
from services.cli import main
from services.games.pokdeng import collusion
from services.games.pokdeng.hands import Outcome, classify, compare
from services.games.pokdeng.rtp_table import THRESHOLDS, table_returns
from services.games.pokdeng.settings import LARGEST_LOSS_MULTIPLE

RANKS, SUITS = "23456789TJQKA", "CDHS"
STATES = collusion.kept()


def card(index: int) -> Card:
    return Card.from_code(RANKS[index // 4] + SUITS[index % 4])


def by_the_engine(low: int, high: int, up: int, triples: np.ndarray) -> np.ndarray:
    """(2, 4) as ``state_values``, one triple at a time with the engine's own hand rules."""
    found = np.zeros((2, 4))
    seat_two = [card(low), card(high)]
    for hidden, third, banker_third in triples:
        banker = [card(up), card(int(hidden))]
        banker_two = classify(banker)
        if not banker_two.is_pok and banker_two.points <= 5:
            banker.append(card(int(banker_third)))
        banker_hand = classify(banker)
        two = classify(seat_two)
        for action in (collusion.STAND, collusion.DRAW):
            draws = not banker_two.is_pok and not two.is_pok and (two.points == 0 or action == collusion.DRAW)
            seat = classify([*seat_two, card(int(third))] if draws else seat_two)
            outcome = compare(banker_hand, seat)
            if outcome is Outcome.SEAT:
                found[action] += [seat.multiplier, 0, 0, -min(seat.multiplier, LARGEST_LOSS_MULTIPLE)]
            elif outcome is Outcome.BANKER:
                found[action] += [0, -min(banker_hand.multiplier, LARGEST_LOSS_MULTIPLE), banker_hand.multiplier, 0]
    return found / len(triples)


@pytest.mark.parametrize("pick", [0, 17, 400, 1999, 3333, 5000])
def test_a_states_values_are_the_engines_hands_played_out(pick: int) -> None:
    representatives, _ = collusion.classes()
    low, high, up = representatives[pick]
    rng = np.random.default_rng(pick)
    every = collusion._triples()
    triples = every[rng.choice(len(every), 3_000, replace=False)]
    unseen = np.array([c for c in range(52) if c not in (low, high, up)])
    assert np.allclose(collusion.state_values(low, high, up, triples), by_the_engine(low, high, up, unseen[triples]))


def test_the_states_cover_every_deal_once() -> None:
    representatives, counts = collusion.classes()
    assert sum(counts) == 52 * 51 // 2 * 50 and len(representatives) == len(STATES.weight)
    assert STATES.weight.sum() == pytest.approx(1.0)
    assert set(STATES.points[STATES.free]) == set(range(1, 8))


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_exact_threshold_returns_fall_inside_the_simulations_interval(threshold: int) -> None:
    """Two independent computations: 20,000,000 simulated rounds per threshold (``rtp_table.json``) and the exact
    enumeration here agree on both sides of a seat, at no commission and at 5 %."""
    for commission in (0, 500):
        simulated = table_returns(commission, threshold).seats["A"]
        low, high = simulated["player"].ci95
        assert low <= STATES.group_return(commission, 0.0, threshold) <= high
        low, high = simulated["banker"].ci95
        assert low <= collusion.banker_side(STATES, commission, threshold) <= high


def test_the_strategy_search_finds_the_known_exploit_under_the_open_rule() -> None:
    """A decider with the smallest stake, a friend with the largest on the banker side: at 5 % commission they beat
    the house — more than a decider standing on everything (threshold 1, 104.7 %) already does."""
    found = collusion.worst_pair(STATES, 500, 4, 1, 1_000_000, rule="open")
    stand_on_everything = collusion.banker_side(STATES, 500, 1)
    assert stand_on_everything >= 1.04
    assert found.worst_pair_rtp >= stand_on_everything and found.ratio == 1_000_000 and found.strategy == "best"
    # the best strategy for the friend draws where the seat is strong and stands where it is weak
    worst = collusion.worst_pair(STATES, 500, 4, 1, 1, rule="open")
    assert worst.worst_pair_rtp < 1, "with equal stakes only, the open rule is safe too: the ratio is the lever"


@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_under_the_guarded_rule_no_group_reaches_100_percent_where_the_guard_accepts(threshold: int) -> None:
    least = collusion.table_least_commission(threshold, 1, 1_000_000)
    assert least is not None
    for bps in (least, least + 25, least + 500, 10_000):
        found = collusion.worst_pair(STATES, bps, threshold, 1, 1_000_000)
        assert found.worst_pair_rtp < 1, (bps, found)
    if least:
        assert collusion.worst_pair(STATES, least - 25, threshold, 1, 1_000_000).worst_pair_rtp >= 1, "the least"


def test_any_group_does_worst_at_an_end_of_its_stake_range() -> None:
    """The group's best return is convex in r/(1+r): no ratio between the ends does better than both ends."""
    for bps in (0, 500):
        ends = max(STATES.group_return(bps, 0.0, None), STATES.group_return(bps, 1.0, None))
        for ratio in np.linspace(0.01, 0.99, 25):
            assert STATES.group_return(bps, float(ratio), None) <= ends + 1e-12


def test_a_group_beats_any_threshold_its_decider_could_keep() -> None:
    for ratio in (0.0, 1.0, 50.0):
        best = STATES.group_return(300, ratio, None)
        assert all(STATES.group_return(300, ratio, t) <= best + 1e-12 for t in THRESHOLDS)


def test_studio_pokdeng_rtp_collusion(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pokdeng", "rtp", "--collusion", "--commission-bps", "500", "--json"]) == 0
    found = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert found["rule"] == "guarded" and 0.97 < found["worst_pair_rtp"] < 1
    assert found["least_commission_bps"] == 175
    assert found["open_rule"]["worst_pair_rtp"] > 1.1 and found["open_rule"]["least_commission_bps"] > 2_000
    assert found["settings"] == {"commission_bps": 500, "threshold": 4, "min_stake": 1, "max_stake": 1_000_000}
    assert main(["pokdeng", "rtp", "--collusion", "--min-stake", "10", "--max-stake", "5"]) == 2
    assert "--min-stake 10 is above --max-stake 5" in capsys.readouterr().err
    assert main(["pokdeng", "rtp", "--collusion"]) == 0
    assert "the rule the tables play" in capsys.readouterr().out
