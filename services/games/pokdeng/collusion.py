"""What a seat's decider can do with a friend on the other side: the best return per unit staked together that any
pair (or group) of bettors reaches on one seat, over every stake the table allows and every Draw/Stand strategy.

A seat's decider chooses Draw or Stand for everyone on the seat, including — through the seat's hand — those who bet
on the banker side against it. Let p be what the decider's group stakes on the seat's player side and b what it
stakes on the banker side against the seat, r = b / p. Per unit of p the group nets ``P + r·B`` (P and B: a unit
wager's net on each side), so for each state the decider sees, the group's best choice maximises that sum. The seat's
outcome against the banker depends only on the seat's cards, the banker's and the shoe's unseen cards, and unseen
cards are exchangeable: which card the next seat gets does not depend on whether this seat drew. So one seat and the
banker are the whole game for a group.

The states are what the decider sees when the seat's window opens: the seat's two cards and the banker's face-up
card (by rank, and how their suits relate — the same suit or not). Each state's expected wins and losses under Draw
and under Stand are computed **exactly**, by enumerating every banker's face-down card, seat's third card and
banker's third card from the 49 unseen. Two things are left out, both measured as negligible: the other seats' cards
(a decider sees them; card removal moves a state's value by well under 0.1 % and the rule leaves no state near the
edge), and the suit order's tie-break between two hands of one special rank whose highest cards share a rank (each
state is computed with one representative choice of suits).

The table, built once by ``python -m services.games.pokdeng.collusion`` (about two minutes), is kept in
``collusion.npz``; any commission, stake ratio and threshold is then exact arithmetic on it.

**The rule that closes it** (the engine's ``PokDengRound.decider``): a player decides a seat only while their own
player-side stake on it is at least everything staked on the banker side against it; otherwise the table's default
threshold decides at once. Then any group that decides has r ≤ 1 (its banker-side stakes are part of that total, and
other players' stakes only add to the total), and a group with r > 1 faces the default threshold, a fixed strategy
whose return is between its two sides'. The group's best return is a convex function of r/(1+r) (the perspective of
a maximum of lines), so its maximum sits at an end of the range the rule allows: r = 0 (the decider alone), r = 1,
or the banker side alone at the default threshold.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final, Literal

import numpy as np
import numpy.typing as npt

from services.games.pokdeng.rtp import POINTS, hands, wins_and_losses

TABLE: Final = Path(__file__).with_name("collusion.npz")
STAND, DRAW = 0, 1
PW, PL, BW, BL = 0, 1, 2, 3  # a unit wager's expected wins (≥ 0) and losses (≤ 0), player side then banker side
Rule = Literal["guarded", "open"]  # the rule the engine plays ("guarded") or the spec's first one ("open")
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class States:
    """Every state a seat can be in when its draw is decided, with its probability, the seat's points, and the
    expected wins and losses of a unit wager on each side under Stand and under Draw (``values[state, action]``).
    States where the rules decide (Pok stands, 0 draws) carry the rules' action under both."""

    weight: Floats  # (S,) sums to 1
    points: npt.NDArray[np.int64]  # (S,) the seat's two-card points
    values: Floats  # (S, 2, 4)

    @property
    def free(self) -> npt.NDArray[np.bool_]:
        """(S,) whether the seat's decider may choose (1–7 points)."""
        free: npt.NDArray[np.bool_] = (self.points >= 1) & (self.points <= 7)
        return free

    def nets(self, commission_bps: int, ratio: float) -> Floats:
        """(S, 2): the group's net per unit of its player-side stake in each state under each action."""
        keep = 1 - commission_bps / 10_000
        v = self.values
        result: Floats = keep * (v[..., PW] + ratio * v[..., BW]) + v[..., PL] + ratio * v[..., BL]
        return result

    def threshold_actions(self, threshold: int) -> npt.NDArray[np.int64]:
        """Each state's action under an auto-draw threshold (a state the rules decide keeps its action)."""
        return np.where(self.points <= threshold, DRAW, STAND).astype(np.int64)

    def group_return(self, commission_bps: int, ratio: float, threshold: int | None) -> float:
        """The group's return per unit staked together (p + b = 1 + r per unit of p): with the best strategy for
        the group (``threshold`` None) or with every free state decided by ``threshold``."""
        nets = self.nets(commission_bps, ratio)
        if threshold is None:
            chosen = np.where(self.free, nets.max(axis=1), nets[:, STAND])
        else:
            chosen = np.take_along_axis(nets, self.threshold_actions(threshold)[:, None], axis=1)[:, 0]
        return float(1 + (self.weight @ chosen) / (1 + ratio))


