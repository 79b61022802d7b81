"""Experience points (*điểm kinh nghiệm*, ĐKN) and room tiers.

Every player starts at 0 and gains the room's award for each round played to its end; a player who
leaves mid-round gains nothing for it. A room tier admits players whose ĐKN reaches its minimum.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from services.games.tienlen.errors import RoomEntryError, SettingsError

LARGEST_POINTS: Final = 10**12


@dataclass(frozen=True, slots=True)
class RoomTier:
    name: str
    min_experience: int
    award: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SettingsError(f"room tier name must be a non-empty string, got {self.name!r}")
        for field in ("min_experience", "award"):
            value = getattr(self, field)
            if type(value) is not int or not 0 <= value <= LARGEST_POINTS:
                raise SettingsError(f"room tier {self.name}: {field} must be a whole number ≥ 0, got {value!r}")

    def admit(self, player: str, experience: int) -> None:
        """Raise ``RoomEntryError`` unless ``player`` with ``experience`` ĐKN may enter this tier's rooms."""
        if experience < self.min_experience:
            raise RoomEntryError(
                f"{player} cannot enter a {self.name} room: it needs {self.min_experience} experience points, "
                f"{player} has {experience}"
            )


DEFAULT_TIERS: Final = (
    RoomTier("tier 1", min_experience=0, award=1),
    RoomTier("tier 2", min_experience=100, award=2),
    RoomTier("tier 3", min_experience=1000, award=5),
)


def award_round(
    experience: Mapping[str, int], tier: RoomTier, seated: Iterable[str], left: Iterable[str] = ()
) -> dict[str, int]:
    """ĐKN after a round: every seated player who did not leave mid-round gains ``tier.award``."""
    leavers = set(left)
    updated = dict(experience)
    for player in seated:
        if player not in leavers:
            updated[player] = updated.get(player, 0) + tier.award
    return updated
