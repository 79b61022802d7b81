"""Benchmark: baccarat and Dragon Tiger coups replayed per second, beside summing the same cards' totals (the floor);
and the time the exact returns take.

    .venv/bin/python bench/coups.py [--coups N]

Coups are dealt in order from shuffled 8-deck shoes (a new shoe when fewer than six cards are left), each with a
Player, a Banker and a Tie bet. Three rates over the same coups: the transcript replay ``studio baccarat replay`` runs
(cards and bets read and checked from JSON, the coup, every bet's net), the engine's replay of the stored commands
(what a correction or a restart runs: the shoe's marks, wagers, the close, the deals, settlement), and the floor — the
two hands' totals summed from the same cards. The exact returns are timed from a cold cache: every coup an 8-deck
(and a 6-deck) shoe can deal counted by card value.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

from services.cards import FULL_DECK, Card
from services.games.baccarat import exact
from services.games.baccarat.port import BACCARAT
from services.games.baccarat.rules import coup_of, next_hand, value
from services.games.baccarat.settings import BaccaratSettings
from services.games.baccarat.transcript import replay
from services.games.coup_game import CloseBetting, Wager
from services.games.dragontiger import rules as dragontiger
from services.games.dragontiger.transcript import replay as replay_dragon_tiger

BETS = [{"on": "player", "stake": 100}, {"on": "banker", "stake": 250}, {"on": "tie", "stake": 100}]
DRAGON_BETS = [{"on": "dragon", "stake": 100}, {"on": "tie", "stake": 100}]


def coups(count: int, rng: random.Random) -> list[tuple[list[Card], list[Card], list[Card]]]:
    """``count`` coups dealt in order from shuffled 8-deck shoes: each its cards in deal order, the Player's, the
    Banker's."""
    dealt: list[tuple[list[Card], list[Card], list[Card]]] = []
    shoe: list[Card] = []
    while len(dealt) < count:
        if len(shoe) < 6:
            shoe = list(FULL_DECK) * 8
            rng.shuffle(shoe)
        order: list[Card] = []
        player: list[Card] = []
        banker: list[Card] = []
        while (hand := next_hand(player, banker)) is not None:
            order.append(shoe.pop())
            (player if hand == "player" else banker).append(order[-1])
        dealt.append((order, player, banker))
    return dealt


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds else float("inf")


def timed(work: Any) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--coups", type=int, default=50_000)
    args = parser.parse_args()
    rng = random.Random(11)
    dealt = coups(args.coups, rng)
    assert all(coup_of(cards) for cards, _, _ in dealt[:200])  # each is a whole coup, in deal order
    transcripts = [{"cards": [str(card) for card in cards], "bets": BETS} for cards, _, _ in dealt]
    settings = BaccaratSettings()
    logs = []
    for cards, _, _ in dealt:
        commands: list[Any] = [Wager(f"w{i}", f"p{i}", bet["on"], bet["stake"]) for i, bet in enumerate(BETS)]
        logs.append([*commands, CloseBetting(), *(BACCARAT.deal(card) for card in cards)])

    transcript_s = timed(lambda: [replay(transcript) for transcript in transcripts])
    engine_s = timed(lambda: [BACCARAT.payouts(BACCARAT.replay(log, settings)) for log in logs])
    floor_s = timed(lambda: [(sum(map(value, p)) % 10, sum(map(value, b)) % 10) for _, p, b in dealt])
    pairs = [{"cards": [str(card) for card in rng.sample(FULL_DECK, 2)], "bets": DRAGON_BETS} for _ in dealt]
    dragon_tiger_s = timed(lambda: [replay_dragon_tiger(transcript) for transcript in pairs])

    exact.odds.cache_clear()
    exact_8_s = timed(lambda: exact.returns(settings))
    exact_6_s = timed(lambda: exact.returns(BaccaratSettings(decks=6)))
    dragon_tiger_exact_s = timed(lambda: dragontiger.returns(dragontiger.DragonTigerSettings()))

    n = args.coups
    print(f"coups: {n:,} from 8-deck shoes, 3 bets each")
    print(f"transcript replay (JSON in, nets out): {rate(n, transcript_s):,.0f} coups/s")
    print(f"engine replay (stored commands):       {rate(n, engine_s):,.0f} coups/s")
    print(f"floor (the two totals summed):         {rate(n, floor_s):,.0f} coups/s")
    print(f"ratio transcript/floor time: {transcript_s / floor_s:.1f}×, engine/floor: {engine_s / floor_s:.1f}×")
    print(f"dragon tiger transcript replay:        {rate(n, dragon_tiger_s):,.0f} coups/s")
    print(f"exact returns: baccarat 8 decks {exact_8_s:.2f} s, 6 decks {exact_6_s:.2f} s; "
          f"dragon tiger {dragon_tiger_exact_s * 1e6:.0f} µs")  # fmt: skip
    figures = {
        "coups": n,
        "transcript_coups_per_s": round(rate(n, transcript_s)),
        "engine_coups_per_s": round(rate(n, engine_s)),
        "floor_coups_per_s": round(rate(n, floor_s)),
        "transcript_floor_ratio": round(transcript_s / floor_s, 2),
        "engine_floor_ratio": round(engine_s / floor_s, 2),
        "dragontiger_transcript_coups_per_s": round(rate(n, dragon_tiger_s)),
        "exact_8_decks_s": round(exact_8_s, 3),
        "exact_6_decks_s": round(exact_6_s, 3),
        "dragontiger_exact_us": round(dragon_tiger_exact_s * 1e6, 1),
    }
    print(json.dumps(figures))  # the last line: the figures


if __name__ == "__main__":
    main()
