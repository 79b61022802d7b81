"""What every game's settings object shares: overrides by name, with unknown names refused; the chips a table's page
offers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any


def checked_overrides(settings_class: type[Any], overrides: Any, error: type[ValueError]) -> dict[str, Any]:
    """``overrides`` as a dict, or ``error`` naming what is wrong: not an object, or names it does not know."""
    if not isinstance(overrides, Mapping):
        raise error(f"settings must be an object of name → value, got {overrides!r}")
    known = {field.name for field in fields(settings_class)}
    unknown = sorted(map(str, set(overrides) - known))
    if unknown:
        raise error(f"unknown setting(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return dict(overrides)


def chips_between(min_stake: int, max_stake: int, most: int = 6) -> tuple[int, ...]:
    """Up to ``most`` chips for a table's page, a 1-2-5 × 10ⁿ ladder around its typical stakes.

    The ladder runs from the minimum stake (a chip itself) to the maximum; when it holds more than ``most`` values,
    the chips are the ``most`` of them around the limits' geometric mean — 1 and 1,000,000 give 200 … 10,000, not
    the 1 … 50 at the very bottom that no one bets (a page showing THB 0.01–0.50 to a THB 10,000 balance).
    """
    series = [m * 10**e for e in range(19) for m in (1, 2, 5)]
    ladder = [min_stake] + [value for value in series if min_stake < value <= max_stake]
    if len(ladder) <= most:
        return tuple(ladder)
    middle = math.sqrt(min_stake * max_stake)
    centre = min(range(len(ladder)), key=lambda index: abs(math.log(ladder[index] / middle)))
    start = max(0, min(centre - (most - 1) // 2, len(ladder) - most))
    return tuple(ladder[start : start + most])
