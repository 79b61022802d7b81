"""Round transcripts: a settled round written as plain JSON, and its recomputation.

A transcript holds the cards in the order they left the shoe, the final draw/stand choices of
seats whose decider could choose, the deciders' auto-draw thresholds by seat, the wagers, the
insurance purchases and any table-setting overrides. ``replay`` rebuilds the round through the
engine — the same code the live table runs — so operators and tests recompute exactly what the
table did.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.cards import Card, CardError
from services.games.pokdeng.engine import (
    AwaitingBets,
    AwaitingCard,
    AwaitingDecision,
    AwaitingInsurance,
    PokDengRound,
    describe,
)
from services.games.pokdeng.errors import PokDengError, TranscriptError
from services.games.pokdeng.events import CloseBetting, PlaceWager
from services.games.pokdeng.model import SEATS, Position, Side, parse_seat
from services.games.pokdeng.settings import TableSettings
from services.games.pokdeng.settlement import RoundResult

KEYS = frozenset({"cards", "decisions", "thresholds", "wagers", "insurance", "settings"})
WAGER_KEYS = frozenset({"id", "player", "side", "seat", "stake"})
CHOICES = {"draw": True, "stand": False}


def replay(transcript: Any) -> RoundResult:
    """Recompute one round; a ``TranscriptError`` names what is wrong with it."""
    try:
        return _replay(transcript)
    except TranscriptError:
        raise
    except (PokDengError, CardError) as error:
        raise TranscriptError(str(error)) from None


def result_to_dict(result: RoundResult) -> dict[str, Any]:
    """The JSON form of a result: hands, outcomes, and nets per wager, insurance and player."""
    return {
        "hands": {
            str(position): {
                "cards": [str(card) for card in hand.cards],
                "points": hand.points,
                "rank": int(hand.rank),
                "multiplier": hand.multiplier,
            }
            for position, hand in result.hands.items()
        },
        "outcomes": {str(seat): str(outcome) for seat, outcome in result.outcomes.items()},
        "wagers": {item.wager.wager_id: item.net for item in result.wagers},
        "insurance": {item.player: item.net for item in result.insurance},
        "players": result.player_nets(),
    }


def _replay(transcript: Any) -> RoundResult:
    if not isinstance(transcript, Mapping):
        raise TranscriptError(f"a transcript must be a JSON object, got {type(transcript).__name__}")
    unknown = sorted(set(transcript) - KEYS)
    if unknown:
        raise TranscriptError(f"unknown transcript key(s): {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    settings = TableSettings.from_mapping(_mapping(transcript, "settings"))
    cards = _cards(transcript.get("cards"))
    decisions = _decisions(_mapping(transcript, "decisions"))
    round_ = PokDengRound(settings)
    seen_ids: dict[str, int] = {}
    for index, raw in enumerate(_list(transcript, "wagers")):
        wager = _wager(index, raw)
        if wager.wager_id in seen_ids:
            raise TranscriptError(
                f"wagers[{index}]: duplicate id {wager.wager_id!r} (already wagers[{seen_ids[wager.wager_id]}])"
            )
        seen_ids[wager.wager_id] = index
        try:
            round_.apply(wager)
        except PokDengError as error:
            raise TranscriptError(f"wagers[{index}]: {error}") from None
    seat_thresholds = _seat_thresholds(round_, _mapping(transcript, "thresholds"))
    round_.apply(CloseBetting(seat_thresholds=seat_thresholds))
    insurance = _mapping(transcript, "insurance")
    pending = list(cards)
    decided: set[Position] = set()
    while round_.result is None:
        match round_.expecting:
            case AwaitingCard():
                if not pending:
                    raise TranscriptError(
                        f"too few cards: {len(cards)} given, the round still waits for {describe(round_.expecting)}"
                    )
                round_.deal(pending.pop(0))
            case AwaitingInsurance():
                for player, amount in insurance.items():
                    round_.buy_insurance(str(player), amount)
                insurance = {}
                round_.close_insurance()
            case AwaitingDecision(seat=seat):
                if seat in decisions:
                    round_.decide(seat, decisions[seat])
                    decided.add(seat)
                else:
                    round_.decision_timeout(seat)
            case AwaitingBets() | None:
                raise TranscriptError(f"round stopped unexpectedly: {round_.state()}")
    if pending:
        extra = " ".join(map(str, pending))
        raise TranscriptError(f"too many cards: {len(pending)} left after the round settled ({extra})")
    if insurance:
        up_card = round_.hands[Position.BANKER][0]
        raise TranscriptError(
            f"insurance was not offered (banker's first card {up_card} is not an 8 or 9): {', '.join(insurance)}"
        )
    undecidable = sorted(set(decisions) - decided)
    if undecidable:
        raise TranscriptError(
            f"decision for seat {', '.join(undecidable)} is inconsistent: that seat's decider could not choose "
            "(no player-side wager, Pok, 0 points, or the round settled early)"
        )
    return round_.result


def _mapping(transcript: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = transcript.get(key, {})
    if not isinstance(value, Mapping):
        raise TranscriptError(f"{key} must be an object, got {value!r}")
    return value


def _list(transcript: Mapping[str, Any], key: str) -> list[Any]:
    value = transcript.get(key, [])
    if not isinstance(value, list):
        raise TranscriptError(f"{key} must be a list, got {value!r}")
    return value


def _cards(codes: Any) -> list[Card]:
    if not isinstance(codes, list):
        raise TranscriptError(f"cards must be a list of card codes, got {codes!r}")
    cards: list[Card] = []
    for index, code in enumerate(codes):
        try:
            card = Card.from_code(code)
        except CardError as error:
            raise TranscriptError(f"cards[{index}]: {error}") from None
        if card in cards:
            raise TranscriptError(f"cards[{index}]: duplicate card {card} (already cards[{cards.index(card)}])")
        cards.append(card)
    return cards


def _seat(text: Any, where: str) -> Position:
    try:
        return parse_seat(text)
    except ValueError as error:
        raise TranscriptError(f"{where}: {error}") from None


def _decisions(raw: Mapping[str, Any]) -> dict[Position, bool]:
    decisions: dict[Position, bool] = {}
    for seat, choice in raw.items():
        if not isinstance(choice, str) or choice not in CHOICES:
            raise TranscriptError(f"decisions[{seat!r}]: expected 'draw' or 'stand', got {choice!r}")
        decisions[_seat(seat, "decisions")] = CHOICES[choice]
    return decisions


def _wager(index: int, raw: Any) -> PlaceWager:
    where = f"wagers[{index}]"
    if not isinstance(raw, Mapping):
        raise TranscriptError(f"{where} must be an object, got {raw!r}")
    missing = sorted(WAGER_KEYS - set(raw))
    if missing:
        raise TranscriptError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(set(raw) - WAGER_KEYS)
    if unknown:
        raise TranscriptError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
    for key in ("id", "player"):
        if not isinstance(raw[key], str) or not raw[key]:
            raise TranscriptError(f"{where}: {key} must be a non-empty string, got {raw[key]!r}")
    if not isinstance(raw["side"], str) or raw["side"] not in ("player", "banker"):
        raise TranscriptError(f"{where}: side must be 'player' or 'banker', got {raw['side']!r}")
    stake = raw["stake"]
    if type(stake) is not int or stake <= 0:
        raise TranscriptError(f"{where}: stake must be a positive whole number, got {stake!r}")
    return PlaceWager(raw["id"], raw["player"], Side(raw["side"]), _seat(raw["seat"], where), stake)


def _seat_thresholds(round_: PokDengRound, by_seat: Mapping[str, Any]) -> dict[Position, int]:
    """A timed-out seat uses its own entry, else the table default; seats without a decider ignore theirs."""
    given: dict[Position, Any] = {_seat(seat_text, "thresholds"): value for seat_text, value in by_seat.items()}
    thresholds: dict[Position, int] = {}
    for seat in SEATS:
        if round_.decider(seat) is None:
            continue
        value = given.get(seat, round_.settings.default_threshold)
        if type(value) is not int or not 1 <= value <= 5:
            raise TranscriptError(f"thresholds[{str(seat)!r}]: expected a whole number 1–5, got {value!r}")
        thresholds[seat] = value
    return thresholds
