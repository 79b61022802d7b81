"""``studio demo``: Pok Deng rounds played through the engine and printed as a table.

It replays the fixture transcripts (checking each against its expected result), then deals
``--rounds`` fresh rounds from a shuffled deck with simulated players who bet, insure and decide.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from services.cards import FULL_DECK, Card, DeckTracker
from services.games.pokdeng import (
    SEATS,
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    PokDengRound,
    Position,
    RoundResult,
    Side,
)
from services.games.pokdeng.transcript import replay, result_to_dict

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "pokdeng"
PLAYERS = ("ana", "binh", "chai", "dao", "emi", "farid")
CARDS_PER_ROUND_AT_MOST = 12


def register(commands: Any) -> None:
    parser = commands.add_parser("demo", help="play Pok Deng rounds through the engine and print them")
    parser.add_argument("--rounds", type=int, default=5, help="simulated rounds to deal (default 5)")
    parser.add_argument("--seed", type=int, default=None, help="random seed, for a repeatable demo")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    failures = replay_fixtures()
    rng = random.Random(args.seed)
    deck = DeckTracker()
    shoe: list[Card] = []
    totals: dict[str, int] = {}
    for number in range(1, args.rounds + 1):
        if not deck.can_deal(CARDS_PER_ROUND_AT_MOST) or not shoe:
            deck.shuffle()
            shoe = rng.sample(FULL_DECK, len(FULL_DECK))
        result = simulate_round(rng, shoe, deck)
        print(render(f"simulated round {number}", result))
        for player, net in result.player_nets().items():
            totals[player] = totals.get(player, 0) + net
    if totals:
        print("players after the simulated rounds: " + ", ".join(f"{p} {n:+d}" for p, n in sorted(totals.items())))
    print(f"fixtures: {'all match' if not failures else f'{failures} MISMATCH(ES)'}")
    return 1 if failures else 0


def replay_fixtures() -> int:
    failures = 0
    for path in sorted((FIXTURES / "transcripts").glob("*.json")):
        result = replay(json.loads(path.read_text()))
        expected_path = FIXTURES / "expected" / path.name
        matches = result_to_dict(result) == json.loads(expected_path.read_text())
        failures += not matches
        verdict = "✓ matches" if matches else "✗ DIFFERS FROM"
        print(render(f"fixture {path.stem} {verdict} {expected_path.name}", result))
    return failures


def simulate_round(rng: random.Random, shoe: list[Card], deck: DeckTracker) -> RoundResult:
    round_ = PokDengRound()
    for index, player in enumerate(rng.sample(PLAYERS, rng.randint(2, len(PLAYERS)))):
        side = rng.choice(list(Side))
        for seat in rng.sample(SEATS, rng.randint(1, 3)):
            round_.place_wager(f"w{index}{seat}", player, side, seat, rng.choice((10, 20, 50, 100)))
    round_.close_betting({player: rng.randint(1, 5) for player in PLAYERS})
    while round_.result is None:
        match round_.expecting:
            case AwaitingCard():
                card = shoe.pop()
                deck.record(card)
                round_.deal(card)
            case AwaitingInsurance(eligible=eligible):
                for player in eligible:
                    if rng.random() < 0.5:
                        round_.buy_insurance(player, rng.choice(round_.insurance_amounts(player)))
                round_.close_insurance()
            case AwaitingDecision(seat=seat):
                if rng.random() < 0.7:
                    round_.decide(seat, round_.points(seat) <= rng.randint(3, 5))
                else:
                    round_.decision_timeout(seat)
    return round_.result


def render(title: str, result: RoundResult) -> str:
    lines = [f"── {title} " + "─" * max(0, 60 - len(title)) + ("  (settled early)" if result.early else "")]
    for position, hand in result.hands.items():
        cards = " ".join(map(str, hand.cards))
        outcome = "" if position is Position.BANKER else f"→ {result.outcomes[position]}"
        rank = hand.rank.name.lower()
        lines.append(f"  {position!s:>6}  {cards:<9} {hand.points} pts  {rank:<14} ×{hand.multiplier} {outcome}")
    for item in sorted(result.wagers, key=lambda item: item.wager.order):
        wager = item.wager
        lines.append(
            f"    {wager.player:<6} {wager.side:<6} on {wager.seat}  stake {wager.stake:>4}  net {item.net:+5d}"
        )
    for insurance in result.insurance:
        lines.append(f"    {insurance.player:<6} insurance    stake {insurance.amount:>4}  net {insurance.net:+5d}")
    lines.append(f"    house net {result.house_net():+d}")
    return "\n".join(lines)
