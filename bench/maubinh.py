"""Benchmark: Mậu Binh auto-arrange latency per 13-card hand and 4-player showdown scoring throughput (one core).

    .venv/bin/python bench/maubinh.py [--decks 250] [--passes 20] [--seed 1]

Hands: ``--decks`` seeded shuffles, each dealt to four players (1,000 hands by default). Figures:

- build: the one-time cost in a fresh process of the exhaustive tables (all 2,598,960 five-card and
  22,100 three-card hands by class), the 72,072 split index arrays and the per-class objective;
- arrange: ``auto_arrange`` per hand, p50/p99/max (target p99 < 50 ms), against the floor measured
  on the same hands in the same run: the bare numpy table lookups for the hand's 1,287 + 286 subsets
  and the gathers over the 72,072 splits, with no validity check, objective or choice;
- scoring: 4-player tables per second, from the arranged cards to every pair's result and each total
  (chi strengths, binh lủng, instant-win checks, pairs), over the tables those decks make, against the
  floor of comparing already-computed chi strengths pair by pair and summing the units.

The process is pinned to one CPU where the OS allows it. The last line is one JSON object of the figures.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402  (the thread limits must be set before numpy loads)
import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from itertools import combinations  # noqa: E402

import numpy as np  # noqa: E402

from services.games.maubinh import Hand, MauBinhSettings, auto_arrange, score_table, win_units  # noqa: E402
from services.games.maubinh.arrange import objective, splits  # noqa: E402
from services.games.maubinh.tables import five_card_table, three_card_table  # noqa: E402

PLAYERS = ("p1", "p2", "p3", "p4")


def pin_to_one_cpu() -> str:
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"cpu {cpu}"
    except (AttributeError, OSError):
        return "not pinned"


def floor_lookups(cards: list[int]) -> int:
    """What any arrangement over these tables must do: classify the subsets, gather them per split."""
    five, three, split = five_card_table(), three_card_table(), splits()
    hand = np.array(sorted(cards), dtype=np.uint8)
    classes5, classes3 = five.classes(hand[split.five]), three.classes(hand[split.three])
    first, second, third = classes5[split.chi1], classes5[split.chi2], classes3[split.chi3]
    return int(first[0] + second[0] + third[0])


def floor_scoring(strengths: list[tuple[int, int, int]], units: list[tuple[int, int, int]]) -> int:
    """Pairwise chi comparisons of precomputed strengths and units: no evaluation, binh lủng, scoops or instants."""
    total = 0
    for a, b in combinations(range(len(strengths)), 2):
        for chi in range(3):
            if strengths[a][chi] > strengths[b][chi]:
                total += units[a][chi]
            elif strengths[a][chi] < strengths[b][chi]:
                total -= units[b][chi]
    return total


def percentile(sorted_values: list[float], share: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, round(share * (len(sorted_values) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--decks", type=int, default=250)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    pinned = pin_to_one_cpu()

    started = time.perf_counter()
    five_card_table()
    three_card_table()
    tables_seconds = time.perf_counter() - started
    splits()
    objective()
    build_seconds = time.perf_counter() - started

    rng = random.Random(args.seed)
    deals = []
    for _ in range(args.decks):
        deck = list(range(52))
        rng.shuffle(deck)
        deals.append([deck[13 * seat : 13 * seat + 13] for seat in range(4)])
    hands = [cards for deal in deals for cards in deal]

    auto_arrange(hands[0])  # warm caches so the first timing is not an outlier of allocation
    arrange_ms: list[float] = []
    arranged = []
    for cards in hands:
        tick = time.perf_counter()
        arranged.append(auto_arrange(cards))
        arrange_ms.append((time.perf_counter() - tick) * 1e3)
    floor_ms: list[float] = []
    for cards in hands:
        tick = time.perf_counter()
        floor_lookups(cards)
        floor_ms.append((time.perf_counter() - tick) * 1e3)
    arrange_ms.sort()
    floor_ms.sort()

    settings = MauBinhSettings()
    tables = [
        [(best.chi1, best.chi2, best.chi3) for best in arranged[4 * index : 4 * index + 4]]
        for index in range(len(deals))
    ]
    tick = time.perf_counter()
    for _ in range(args.passes):
        for table in tables:
            seats = {player: Hand.of(*chis) for player, chis in zip(PLAYERS, table, strict=True)}
            score_table(seats, settings)
    scoring_seconds = time.perf_counter() - tick
    precomputed = []
    for table in tables:
        strengths = [Hand.of(*chis).strengths for chis in table]
        precomputed.append((strengths, [tuple(win_units(chi, s[chi]) for chi in range(3)) for s in strengths]))
    tick = time.perf_counter()
    for _ in range(args.passes):
        for strengths, units in precomputed:
            floor_scoring(strengths, units)  # type: ignore[arg-type]
    floor_seconds = time.perf_counter() - tick
    scored = args.passes * len(tables)

    figures = {
        "cpu": pinned,
        "hands": len(hands),
        "table_build_ms": round(tables_seconds * 1e3),
        "one_time_build_ms": round(build_seconds * 1e3),
        "arrange_p50_ms": round(percentile(arrange_ms, 0.50), 2),
        "arrange_p99_ms": round(percentile(arrange_ms, 0.99), 2),
        "arrange_max_ms": round(arrange_ms[-1], 2),
        "arrange_mean_ms": round(statistics.fmean(arrange_ms), 2),
        "floor_lookups_p50_ms": round(percentile(floor_ms, 0.50), 2),
        "arrange_to_floor_ratio_p50": round(percentile(arrange_ms, 0.50) / percentile(floor_ms, 0.50), 2),
        "expected_units_mean": round(statistics.fmean(best.expected_units for best in arranged), 3),
        "scoring_tables": scored,
        "scoring_tables_per_s": round(scored / scoring_seconds),
        "floor_compare_tables_per_s": round(scored / floor_seconds),
        "scoring_to_floor_ratio": round(scoring_seconds / floor_seconds, 1),
    }
    for name, value in figures.items():
        print(f"{name:>28}: {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