@dataclass(frozen=True)
class Collusion:
    """The best a group can do on one seat under a table's settings and a decision rule."""

    worst_pair_rtp: float  # the group's best return per unit staked together
    ratio: float | None  # banker-side stake per unit of player-side stake reaching it (None: the banker side alone)
    strategy: str  # "best" (the group's own Draw/Stand), or "threshold N" (the default threshold decides)
    rule: Rule
    player_alone: float  # the decider alone, with the best strategy for the player side
    at_even_stakes: float  # the group with equal stakes on both sides, with its best strategy

    def as_dict(self) -> dict[str, object]:
        return {
            "worst_pair_rtp": round(self.worst_pair_rtp, 6),
            "ratio": None if self.ratio is None else round(self.ratio, 6),
            "strategy": self.strategy,
            "rule": self.rule,
            "player_alone": round(self.player_alone, 6),
            "at_even_stakes": round(self.at_even_stakes, 6),
        }


def worst_pair(
    states: States, commission_bps: int, threshold: int, min_stake: int, max_stake: int, rule: Rule = "guarded"
) -> Collusion:
    """The best return per unit staked together any group reaches on one seat: every stake ratio the table allows
    (1–``max_stake`` / ``min_stake`` on each side) under ``rule``, every strategy the rule leaves the decider."""
    if not 0 <= commission_bps <= 10_000:
        raise ValueError(f"commission_bps must be 0–10000, got {commission_bps}")
    if not 1 <= min_stake <= max_stake:
        raise ValueError(f"need 1 ≤ min_stake ≤ max_stake, got {min_stake}/{max_stake}")
    alone = states.group_return(commission_bps, 0.0, None)
    even = states.group_return(commission_bps, 1.0, None)
    widest = max_stake / min_stake
    candidates: list[tuple[float, float | None, str]] = [(alone, 0.0, "best")]
    if rule == "guarded":
        candidates.append((even, 1.0, "best"))
        banker_alone = banker_side(states, commission_bps, threshold)
        candidates.append((banker_alone, None, f"threshold {threshold}"))
    else:
        candidates.append((states.group_return(commission_bps, widest, None), widest, "best"))
    rtp, ratio, strategy = max(candidates, key=lambda item: item[0])
    return Collusion(rtp, ratio, strategy, rule, alone, even)


def banker_side(states: States, commission_bps: int, threshold: int) -> float:
    """A banker-side wager's return when the default threshold decides the seat."""
    keep = 1 - commission_bps / 10_000
    actions = states.threshold_actions(threshold)[:, None, None]
    chosen = np.take_along_axis(states.values, np.repeat(actions, 4, axis=2), axis=1)[:, 0, :]
    return float(1 + states.weight @ (keep * chosen[:, BW] + chosen[:, BL]))


def least_commission(
    states: States, threshold: int, min_stake: int, max_stake: int, rule: Rule = "guarded", step: int = 25
) -> int | None:
    """The least commission (a multiple of ``step`` bps) under which no group reaches 100 %."""
    return next(
        (
            bps
            for bps in range(0, 10_001, step)
            if worst_pair(states, bps, threshold, min_stake, max_stake, rule).worst_pair_rtp < 1
        ),
        None,
    )


def table_least_commission(threshold: int, min_stake: int, max_stake: int, rule: Rule = "guarded") -> int | None:
    """``least_commission`` on the kept table, computed once per answer (under the guarded rule the stakes do not
    matter: every table of one threshold shares it)."""
    if rule == "guarded":
        min_stake = max_stake = 1
    return _kept_least_commission(threshold, min_stake, max_stake, rule)


@cache
def _kept_least_commission(threshold: int, min_stake: int, max_stake: int, rule: Rule) -> int | None:
    return least_commission(kept(), threshold, min_stake, max_stake, rule)


