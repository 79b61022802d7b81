"""Commands a round accepts and the frozen events it records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from services.games.tienlen.combos import Combination
from services.games.tienlen.settings import InstantWin


@dataclass(frozen=True, slots=True)
class Play:
    """``player`` plays ``cards`` (strengths, any order): in turn, or out of turn as a chop. ``timed_out``: played
    for them when their turn ran out (their lowest single card, leading)."""

    player: str
    cards: tuple[int, ...]
    timed_out: bool = field(default=False, compare=False, repr=False)  # how it came, not what it is


@dataclass(frozen=True, slots=True)
class Pass:
    """The player to act passes and is out of the trick (``timed_out``: for them, when their turn ran out)."""

    player: str
    timed_out: bool = field(default=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Leave:
    """``player`` leaves the round while it is played (``missed``: the room took them out after their turns ran out
    one after another). They play no more; the round goes on without them, and at its end they pay the winner as a
    player who never played a card (*cóng*), or what their hand would cost them as a loser if that is more."""

    player: str
    missed: bool = field(default=False, compare=False, repr=False)


Command = Play | Pass | Leave


@dataclass(frozen=True, slots=True)
class Played:
    player: str
    combination: Combination
    chop: bool
    out_of_turn: bool


@dataclass(frozen=True, slots=True)
class Passed:
    player: str


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    player: str
    missed: bool


@dataclass(frozen=True, slots=True)
class TrickWon:
    """Everyone else passed: ``player`` takes the trick and leads the next one."""

    player: str


@dataclass(frozen=True, slots=True)
class ChainSettled:
    """A chop chain (*chặt chồng*) ended: ``chopped``, the last player chopped, pays its total to ``by``."""

    by: str
    chopped: str
    cards: Combination
    units: int


@dataclass(frozen=True, slots=True)
class RoundResult:
    """How a round ended. ``payments`` are nets per player in units and sum to zero."""

    winner: str
    payments: Mapping[str, int]
    chops: tuple[ChainSettled, ...]
    instant_win: InstantWin | None
    cong: frozenset[str]
    left: frozenset[str] = frozenset()  # left while it was played: they paid as leavers


@dataclass(frozen=True, slots=True)
class RoundEnded:
    result: RoundResult


Event = Played | Passed | PlayerLeft | TrickWon | ChainSettled | RoundEnded
