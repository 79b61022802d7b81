"""Benchmark: Pok Deng rounds per second through the engine, beside the bare rules math (the floor).

    .venv/bin/python bench/engine.py [--rounds N]

The floor classifies and compares the same hands and settles the same wagers directly, with no
state machine, verification or events. The ratio is what the engine's safety costs per round.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from services.cards import FULL_DECK, Card
from services.games.pokdeng import SEATS, PokDengRound, Side
from services.games.pokdeng.hands import classify
from services.games.pokdeng.play import play_out
from services.games.pokdeng.settlement import settle_round


def play(rng: random.Random, shoe: list[Card]) -> PokDengRound:
    round_ = PokDengRound()
    for index in range(6):
        side = Side.PLAYER if index % 2 else Side.BANKER
        for seat in SEATS:
            round_.place_wager(f"w{index}{seat}", f"p{index}", side, seat, 10 + index)
    round_.close_betting()
    play_out(round_, shoe, lambda _window: rng.random() < 0.5)
    return round_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    args = parser.parse_args()
    rng = random.Random(7)
    shoes = [rng.sample(FULL_DECK, 12) for _ in range(args.rounds)]

    start = time.perf_counter()
    played = [play(rng, shoe) for shoe in shoes]
    engine_seconds = time.perf_counter() - start

    start = time.perf_counter()
    for round_ in played:
        hands = {position: classify(cards) for position, cards in round_.hands.items()}
        settle_round(hands, round_.wagers, {}, 0, early=False)
    floor_seconds = time.perf_counter() - start

    engine_rate, floor_rate = args.rounds / engine_seconds, args.rounds / floor_seconds
    print(f"rounds: {args.rounds} (18 wagers each)")
    print(f"engine: {engine_rate:,.0f} rounds/s ({engine_seconds * 1e6 / args.rounds:.0f} µs/round)")
    print(
        f"floor (classify + settle only): {floor_rate:,.0f} rounds/s ({floor_seconds * 1e6 / args.rounds:.0f} µs/round)"
    )
    print(f"ratio engine/floor time: {engine_seconds / floor_seconds:.1f}×")
    figures = {
        "rounds": args.rounds,
        "engine_rounds_per_s": round(engine_rate),
        "floor_rounds_per_s": round(floor_rate),
    }
    print(json.dumps(figures | {"ratio": round(engine_seconds / floor_seconds, 2)}))  # the last line: the figures


if __name__ == "__main__":
    main()
