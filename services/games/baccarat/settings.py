"""A baccarat table's settings, checked: a bad one is refused naming the setting and its range."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from services.games import coups


@dataclass(frozen=True)
class BaccaratSettings:
    decks: int = 8
    banker_commission_bps: int = 500  # the house's cut of a Banker win, in basis points (5 %)
    tie_pays: int = 8
    pair_pays: int = 11
    super6: bool = False  # no commission; a Banker win on 6 pays 1:2
    min_stake: int = 100
    max_stake: int = 1_000_000
    betting_ms: int = 15_000

    def __post_init__(self) -> None:
        ranges = {
            "decks": (1, 8),
            "banker_commission_bps": (0, 2_500),
            "tie_pays": (1, 100),
            "pair_pays": (1, 100),
            "min_stake": (1, coups.LARGEST_STAKE),
            "max_stake": (1, coups.LARGEST_STAKE),
            "betting_ms": (1_000, 120_000),
        }
        coups.check_settings(self, ranges, ("super6",))

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> BaccaratSettings:
        return coups.settings_of(cls, [field.name for field in fields(cls)], raw)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
