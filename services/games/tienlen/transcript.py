"""Replay transcripts: a round written as plain JSON, and its result (see the spec's "Replay transcripts").

Input ``{"players": [...], "hands": {player: [13 codes]}, "starting_round": bool, "leader": player | null,
"plays": [{"player": p, "cards": [codes]} | {"player": p, "pass": true}], "settings": {...}}``. Output
``{"finished", "winner", "payments", "chops", "instant_win"}``; the first illegal play gives
``{"error", "play_index"}`` (``play_index`` null when the deal or the input is wrong).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.cards import CardError
from services.games.tienlen.cards import codes, parse
from services.games.tienlen.engine import TienLenRound
from services.games.tienlen.errors import TienLenError, TranscriptError
from services.games.tienlen.events import Command, Pass, Play
from services.games.tienlen.settings import TienLenSettings

KEYS = frozenset({"players", "hands", "starting_round", "leader", "plays", "settings"})
REQUIRED = ("players", "hands", "plays")


class PlayError(TranscriptError):
    """An illegal play; ``index`` is its place in ``plays``."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.index = index


def replay(transcript: Any) -> TienLenRound:
    """The round after every play; ``TranscriptError`` (``PlayError`` for a play) names what is wrong."""
    round_, plays = _read(transcript)
    for index, raw in enumerate(plays):
        command = _command(index, raw)
        try:
            round_.apply(command)
        except TienLenError as error:
            raise PlayError(f"plays[{index}]: {error}", index) from None
    return round_


def result_to_dict(round_: TienLenRound) -> dict[str, Any]:
    result = round_.result
    return {
        "finished": result is not None,
        "winner": result.winner if result else None,
        "payments": dict(round_.payments),
        "chops": [
            {"by": chop.by, "from": chop.chopped, "cards": codes(chop.cards.cards), "units": chop.units}
            for chop in round_.chops
        ],
        "instant_win": str(result.instant_win) if result and result.instant_win else None,
    }


def replay_to_dict(transcript: Any) -> dict[str, Any]:
    """The JSON answer for one transcript: its result, or its error with ``play_index``."""
    try:
        return result_to_dict(replay(transcript))
    except PlayError as error:
        return {"error": str(error), "play_index": error.index}
    except TranscriptError as error:
        return {"error": str(error), "play_index": None}


def _read(transcript: Any) -> tuple[TienLenRound, list[Any]]:
    if not isinstance(transcript, Mapping):
        raise TranscriptError(f"a transcript must be a JSON object, got {type(transcript).__name__}")
    unknown = sorted(map(str, set(transcript) - KEYS))
    if unknown:
        raise TranscriptError(f"unknown transcript key(s): {', '.join(unknown)} (known: {', '.join(sorted(KEYS))})")
    missing = [key for key in REQUIRED if key not in transcript]
    if missing:
        raise TranscriptError(f"missing transcript key(s): {', '.join(missing)}")
    players = transcript["players"]
    if not isinstance(players, list) or not all(isinstance(player, str) for player in players):
        raise TranscriptError(f"players must be a list of names, got {players!r}")
    starting_round = transcript.get("starting_round", False)
    if not isinstance(starting_round, bool):
        raise TranscriptError(f"starting_round must be true or false, got {starting_round!r}")
    leader = transcript.get("leader")
    if leader is not None and not isinstance(leader, str):
        raise TranscriptError(f"leader must be a player's name or null, got {leader!r}")
    if not starting_round and leader is None:
        raise TranscriptError("leader is required when starting_round is false (the previous round's winner)")
    try:
        settings = TienLenSettings.from_mapping(transcript.get("settings", {}))
        round_ = TienLenRound(
            players,
            _hands(transcript["hands"]),
            starting_round=starting_round,
            leader=leader,
            settings=settings,
        )
    except TienLenError as error:
        raise TranscriptError(str(error)) from None
    plays = transcript["plays"]
    if not isinstance(plays, list):
        raise TranscriptError(f"plays must be a list, got {plays!r}")
    return round_, plays


def _hands(raw: Any) -> dict[str, tuple[int, ...]]:
    if not isinstance(raw, Mapping):
        raise TranscriptError(f"hands must be an object of player → card codes, got {raw!r}")
    hands = {}
    for player, card_codes in raw.items():
        if not isinstance(card_codes, list):
            raise TranscriptError(f"hands[{player!r}] must be a list of card codes, got {card_codes!r}")
        try:
            hands[player] = parse(card_codes)
        except CardError as error:
            raise TranscriptError(f"hands[{player!r}]: {error}") from None
    return hands


def _command(index: int, raw: Any) -> Command:
    where = f"plays[{index}]"
    if not isinstance(raw, Mapping):
        raise PlayError(f"{where} must be an object, got {raw!r}", index)
    player = raw.get("player")
    if not isinstance(player, str):
        raise PlayError(f"{where}: player must be a name, got {player!r}", index)
    keys = set(raw) - {"player"}
    if keys == {"pass"} and raw["pass"] is True:
        return Pass(player)
    if keys == {"cards"} and isinstance(raw["cards"], list):
        try:
            return Play(player, parse(raw["cards"]))
        except CardError as error:
            raise PlayError(f"{where}: {error}", index) from None
    expected = '{"player", "cards": [codes]} or {"player", "pass": true}'
    raise PlayError(f"{where}: expected {expected}, got {raw!r}", index)
