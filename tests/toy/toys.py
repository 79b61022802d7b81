"""What the toy games share: settings that are whole numbers, read from a table's raw settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields, replace
from typing import Any, TypeVar

from services.games.base import GameSettingsError

S = TypeVar("S")


def settings_of(kind: type[S], raw: Mapping[str, Any]) -> S:
    """The toy's settings (a dataclass of defaults) with the table's values; an unknown name is refused."""
    known = [field.name for field in fields(kind)]  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise GameSettingsError(f"unknown setting {unknown[0]!r} (known: {', '.join(known)})")
    return replace(kind(), **raw)  # type: ignore[type-var]


def whole_numbers(settings: Any, most: int = 10**9) -> None:
    """Every setting is a whole number 1–``most``."""
    for name, value in asdict(settings).items():
        if type(value) is not int or not 0 < value <= most:
            raise GameSettingsError(f"setting {name}: expected a whole number 1–10^9, got {value!r}")
