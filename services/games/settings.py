"""What every game's settings object shares: overrides by name, with unknown names refused; the chips a table's page
offers."""

from __future__ import annotations

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
    """Up to ``most`` chips for a table's page: its minimum stake, then 1-2-5 × 10ⁿ up to its maximum."""
    series = [m * 10**e for e in range(16) for m in (1, 2, 5)]
    return tuple(([min_stake] + [value for value in series if min_stake < value <= max_stake])[:most])