# ---- the exact table ------------------------------------------------------------------------------------------


def _key(low: int, high: int, up: int) -> tuple[int, int, bool, int, int]:
    """A state's class: the seat's ranks (low, high), suited, the up-card's rank, and how its suit relates to the
    seat's (0 none, 1 the lower card's, 2 the higher card's; a pair's suits count as one relation, 1)."""
    suited = low % 4 == high % 4
    relation = 0
    if up % 4 == low % 4:
        relation = 1
    elif up % 4 == high % 4:
        relation = 1 if low // 4 == high // 4 else 2
    return low // 4, high // 4, suited, up // 4, relation


def classes() -> tuple[list[tuple[int, int, int]], list[int]]:
    """One representative (seat low card, seat high card, up card) per class, and how many of the 52·51/2·50
    (seat pair, up card) deals fall in it."""
    found: dict[tuple[int, int, bool, int, int], tuple[tuple[int, int, int], int]] = {}
    for low, high in itertools.combinations(range(52), 2):  # low < high: by rank, then suit
        for up in range(52):
            if up in (low, high):
                continue
            key = _key(low, high, up)
            first, count = found.get(key, ((low, high, up), 0))
            found[key] = (first, count + 1)
    representatives = [first for first, _ in found.values()]
    counts = [count for _, count in found.values()]
    return representatives, counts


@cache
def _triples() -> npt.NDArray[np.int64]:
    """Every ordered (banker's face-down card, seat's third card, banker's third card) from 49 unseen cards."""
    index = np.array(list(itertools.permutations(range(49), 3)), dtype=np.int64)
    return index


def state_values(low: int, high: int, up: int, triples: npt.NDArray[np.int64] | None = None) -> Floats:
    """(2, 4): a unit wager's expected wins and losses on each side under Stand and Draw, every unseen card
    enumerated (or only ``triples``, indexes into the 49 unseen). Where the banker has Pok nobody draws."""
    unseen = np.array([c for c in range(52) if c not in (low, high, up)], dtype=np.int64)
    cards = unseen[_triples() if triples is None else triples]
    hidden, third, banker_third = cards[:, 0], cards[:, 1], cards[:, 2]
    n = len(cards)
    banker_two = (POINTS[up // 4] + POINTS[hidden // 4]) % 10
    banker_pok = banker_two >= 8
    banker_draws = ~banker_pok & (banker_two <= 5)
    ups = np.full(n, up)
    banker = hands(np.column_stack([ups, hidden, np.where(banker_draws, banker_third, -1)]))
    values = np.zeros((2, 4))
    seat_points = (POINTS[low // 4] + POINTS[high // 4]) % 10
    for action in (STAND, DRAW):
        draws = ~banker_pok & (action == DRAW)
        if seat_points >= 8:
            draws = np.zeros(n, dtype=bool)  # Pok never draws
        elif seat_points == 0:
            draws = ~banker_pok  # 0 always draws
        seat = hands(np.column_stack([np.full(n, low), np.full(n, high), np.where(draws, third, -1)]))
        (pw, pl), (bw, bl) = wins_and_losses(banker, seat).values()
        values[action] = [pw.mean(), pl.mean(), bw.mean(), bl.mean()]
    return values


def build(limit: int | None = None) -> States:
    """The exact table (``limit``: only the first classes, for a quick check)."""
    representatives, counts = classes()
    if limit is not None:
        representatives, counts = representatives[:limit], counts[:limit]
    values = np.array([state_values(*rep) for rep in representatives])
    points = np.array([(POINTS[low // 4] + POINTS[high // 4]) % 10 for low, high, _ in representatives])
    weight = np.array(counts, dtype=np.float64)
    return States(weight / weight.sum(), points, values)


def save(states: States, path: Path = TABLE) -> None:
    np.savez_compressed(path, weight=states.weight, points=states.points, values=states.values)


@cache
def kept(path: Path = TABLE) -> States:
    """The table as built and kept with the code."""
    with np.load(path) as data:
        return States(data["weight"], data["points"].astype(np.int64), data["values"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compute every decision state exactly and write the table.")
    parser.add_argument("--out", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    states = build()
    save(states, args.out)
    print(f"wrote {args.out}: {len(states.weight):,} states in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
