"""Score files: a table's arranged hands as plain JSON in, every pair's result and each player's total out.

Input ``{"players": {name: {"chi1": [5 codes], "chi2": [5 codes], "chi3": [3 codes]} | {"left": true}},
"settings": {...}}``: a player who left before the showdown is written ``{"left": true}``, with no cards.
Output ``{"pairs": [{"a", "b", "chi", "units", "scoop", "instant"}], "players": {name: units},
"hands": {name: {"chi1", "chi2", "chi3", "mis_set", "instant", "left"}}}``: one pair per two
players in the order given, ``units`` what ``a`` wins from ``b``, ``chi`` null when an instant win
decided; a hand's chi are category names (null for a leaver). Bad input gives ``{"error": message}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from services.games.maubinh.cards import parse
from services.games.maubinh.errors import MauBinhError, TableError
from services.games.maubinh.hand import CHI_NAMES, LEFT, Hand, Seat
from services.games.maubinh.scoring import TableResult, score_table
from services.games.maubinh.settings import InstantWin, MauBinhSettings

KEYS: Final = frozenset({"players", "settings"})


def score(document: Any) -> tuple[dict[str, Seat], TableResult]:
    """The seats and the result of one score document; ``MauBinhError`` names what is wrong."""
    if not isinstance(document, Mapping):
        raise TableError(f"a table must be a JSON object, got {type(document).__name__}")
    unknown = sorted(map(str, set(document) - KEYS))
    if unknown:
        raise TableError(f"unknown table key(s): {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    if "players" not in document:
        raise TableError("missing table key: players")
    settings = MauBinhSettings.from_mapping(document.get("settings", {}))
    players = document["players"]
    if not isinstance(players, Mapping):
        raise TableError(f"players must be an object of name → hand, got {players!r}")
    seats = {str(name): _seat(str(name), entry) for name, entry in players.items()}
    return seats, score_table(seats, settings)


def _seat(name: str, entry: Any) -> Seat:
    where = f"players[{name!r}]"
    if isinstance(entry, Mapping) and set(entry) == {"left"} and entry["left"] is True:
        return LEFT
    if not isinstance(entry, Mapping) or set(entry) != set(CHI_NAMES):
        expected = '{"chi1": [5 codes], "chi2": [5 codes], "chi3": [3 codes]} or {"left": true}'
        raise TableError(f"{where}: expected {expected}, got {entry!r}")
    chi1, chi2, chi3 = (parse(entry[chi], f"{where}.{chi}") for chi in CHI_NAMES)
    return Hand.of(chi1, chi2, chi3, who=where)


def result_to_dict(seats: Mapping[str, Seat], result: TableResult) -> dict[str, Any]:
    return {
        "pairs": [
            {
                "a": pair.a,
                "b": pair.b,
                "chi": None if pair.chi is None else list(pair.chi),
                "units": pair.units,
                "scoop": pair.scoop,
                "instant": None if pair.instant is None else str(pair.instant),
            }
            for pair in result.pairs
        ],
        "players": dict(result.totals),
        "hands": {name: _hand_to_dict(seat, result.instants[name]) for name, seat in seats.items()},
    }


def _hand_to_dict(seat: Seat, instant: InstantWin | None) -> dict[str, Any]:
    if not isinstance(seat, Hand):
        return {**dict.fromkeys(CHI_NAMES), "mis_set": False, "instant": None, "left": True}
    return {
        **{name: category.label for name, category in zip(CHI_NAMES, seat.categories, strict=True)},
        "mis_set": seat.mis_set,
        "instant": None if instant is None else str(instant),
        "left": False,
    }


def score_to_dict(document: Any) -> dict[str, Any]:
    """The JSON answer for one table: its result, or ``{"error": message}``."""
    try:
        return result_to_dict(*score(document))
    except MauBinhError as error:
        return {"error": str(error)}
