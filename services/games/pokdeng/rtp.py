"""Return to player of each Pok Deng bet for a table's settings: insurance exactly, the player and banker sides by a
vectorised simulation of whole rounds, stated with its 95 % interval.

A round is dealt from a freshly shuffled 52-card deck in the table's order (A, B, C, banker, twice), then follows
the rules: the banker's Pok settles at once; three seats with Pok keep the banker from drawing; a seat draws on 0,
never on Pok, and otherwise when its points are at or below the deciding threshold; the banker draws on 0–5; third
cards come from the shoe in the order A, B, C, banker. Every seat is decided by the same threshold (what a table
whose players all keep one threshold, or leave it to the default, sees). Returns are per unit staked, with the
stake large enough that rounding down is negligible (1.0 is break-even). ``tests/games`` checks the classification
and comparison here against the engine's own on random hands, and the returns against rounds played through the
engine itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Final

import numpy as np
import numpy.typing as npt

from services.games.pokdeng.settings import LARGEST_LOSS_MULTIPLE
from services.games.pokdeng.settlement import INSURANCE_PAYOUT

Ints = npt.NDArray[np.int64]
BATCH: Final = 500_000  # rounds per vectorised batch (~0.4 GB of intermediates at most)
# Card c in 0..51: rank index c // 4 (0 = 2 … 8 = T, 9 = J, 10 = Q, 11 = K, 12 = A: the card order, A high), suit
# c % 4 (0 = ♣, 1 = ♦, 2 = ♥, 3 = ♠: the suit order); so a higher c is a higher card.
POINTS: Final = np.array([2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 0, 0, 1], dtype=np.int64)
POK, TONG, STRAIGHT_FLUSH, STRAIGHT, THREE_FACE, PLAIN = 1, 2, 3, 4, 5, 6  # the spec's hand ranks, 1 best
Z95: Final = 1.959963984540054
SIDES: Final = ("player", "banker")


@dataclass(frozen=True)
class Estimate:
    rtp: float
    ci95: tuple[float, float]

    def as_dict(self) -> dict[str, object]:
        return {"rtp": round(self.rtp, 6), "ci95": [round(self.ci95[0], 6), round(self.ci95[1], 6)]}


@dataclass(frozen=True)
class Returns:
    player: Estimate  # a player-side wager on a seat, averaged over A, B and C
    banker: Estimate  # a banker-side wager against a seat, averaged over A, B and C
    insurance: Estimate  # exact
    seats: dict[str, dict[str, Estimate]]  # "A" → {"player": …, "banker": …}
    rounds: int

    def as_dict(self) -> dict[str, object]:
        return {
            "player": self.player.as_dict(),
            "banker": self.banker.as_dict(),
            "insurance": self.insurance.as_dict(),
            "seats": {seat: {side: e.as_dict() for side, e in sides.items()} for seat, sides in self.seats.items()},
            "rounds": self.rounds,
        }


def insurance_return() -> Fraction:
    """Exact: the banker's first card is an 8 or a 9 (equally likely); Pok needs a second card worth 0 or 1 after an
    8 (16 + 4 of the 51 unseen), 0 or 9 after a 9 (16 + 3). The seats' cards are unseen, so they change nothing."""
    numerator, denominator = INSURANCE_PAYOUT
    pok = Fraction(20 + 19, 2 * 51)
    return pok * (1 + Fraction(numerator, denominator))


