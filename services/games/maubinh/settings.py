"""Room settings, validated in one place, and the largest loss they allow. Amounts are in units."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from enum import StrEnum
from typing import Any, Final

from services.games.maubinh.errors import SettingsError
from services.games.maubinh.ranking import BONUS
from services.games.settings import checked_overrides

# (low, high) of each whole-number setting; the highs keep a room's largest loss far inside the ledger's integers
BOUNDS: Final[dict[str, tuple[int, int]]] = {
    "scoop_multiplier": (1, 10),
    "optional_instant_win_units": (1, 100),
    "commission_bps": (0, 10_000),
}


class InstantWin(StrEnum):
    """The dealt hands that win at once (*mậu binh thắng trắng*), strongest first.

    The spec orders only the first two; the optional ones follow the order the apps that use them
    list them in, one colour first, three straights last.
    """

    RONG_CUON = "rong_cuon"  # 2 through A, one suit
    SANH_RONG = "sanh_rong"  # 2 through A
    ONE_COLOUR = "one_colour"  # 12 or 13 cards red, or 12 or 13 black
    FIVE_PAIRS_THREE_OF_A_KIND = "five_pairs_three_of_a_kind"
    SIX_PAIRS = "six_pairs"
    THREE_FLUSHES = "three_flushes"
    THREE_STRAIGHTS = "three_straights"

    @property
    def strength(self) -> int:
        """Higher is stronger."""
        return len(INSTANT_WINS) - INSTANT_WINS.index(self)


INSTANT_WINS: Final[tuple[InstantWin, ...]] = tuple(InstantWin)
ALWAYS_ON: Final = {InstantWin.RONG_CUON: 26, InstantWin.SANH_RONG: 13}
OPTIONAL_INSTANT_WINS: Final = tuple(kind for kind in INSTANT_WINS if kind not in ALWAYS_ON)


@dataclass(frozen=True, slots=True)
class MauBinhSettings:
    """One room's settings.

    ``commission_bps`` (basis points of a player's net winnings for the hand) is validated here
    but applied where units become money: see ``scoring.money``.
    """

    scoop_multiplier: int = 3
    optional_instant_wins: tuple[InstantWin, ...] = ()
    optional_instant_win_units: int = 6
    commission_bps: int = 0

    def __post_init__(self) -> None:
        for name, (low, high) in BOUNDS.items():
            value = getattr(self, name)
            if type(value) is not int or not low <= value <= high:
                raise SettingsError(f"setting {name}: expected a whole number {low}–{high}, got {value!r}")
        kinds = self.optional_instant_wins
        if not isinstance(kinds, tuple) or not all(kind in OPTIONAL_INSTANT_WINS for kind in kinds):
            raise SettingsError(
                f"setting optional_instant_wins: expected kinds among {', '.join(OPTIONAL_INSTANT_WINS)}, got {kinds!r}"
            )
        if len(set(kinds)) != len(kinds):
            raise SettingsError(f"setting optional_instant_wins: a kind is listed twice in {list(kinds)}")

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, Any]) -> MauBinhSettings:
        """Defaults overridden by name; unknown names are refused."""
        values = checked_overrides(cls, overrides, SettingsError)
        if "optional_instant_wins" in values:
            kinds = values["optional_instant_wins"]
            if not isinstance(kinds, list | tuple) or not all(isinstance(kind, str) for kind in kinds):
                raise SettingsError(f"setting optional_instant_wins: expected a list of kind names, got {kinds!r}")
            for kind in kinds:
                if kind not in OPTIONAL_INSTANT_WINS:
                    always = " (always on)" if kind in ALWAYS_ON else ""
                    raise SettingsError(
                        f"setting optional_instant_wins: {kind!r} is not an optional kind{always} "
                        f"(optional: {', '.join(OPTIONAL_INSTANT_WINS)})"
                    )
            values["optional_instant_wins"] = tuple(InstantWin(kind) for kind in kinds)
        return replace(cls(), **values)

    def to_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values["optional_instant_wins"] = [str(kind) for kind in self.optional_instant_wins]
        return values

    def enabled(self, kind: InstantWin) -> bool:
        return kind in ALWAYS_ON or kind in self.optional_instant_wins

    def instant_units(self, kind: InstantWin) -> int:
        return ALWAYS_ON.get(kind, self.optional_instant_win_units)

    @property
    def largest_loss_per_opponent(self) -> int:
        """The most one opponent can take in a hand (spec "Room economics").

        Either the best instant win enabled, or every chi lost at its highest bonus with the scoop
        multiplier (a scoop or a binh lủng); a leaver pays less than the latter, with no multiplier.
        """
        instant = max(self.instant_units(kind) for kind in INSTANT_WINS if self.enabled(kind))
        chi = sum(max(bonus.values()) for bonus in BONUS) * self.scoop_multiplier
        return max(instant, chi)

    def largest_loss(self, players: int) -> int:
        """The balance a player must hold to join a hand of ``players`` players."""
        return (players - 1) * self.largest_loss_per_opponent
