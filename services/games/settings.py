"""What every game's settings object shares: overrides by name, with unknown names refused."""

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
