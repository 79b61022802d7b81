"""Table settings: every value the spec marks as a setting, validated in one place."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Final

from services.games.pokdeng.errors import SettingsError
from services.games.settings import checked_overrides, chips_between

LARGEST_LOSS_MULTIPLE: Final = 3  # the loss cap: nobody ever pays more than 3 × stake on one wager
THRESHOLDS: Final = range(1, 6)  # a player's auto-draw threshold is 1–5
LARGEST_STAKE: Final = 10**15  # minor units, as the API's amounts: stake × hold_multiple stays inside a BIGINT
HOUR_MS: Final = 3_600_000
LARGEST: Final = {  # so every sum and deadline made from a setting fits the database and the clock
    "hold_multiple": 1_000,
    "min_stake": LARGEST_STAKE,
    "max_stake": LARGEST_STAKE,
    "betting_window_ms": HOUR_MS,
    "insurance_window_ms": HOUR_MS,
    "decision_window_ms": HOUR_MS,
}
TYPES: Final[dict[str, type]] = {"bool": bool, "tuple[int, ...]": tuple, "str": str}
MAX_CHIPS: Final = 8
STREAM_URL: Final = re.compile(r"https?://[^\s\"'<>`]{1,504}")


@dataclass(frozen=True, slots=True)
class TableSettings:
    """One table's Pok Deng settings. Money is in minor units, durations in milliseconds."""

    hold_multiple: int = 3
    default_threshold: int = 4
    min_stake: int = 1
    max_stake: int = 1_000_000
    commission_bps: int = 0
    betting_window_ms: int = 15_000
    insurance_window_ms: int = 8_000
    decision_window_ms: int = 10_000
    # Camera-only tables cannot read a face-down card: the banker's second card is then dealt
    # face up after the insurance window.
    banker_second_card_after_insurance: bool = False
    # The player's page: the chips it offers (minor units; none given: made from the stake limits) and the
    # table's video stream, an http(s) URL played under the page's overlay (none: a placeholder).
    chips: tuple[int, ...] = ()
    stream_url: str = ""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            expected = TYPES.get(str(field.type), int)
            if type(value) is not expected:
                raise SettingsError(f"setting {field.name}: expected {expected.__name__}, got {value!r}")
        self._check_presentation()
        if self.hold_multiple < LARGEST_LOSS_MULTIPLE:
            raise SettingsError(
                f"setting hold_multiple: {self.hold_multiple} is below the largest possible loss "
                f"({LARGEST_LOSS_MULTIPLE} × stake)"
            )
        for name, high in LARGEST.items():
            if getattr(self, name) > high:
                raise SettingsError(f"setting {name}: {getattr(self, name)} is above its largest value {high:,}")
        if self.default_threshold not in THRESHOLDS:
            raise SettingsError(f"setting default_threshold: {self.default_threshold} is not within 1–5")
        if not 1 <= self.min_stake <= self.max_stake:
            raise SettingsError(
                f"settings min_stake/max_stake: need 1 ≤ min_stake ≤ max_stake, got {self.min_stake}/{self.max_stake}"
            )
        if not 0 <= self.commission_bps <= 10_000:
            raise SettingsError(f"setting commission_bps: {self.commission_bps} is not within 0–10000")
        for name in ("betting_window_ms", "insurance_window_ms", "decision_window_ms"):
            if getattr(self, name) <= 0:
                raise SettingsError(f"setting {name}: must be positive, got {getattr(self, name)}")

    def _check_presentation(self) -> None:
        if len(self.chips) > MAX_CHIPS:
            raise SettingsError(f"setting chips: at most {MAX_CHIPS} denominations, got {len(self.chips)}")
        for chip in self.chips:
            if type(chip) is not int or not self.min_stake <= chip <= self.max_stake:
                raise SettingsError(
                    f"setting chips: {chip!r} is not a whole number within the stake limits "
                    f"{self.min_stake}–{self.max_stake}"
                )
        if list(self.chips) != sorted(set(self.chips)):
            raise SettingsError(f"setting chips: list each denomination once, smallest first, got {list(self.chips)}")
        if self.stream_url and not STREAM_URL.fullmatch(self.stream_url):
            raise SettingsError(
                f"setting stream_url: expected an http(s) URL of at most 512 characters without spaces or quotes, "
                f"got {self.stream_url[:80]!r}"
            )

    def denominations(self) -> tuple[int, ...]:
        """The chips the player's page offers: the table's, or up to six of 1-2-5 × 10ⁿ from the minimum stake."""
        return self.chips or chips_between(self.min_stake, self.max_stake)

    @classmethod
    def from_mapping(cls, overrides: Mapping[str, Any]) -> TableSettings:
        """Defaults overridden by name; unknown names are refused."""
        given = checked_overrides(cls, overrides, SettingsError)
        if isinstance(given.get("chips"), list):  # JSON has no tuples
            given["chips"] = tuple(given["chips"])
        return replace(cls(), **given)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
