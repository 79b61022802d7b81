"""What the house's coup games (baccarat, dragon tiger) share: a bet's outcome, and a replay transcript read with
one-line errors.

A transcript is ``{"cards": [codes in deal order], "bets": [{"on": spot, "stake": n}], "settings": {…}}``; every
problem is a ``TranscriptError`` naming the part that is wrong, and the answer for it is ``{"error": …}``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from services.cards import Card, CardError
from services.games.base import GameError, GameSettingsError

S = TypeVar("S")
KEYS = ("cards", "bets", "settings")
LARGEST_STAKE = 10**12


def check_settings(settings: Any, ranges: Mapping[str, tuple[int, int]], flags: Sequence[str]) -> None:
    """A coup table's settings: each number a whole number in its range, each flag true or false, the limits in
    order; ``GameSettingsError`` names the first that is not."""
    for name, (low, high) in ranges.items():
        value = getattr(settings, name)
        if type(value) is not int or not low <= value <= high:
            raise GameSettingsError(f"setting {name}: expected a whole number {low:,}–{high:,}, got {value!r}")
    for name in flags:
        if type(getattr(settings, name)) is not bool:
            raise GameSettingsError(f"setting {name}: expected true or false, got {getattr(settings, name)!r}")
    if settings.min_stake > settings.max_stake:
        raise GameSettingsError(f"settings: min_stake {settings.min_stake:,} is above max_stake {settings.max_stake:,}")


def settings_of(kind: Callable[..., S], known: Sequence[str], raw: Mapping[str, Any]) -> S:
    """``kind`` built from a table's raw settings; a name it does not know is refused."""
    unknown = sorted(set(raw) - set(known))
    if unknown:
        raise GameSettingsError(f"unknown setting {unknown[0]!r} (known: {', '.join(known)})")
    return kind(**raw)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one bet does on a finished coup: its net (+ won, − lost, the stake aside, after commission) and what
    the house kept of a win as commission."""

    net: int
    commission: int = 0


class TranscriptError(GameError):
    code = "invalid_transcript"


@dataclass(frozen=True)
class Bet:
    on: str
    stake: int


@dataclass(frozen=True)
class Transcript(Generic[S]):
    cards: list[Card]
    bets: list[Bet]
    settings: S


def read(
    transcript: Any, spots: Sequence[str], settings_of: Callable[[Mapping[str, Any]], S], decks_of: Callable[[S], int]
) -> Transcript[S]:
    if not isinstance(transcript, Mapping):
        raise TranscriptError(f"a transcript must be a JSON object, got {type(transcript).__name__}")
    unknown = sorted(map(str, set(transcript) - set(KEYS)))
    if unknown:
        raise TranscriptError(f"unknown transcript key(s): {', '.join(unknown)} (known: {', '.join(KEYS)})")
    raw_settings = transcript.get("settings", {})
    if not isinstance(raw_settings, Mapping):
        raise TranscriptError(f"settings must be an object, got {raw_settings!r}")
    settings = settings_of(raw_settings)
    cards = _cards(transcript.get("cards"), decks_of(settings))
    return Transcript(cards, _bets(transcript.get("bets", []), spots), settings)


def _cards(codes: Any, decks: int) -> list[Card]:
    if not isinstance(codes, list):
        raise TranscriptError(f"cards must be a list of card codes in deal order, got {codes!r}")
    cards = []
    for index, code in enumerate(codes):
        try:
            cards.append(Card.from_code(code))
        except CardError as error:
            raise TranscriptError(f"card #{index + 1}: {error}") from None
    over = [(card, count) for card, count in Counter(cards).items() if count > decks]
    if over:
        card, count = over[0]
        holds = "once" if decks == 1 else f"{decks} times"
        raise TranscriptError(f"card {card} is given {count} times; a shoe of {decks} deck(s) holds it {holds}")
    return cards


def _bets(bets: Any, spots: Sequence[str]) -> list[Bet]:
    if not isinstance(bets, list):
        raise TranscriptError(f"bets must be a list of {{'on', 'stake'}}, got {bets!r}")
    read = []
    for index, bet in enumerate(bets):
        if not isinstance(bet, Mapping) or set(bet) != {"on", "stake"}:
            raise TranscriptError(f"bet #{index + 1}: expected {{'on', 'stake'}}, got {bet!r}")
        on, stake = bet["on"], bet["stake"]
        if on not in spots:
            raise TranscriptError(f"bet #{index + 1}: no bet {on!r} (bets: {', '.join(spots)})")
        if type(stake) is not int or not 0 < stake <= LARGEST_STAKE:
            raise TranscriptError(f"bet #{index + 1}: a stake is a whole number 1–10^12 minor units, got {stake!r}")
        read.append(Bet(on, stake))
    return read


def answer(replay: Callable[[Any], dict[str, Any]]) -> Callable[[Any], dict[str, Any]]:
    """``replay`` as a CLI's answer: its result, or ``{"error": …}`` for a transcript it refuses."""

    def answered(transcript: Any) -> dict[str, Any]:
        try:
            return replay(transcript)
        except GameError as error:
            return {"error": str(error)}

    return answered