def hands(cards: Ints) -> tuple[Ints, Ints, Ints, Ints]:
    """Rank, points, multiplier and highest card of each hand: ``cards`` is (n, 3) with -1 where a two-card hand
    has no third card."""
    third = cards[:, 2] >= 0
    safe = cards.copy()
    safe[:, 2] = np.where(third, cards[:, 2], cards[:, 0])  # a two-card hand's missing card: a copy of its first
    ranks, suits = safe // 4, safe % 4
    total = POINTS[ranks[:, 0]] + POINTS[ranks[:, 1]] + np.where(third, POINTS[ranks[:, 2]], 0)
    points = total % 10
    suited = (suits[:, 0] == suits[:, 1]) & (suits[:, 1] == suits[:, 2])
    pair = ranks[:, 0] == ranks[:, 1]
    ordered = np.sort(ranks, axis=1)
    tong = (ordered[:, 0] == ordered[:, 2]) & third
    straight = (ordered[:, 1] == ordered[:, 0] + 1) & (ordered[:, 2] == ordered[:, 1] + 1) & third
    faces = (ordered[:, 0] >= 9) & (ordered[:, 2] <= 11) & third  # J, Q, K only
    two_pok = ~third & (points >= 8)
    rank = np.full(len(cards), PLAIN, dtype=np.int64)
    rank = np.where(faces, THREE_FACE, rank)
    rank = np.where(straight, np.where(suited, STRAIGHT_FLUSH, STRAIGHT), rank)
    rank = np.where(tong, TONG, rank)
    rank = np.where(two_pok, POK, rank)
    two_bonus = np.where((suits[:, 0] == suits[:, 1]) | pair, 2, 1)
    multiplier = np.where(third, np.where(suited, 3, 1), two_bonus)  # plain points
    multiplier = np.where(rank == POK, two_bonus, multiplier)
    multiplier = np.where((rank == TONG) | (rank == STRAIGHT_FLUSH), 5, multiplier)
    multiplier = np.where((rank == STRAIGHT) | (rank == THREE_FACE), 3, multiplier)
    highest = np.max(safe, axis=1)
    return rank, points, multiplier, highest


def seat_outcome(banker: tuple[Ints, Ints, Ints, Ints], seat: tuple[Ints, Ints, Ints, Ints]) -> Ints:
    """+1 where the seat beats the banker, -1 where the banker wins, 0 for a tie."""
    b_rank, b_points, _, b_high = banker
    s_rank, s_points, _, s_high = seat
    by_points = np.sign(s_points - b_points)
    by_high = np.sign(s_high - b_high)
    same = np.where((s_rank == POK) | (s_rank == PLAIN), by_points, by_high)
    outcome: Ints = np.where(s_rank == b_rank, same, np.sign(b_rank - s_rank))
    return outcome


