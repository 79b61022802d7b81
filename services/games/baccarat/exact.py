"""The exact return of each baccarat bet for a table's settings: every coup a full shoe can deal, counted.

A coup draws four to six cards without replacement from ``decks`` × 52 cards. Only values matter to who wins (ten
values: 0 for the 16 tens and faces of each deck, 1–9 for the 4 of each), so the coups are walked by value with the
number of ordered card sequences behind each; every leaf is scaled to six draws, so the counts share one denominator
and the probabilities are exact fractions. Pairs depend on ranks only: two of the 4 × decks cards of one rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from services.games.baccarat.rules import banker_draws
from services.games.baccarat.settings import BaccaratSettings


@dataclass(frozen=True)
class Odds:
    """The chance of each outcome of one coup from a full shoe."""

    player: Fraction
    banker: Fraction
    banker_on_six: Fraction  # a Banker win with a total of 6 (the super6 variant pays it 1:2)
    tie: Fraction
    pair: Fraction  # one hand's first two cards of one rank (the same for Player and Banker)


@cache
def odds(decks: int) -> Odds:
    walk = _Walk(decks)
    walk.run()
    size = 52 * decks
    every = size * (size - 1) * (size - 2) * (size - 3) * (size - 4) * (size - 5)
    same_rank = 4 * decks
    return Odds(
        Fraction(walk.player, every),
        Fraction(walk.banker, every),
        Fraction(walk.six, every),
        Fraction(walk.tie, every),
        Fraction(13 * same_rank * (same_rank - 1), size * (size - 1)),
    )


class _Walk:
    """Every coup by card values; each count is of ordered six-card sequences from the shoe."""

    def __init__(self, decks: int) -> None:
        self.counts = [16 * decks] + [4 * decks] * 9  # the cards of each value, 0–9, not yet drawn
        self.left_after_four = 52 * decks - 4
        self.player = self.banker = self.six = self.tie = 0

    def draws(self, ways: int) -> list[tuple[int, int]]:
        """Each value the next card may have, with the sequences that reach it."""
        return [(value, ways * count) for value, count in enumerate(self.counts) if count]

    def run(self) -> None:
        counts = self.counts
        for p1, w1 in self.draws(1):
            counts[p1] -= 1
            for b1, w2 in self.draws(w1):
                counts[b1] -= 1
                for p2, w3 in self.draws(w2):
                    counts[p2] -= 1
                    for b2, w4 in self.draws(w3):
                        counts[b2] -= 1
                        self.third_cards((p1 + p2) % 10, (b1 + b2) % 10, w4)
                        counts[b2] += 1
                    counts[p2] += 1
                counts[b1] += 1
            counts[p1] += 1

    def third_cards(self, player: int, banker: int, ways: int) -> None:
        """The coup after its first four cards: a natural, or the drawing rules. A coup that ends before its sixth
        card stands for every way the rest of the shoe could have followed."""
        left = self.left_after_four
        if player >= 8 or banker >= 8 or (player >= 6 and not banker_draws(banker, None)):
            self.settle(player, banker, ways * left * (left - 1))
        elif player >= 6:  # the Player stands, the Banker draws
            for b3, ways5 in self.draws(ways):
                self.settle(player, (banker + b3) % 10, ways5 * (left - 1))
        else:
            for p3, ways5 in self.draws(ways):
                if banker_draws(banker, p3):
                    self.counts[p3] -= 1
                    for b3, ways6 in self.draws(ways5):
                        self.settle((player + p3) % 10, (banker + b3) % 10, ways6)
                    self.counts[p3] += 1
                else:
                    self.settle((player + p3) % 10, banker, ways5 * (left - 1))

    def settle(self, player: int, banker: int, ways: int) -> None:
        if player > banker:
            self.player += ways
        elif banker > player:
            self.banker += ways
            self.six += ways if banker == 6 else 0
        else:
            self.tie += ways


def returns(settings: BaccaratSettings) -> dict[str, Fraction]:
    """What each bet returns per unit staked, stake included (1 is break-even), for ``settings``."""
    chance = odds(settings.decks)
    if settings.super6:
        banker = 2 * (chance.banker - chance.banker_on_six) + Fraction(3, 2) * chance.banker_on_six
    else:
        banker = chance.banker * (1 + Fraction(10_000 - settings.banker_commission_bps, 10_000))
    return {
        "player": 2 * chance.player + chance.tie,
        "banker": banker + chance.tie,
        "tie": (settings.tie_pays + 1) * chance.tie,
        "player_pair": (settings.pair_pays + 1) * chance.pair,
        "banker_pair": (settings.pair_pays + 1) * chance.pair,
    }
