"""The showdown: every pair of players compared chi by chi, and what each player wins or pays, in units.

Per pair, in order of precedence (spec "Scoring between two players" and "Instant wins"):

1. an instant win beats any other hand, a leaver's or a binh lủng one included, at its units; two
   instant wins: the stronger wins at its own units, equal ones tie. Nothing is compared chi by chi;
2. a player who left before the showdown loses every chi at the opponent's units, bonuses
   included, with no scoop multiplier; against a binh lủng opponent the leaver pays 1 unit per chi;
   two leavers tie;
3. a binh lủng hand loses every chi at the opponent's units with the scoop multiplier; two binh
   lủng hands tie;
4. otherwise each chi is won at the winner's units for it (its bonus, or 1) and a tie pays nothing;
   a player who wins all three chi (*sập 3 chi*) takes the sum times the scoop multiplier.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Final

from services.games.maubinh.cards import CARDS
from services.games.maubinh.errors import TableError
from services.games.maubinh.hand import Hand, Left, Seat
from services.games.maubinh.ranking import win_units
from services.games.maubinh.settings import InstantWin, MauBinhSettings

PLAYERS: Final = range(2, 5)
LOST_ALL: Final = (-1, -1, -1)


@dataclass(frozen=True, slots=True)
class PairResult:
    """Player ``a`` against player ``b``: ``units`` is what ``a`` wins from ``b`` (negative: ``a`` pays)."""

    a: str
    b: str
    chi: tuple[int, int, int] | None  # per chi 1 (a won), -1 (b won), 0 (tie); None when an instant win decided
    units: int
    scoop: bool  # the scoop multiplier was applied (sập 3 chi, binh lủng)
    instant: InstantWin | None  # the instant win that decided the pair (both hands' kind when they tie)

    def flipped(self) -> PairResult:
        chi = None if self.chi is None else (-self.chi[0], -self.chi[1], -self.chi[2])
        return PairResult(self.b, self.a, chi, -self.units, self.scoop, self.instant)


@dataclass(frozen=True, slots=True)
class TableResult:
    pairs: tuple[PairResult, ...]  # one per pair of players, in seating order
    totals: Mapping[str, int]  # what each player wins (negative: pays); they sum to zero
    instants: Mapping[str, InstantWin | None]  # the instant win each player holds under the room's settings


def all_three_units(hand: Hand) -> int:
    """What ``hand`` is paid for winning all three chi, before any multiplier."""
    return sum(win_units(chi, value) for chi, value in enumerate(hand.strengths))


def score_pair(a: str, sa: Seat, b: str, sb: Seat, settings: MauBinhSettings) -> PairResult:
    """The pair's result, from ``a``'s side."""
    return _pair(a, sa, _instant_of(sa, settings), b, sb, _instant_of(sb, settings), settings)


def _instant_of(seat: Seat, settings: MauBinhSettings) -> InstantWin | None:
    return seat.instant_win(settings) if isinstance(seat, Hand) else None


def _pair(
    a: str,
    sa: Seat,
    instant_a: InstantWin | None,
    b: str,
    sb: Seat,
    instant_b: InstantWin | None,
    settings: MauBinhSettings,
) -> PairResult:
    if instant_a is not None or instant_b is not None:
        return _instant(a, instant_a, b, instant_b, settings)
    if isinstance(sa, Left) or isinstance(sb, Left):
        return _leaver(a, sa, b, sb)
    if sa.mis_set or sb.mis_set:
        if sa.mis_set and sb.mis_set:
            return PairResult(a, b, (0, 0, 0), 0, False, None)
        if sa.mis_set:
            return PairResult(a, b, LOST_ALL, -all_three_units(sb) * settings.scoop_multiplier, True, None)
        return _pair(b, sb, None, a, sa, None, settings).flipped()
    return _showdown(a, sa, b, sb, settings)


def _instant(
    a: str, kind_a: InstantWin | None, b: str, kind_b: InstantWin | None, settings: MauBinhSettings
) -> PairResult:
    strength_a = kind_a.strength if kind_a else 0
    strength_b = kind_b.strength if kind_b else 0
    if strength_a == strength_b:
        return PairResult(a, b, None, 0, False, kind_a)
    if strength_a > strength_b:
        assert kind_a is not None
        return PairResult(a, b, None, settings.instant_units(kind_a), False, kind_a)
    assert kind_b is not None
    return PairResult(a, b, None, -settings.instant_units(kind_b), False, kind_b)


def _leaver(a: str, sa: Seat, b: str, sb: Seat) -> PairResult:
    if isinstance(sa, Left) and isinstance(sb, Left):
        return PairResult(a, b, (0, 0, 0), 0, False, None)
    if isinstance(sb, Left):
        return _leaver(b, sb, a, sa).flipped()
    assert isinstance(sb, Hand)
    paid = 3 if sb.mis_set else all_three_units(sb)  # 1 unit per chi to a binh lủng opponent
    return PairResult(a, b, LOST_ALL, -paid, False, None)


def _showdown(a: str, sa: Hand, b: str, sb: Hand, settings: MauBinhSettings) -> PairResult:
    outcome: list[int] = []
    units = 0
    for chi, (mine, theirs) in enumerate(zip(sa.strengths, sb.strengths, strict=True)):
        if mine > theirs:
            outcome.append(1)
            units += win_units(chi, mine)
        elif mine < theirs:
            outcome.append(-1)
            units -= win_units(chi, theirs)
        else:
            outcome.append(0)
    scoop = abs(sum(outcome)) == 3
    if scoop:
        units *= settings.scoop_multiplier
    return PairResult(a, b, (outcome[0], outcome[1], outcome[2]), units, scoop, None)


def score_table(seats: Mapping[str, Seat], settings: MauBinhSettings) -> TableResult:
    """Every pair's result and each player's total; refuses 1 or 5+ players and a card held twice."""
    players = list(seats)
    if len(players) not in PLAYERS:
        raise TableError(f"a table needs {PLAYERS.start}–{PLAYERS.stop - 1} players, got {len(players)}")
    holder: dict[int, str] = {}
    for player, seat in seats.items():
        if isinstance(seat, Hand):
            for card in seat.cards:
                if card in holder:
                    raise TableError(f"{CARDS[card].code()} is dealt twice ({holder[card]} and {player})")
                holder[card] = player
    instants = {player: _instant_of(seat, settings) for player, seat in seats.items()}
    pairs = tuple(
        _pair(a, seats[a], instants[a], b, seats[b], instants[b], settings) for a, b in combinations(players, 2)
    )
    totals = dict.fromkeys(players, 0)
    for pair in pairs:
        totals[pair.a] += pair.units
        totals[pair.b] -= pair.units
    return TableResult(pairs, totals, instants)


@dataclass(frozen=True, slots=True)
class Money:
    net: int  # minor units won (negative: paid), commission deducted
    commission: int


def money(totals: Mapping[str, int], unit: int, commission_bps: int) -> dict[str, Money]:
    """Units to minor units at ``unit`` per unit; a winner gives ``commission_bps`` of their net win, rounded down.

    The commission is taken on a player's net for the hand, not per pair, so a player who wins
    from one opponent what they pay another gives none. Rounding down favours the player, as in Pok Deng.
    """
    result = {}
    for player, units in totals.items():
        gross = units * unit
        commission = gross * commission_bps // 10_000 if gross > 0 else 0
        result[player] = Money(gross - commission, commission)
    return result