def deal(shoes: Ints, threshold: int) -> tuple[list[tuple[Ints, Ints, Ints, Ints]], tuple[Ints, Ints, Ints, Ints]]:
    """Play each shoe (n, 12: the deck's top cards in order) by the rules: the seats' and the banker's hands."""
    n = len(shoes)
    first = [shoes[:, [i, i + 4]] for i in range(4)]  # A, B, C, banker: two cards each
    two = [(POINTS[h[:, 0] // 4] + POINTS[h[:, 1] // 4]) % 10 for h in first]
    pok = [points >= 8 for points in two]
    banker_pok = pok[3]
    all_seats_pok = pok[0] & pok[1] & pok[2]
    position = np.full(n, 8, dtype=np.int64)  # the next card of the shoe
    rows = np.arange(n)
    seats = []
    for seat in range(3):
        draws = ~banker_pok & ~pok[seat] & (two[seat] <= threshold)  # 0 always draws (threshold ≥ 1)
        third = np.where(draws, shoes[rows, position], -1)
        position += draws
        seats.append(hands(np.column_stack([first[seat], third])))
    banker_draws = ~banker_pok & ~all_seats_pok & (two[3] <= 5)
    banker = hands(np.column_stack([first[3], np.where(banker_draws, shoes[rows, position], -1)]))
    return seats, banker


def wins_and_losses(
    banker: tuple[Ints, Ints, Ints, Ints], seat: tuple[Ints, Ints, Ints, Ints]
) -> dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]]:
    """Per unit staked, for a player-side wager on the seat and a banker-side wager against it: what it wins before
    commission (≥ 0) and what it loses (≤ 0). Its net is ``wins × (1 − commission) + losses``."""
    outcome = seat_outcome(banker, seat)
    seat_m, banker_m = seat[2].astype(np.float64), banker[2].astype(np.float64)
    seat_loss, banker_loss = -np.minimum(banker_m, LARGEST_LOSS_MULTIPLE), -np.minimum(seat_m, LARGEST_LOSS_MULTIPLE)
    return {
        "player": (np.where(outcome > 0, seat_m, 0.0), np.where(outcome < 0, seat_loss, 0.0)),
        "banker": (np.where(outcome < 0, banker_m, 0.0), np.where(outcome > 0, banker_loss, 0.0)),
    }


def nets(
    banker: tuple[Ints, Ints, Ints, Ints], seat: tuple[Ints, Ints, Ints, Ints], commission_bps: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per unit staked: the net of a player-side wager on the seat and of a banker-side wager against it."""
    keep = 1 - commission_bps / 10_000
    (pw, pl), (bw, bl) = wins_and_losses(banker, seat).values()
    return pw * keep + pl, bw * keep + bl


@dataclass
class Moments:
    """Sums over rounds of a wager's wins ``w`` and losses ``l`` per unit staked (pooled over seats: their average
    in each round, as seats share a round): enough to give the return and its interval for any commission."""

    n: int = 0
    w: float = 0.0
    l: float = 0.0  # noqa: E741 (the losses)
    ww: float = 0.0
    ll: float = 0.0
    wl: float = 0.0

    def add(self, wins: npt.NDArray[np.float64], losses: npt.NDArray[np.float64]) -> None:
        self.n += len(wins)
        self.w += float(wins.sum())
        self.l += float(losses.sum())
        self.ww += float(np.square(wins).sum())
        self.ll += float(np.square(losses).sum())
        self.wl += float((wins * losses).sum())

    def estimate(self, commission_bps: int) -> Estimate:
        keep = 1 - commission_bps / 10_000
        mean = (keep * self.w + self.l) / self.n
        squares = (keep * keep * self.ww + 2 * keep * self.wl + self.ll) / self.n
        variance = max(0.0, squares - mean * mean) * self.n / max(1, self.n - 1)
        half = Z95 * (variance / self.n) ** 0.5
        return Estimate(1 + mean, (1 + mean - half, 1 + mean + half))

    def as_list(self) -> list[float]:
        return [self.n, self.w, self.l, self.ww, self.ll, self.wl]

    @classmethod
    def from_list(cls, values: list[float]) -> Moments:
        n, w, l, ww, ll, wl = values  # noqa: E741
        return cls(int(n), w, l, ww, ll, wl)


Sides = dict[str, Moments]  # "player" | "banker" -> moments
Simulated = dict[str, Sides]  # "A" | "B" | "C" | "all" (the seats pooled) -> sides


def simulate(rounds: int, threshold: int = 4, seed: int = 1) -> Simulated:
    """The wins and losses of each bet over ``rounds`` simulated rounds (≥ 1) dealt with this auto-draw threshold."""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    if not 1 <= threshold <= 5:
        raise ValueError(f"threshold must be 1–5, got {threshold}")
    rng = np.random.default_rng(seed)
    found: Simulated = {seat: {"player": Moments(), "banker": Moments()} for seat in ("A", "B", "C", "all")}
    left = rounds
    while left:
        n = min(BATCH, left)
        left -= n
        shoes = np.argpartition(rng.random((n, 52)), 12, axis=1)[:, :12].astype(np.int64)
        rng.shuffle(shoes, axis=1)  # argpartition's first twelve are a random set, not in a random order
        seats, banker = deal(shoes, threshold)
        pooled = {side: (np.zeros(n), np.zeros(n)) for side in ("player", "banker")}
        for name, seat in zip("ABC", seats, strict=True):
            for side, (wins, losses) in wins_and_losses(banker, seat).items():
                found[name][side].add(wins, losses)
                pooled[side][0][:] += wins / 3
                pooled[side][1][:] += losses / 3
        for side, (wins, losses) in pooled.items():
            found["all"][side].add(wins, losses)
    return found


def from_moments(found: Simulated, commission_bps: int = 0) -> Returns:
    """Each bet type's return, with a commission of ``commission_bps`` on wins, from simulated wins and losses."""
    if not 0 <= commission_bps <= 10_000:
        raise ValueError(f"commission_bps must be 0–10000, got {commission_bps}")
    exact = float(insurance_return())
    return Returns(
        player=found["all"]["player"].estimate(commission_bps),
        banker=found["all"]["banker"].estimate(commission_bps),
        insurance=Estimate(exact, (exact, exact)),
        seats={seat: {side: found[seat][side].estimate(commission_bps) for side in SIDES} for seat in "ABC"},
        rounds=found["all"]["player"].n,
    )


def returns(rounds: int, threshold: int = 4, commission_bps: int = 0, seed: int = 1) -> Returns:
    """Each bet type's return for ``rounds`` simulated rounds (≥ 1) of a table with these settings."""
    if not 0 <= commission_bps <= 10_000:
        raise ValueError(f"commission_bps must be 0–10000, got {commission_bps}")
    return from_moments(simulate(rounds, threshold, seed), commission_bps)
