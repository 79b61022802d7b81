"""Room settings: the penalty table and the instant wins, validated in one place. Amounts are in units."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from enum import StrEnum
from typing import Any, Final

from services.games.settings import checked_overrides
from services.games.tienlen.errors import SettingsError

LARGEST_AMOUNT: Final = 1_000  # units; a bound so a room's largest loss stays far inside the ledger's integers


class InstantWin(StrEnum):
    """The hands that win at once (*tới trắng*), strongest first."""

    DRAGON = "dragon"  # 3 through A
    FOUR_TWOS = "four_twos"
    FIVE_CONSECUTIVE_PAIRS = "five_consecutive_pairs"
    SIX_PAIRS = "six_pairs"

    @property
    def strength(self) -> int:
        """Higher is stronger."""
        return len(INSTANT_WINS) - INSTANT_WINS.index(self)


INSTANT_WINS: Final[tuple[InstantWin, ...]] = tuple(InstantWin)


@dataclass(frozen=True, slots=True)
class TienLenSettings:
    """One room's settings. Penalties (*thúi*) and chop values share the table below."""

    black_two: int = 3
    red_two: int = 6
    three_consecutive_pairs: int = 6
    four_of_a_kind: int = 9
    four_consecutive_pairs: int = 12
    cong: int = 26  # paid by a player who never played a card (*cóng*): 13 cards × 2
    instant_win: int = 26  # paid to an instant winner by every other player
    instant_wins: tuple[InstantWin, ...] = INSTANT_WINS

    def __post_init__(self) -> None:
        for field in fields(self):
            if field.name == "instant_wins":
                continue
            value = getattr(self, field.name)
            if type(value) is not int or not 0 <= value <= LARGEST_AMOUNT:
                raise SettingsError(f"setting {field.name}: expected a whole number 0–{LARGEST_AMOUNT}, got {value!r}")
        if not isinstance(self.instant_wins, tuple):
            raise SettingsError(f"setting instant_wins: expected a list of kinds, got {self.instant_wins!r}")
        known = ", ".join(INSTANT_WINS)
        for kind in self.instant_wins:
            if kind not in INSTANT_WINS:
                raise SettingsError(f"setting instant_wins: unknown kind {kind!r} (known: {known})")
        if len(set(self.instant_wins)) != len(self.instant_wins):
            raise SettingsError(f"setting instant_wins: a kind is listed twice in {list(self.instant_wins)}")

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, Any]) -> TienLenSettings:
        """Defaults overridden by name; unknown names are refused."""
        values = checked_overrides(cls, overrides, SettingsError)
        if "instant_wins" in values:
            kinds = values["instant_wins"]
            if not isinstance(kinds, list | tuple) or not all(isinstance(kind, str) for kind in kinds):
                raise SettingsError(f"setting instant_wins: expected a list of kind names, got {kinds!r}")
            unknown_kinds = [kind for kind in kinds if kind not in INSTANT_WINS]
            if unknown_kinds:
                raise SettingsError(
                    f"setting instant_wins: unknown kind {unknown_kinds[0]!r} (known: {', '.join(INSTANT_WINS)})"
                )
            values["instant_wins"] = tuple(InstantWin(kind) for kind in kinds)
        return replace(cls(), **values)

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["instant_wins"] = [str(kind) for kind in self.instant_wins]
        return values
