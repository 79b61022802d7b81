"""Benchmark: Tiến Lên legal-move generation and whole random games per second (one core).

    .venv/bin/python bench/tienlen.py [--games 2000] [--seed 1]

Games: four seeded random bots play whole rounds (each turn the player to act asks for its legal
moves and picks one, or passes; sometimes another player chops out of turn). Figures:

- legal moves: ``legal_moves`` calls per second over every position of those games, against two
  references measured on the same positions in the same run: the floor (checking the listed
  moves — classify each and test it against the table — what any generator's answer costs to
  confirm) and the brute force (classify every subset of the hand, keep those that beat the table);
- games: rounds per second played by the bots, against replaying the same command logs through
  the engine (verification and events, no move generation): the share that choosing moves costs.

The last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from itertools import combinations
from typing import Any

from services.games.tienlen import Command, TienLenRound, TienLenSettings
from services.games.tienlen.combos import Combination, classify
from services.games.tienlen.moves import all_combinations, answers

PLAYERS = ("p1", "p2", "p3", "p4")
Position = tuple[frozenset[int], Combination | None]
Generator = Callable[[frozenset[int], Combination | None], list[Any]]


def play_game(rng: random.Random, positions: list[Position] | None = None) -> tuple[dict[str, list[int]], TienLenRound]:
    deck = list(range(52))
    rng.shuffle(deck)
    hands = {player: deck[13 * index : 13 * index + 13] for index, player in enumerate(PLAYERS)}
    round_ = TienLenRound(PLAYERS, hands, starting_round=True, settings=TienLenSettings(instant_wins=()))
    while round_.to_act is not None:
        to_act = round_.to_act
        if positions is not None:
            positions.append((frozenset(round_.hands[to_act]), round_.top))
        chopper = next((p for p in PLAYERS if p != to_act and round_.legal_moves(p)), None)
        if chopper and rng.random() < 0.5:
            round_.play(chopper, rng.choice(round_.legal_moves(chopper)).cards)
            continue
        moves = round_.legal_moves(to_act)
        if round_.can_pass(to_act) and (not moves or rng.random() < 0.3):
            round_.pass_turn(to_act)
        else:
            round_.play(to_act, min(moves, key=lambda move: move.high).cards)
    return hands, round_


def brute_force(hand: frozenset[int], top: Combination | None) -> list[tuple[int, ...]]:
    found = []
    for size in range(1, len(hand) + 1):
        for cards in combinations(sorted(hand), size):
            combo = classify(cards)
            if combo is not None and (top is None or combo.beats(top)):
                found.append(combo.cards)
    return found


def legal_moves_of(hand: frozenset[int], top: Combination | None) -> list[Combination]:
    """The generator the round uses for the player to act, on a bare position."""
    return all_combinations(hand) if top is None else answers(hand, top)


def timed(function: Generator, positions: list[Position]) -> tuple[float, int]:
    started = time.perf_counter()
    produced = sum(len(function(hand, top)) for hand, top in positions)
    return time.perf_counter() - started, produced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    positions: list[Position] = []
    logs: list[tuple[dict[str, list[int]], list[Command]]] = []
    started = time.perf_counter()
    for _ in range(args.games):
        hands, round_ = play_game(rng, positions if len(positions) < 20_000 else None)
        logs.append((hands, round_.history))
    bot_seconds = time.perf_counter() - started
    actions = statistics.mean(len(history) for _, history in logs)

    started = time.perf_counter()
    for hands, history in logs:
        TienLenRound.replay(PLAYERS, hands, history, starting_round=True, settings=TienLenSettings(instant_wins=()))
    replay_seconds = time.perf_counter() - started

    ours, produced = timed(legal_moves_of, positions)
    listed = [([move.cards for move in legal_moves_of(hand, top)], top) for hand, top in positions]
    started = time.perf_counter()
    for moves, top in listed:
        for cards in moves:
            combo = classify(cards)
            assert combo is not None and (top is None or combo.beats(top))
    floor = time.perf_counter() - started
    sample = positions[:2000]
    brute, _ = timed(brute_force, sample)
    brute_per_position = brute / len(sample)
    per_position = ours / len(positions)

    figures = {
        "positions": len(positions),
        "moves_per_position_mean": round(produced / len(positions), 1),
        "legal_moves_calls_per_s": round(len(positions) / ours),
        "legal_moves_us_p_call": round(per_position * 1e6, 1),
        "floor_check_us_p_call": round(floor / len(positions) * 1e6, 2),
        "ratio_to_floor": round(ours / floor, 1),
        "brute_force_us_p_call": round(brute_per_position * 1e6),
        "speedup_over_brute_force": round(brute_per_position / per_position, 1),
        "games": args.games,
        "actions_per_game_mean": round(actions, 1),
        "bot_games_per_s": round(args.games / bot_seconds),
        "replay_games_per_s": round(args.games / replay_seconds),
        "bot_to_replay_ratio": round(bot_seconds / replay_seconds, 1),
    }
    for name, value in figures.items():
        print(f"{name:>28}: {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
