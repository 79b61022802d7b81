"""What a round is to its readers and writers, besides its engine: the service's answer after a call (``Applied``),
the table facts that never change, and the round's stored fields as every view shows them."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from services.cards import Card
from services.games.base import Expecting, Game
from services.rounds import checks
from services.rounds.clock import aware
from services.rounds.errors import NotFoundError
from services.rounds.models import Round
from services.wallet.seamless import INTERNAL

SETTINGS_CACHE = 1024  # rounds whose parsed settings are kept
ADVANCED = "engines"  # session.info key: engines this transaction advanced, cached after it commits

Along = Callable[[Session, Round], None]  # work done in an operator action's own transaction, before it


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What never changes about a table: its game, its currency and whose wallet holds its players' money."""

    game: str
    currency: str
    wallet: str = INTERNAL


@dataclass
class Applied:
    """A round after a service call: what changed, what it expects, and its views (computed once here).

    ``engine`` is the service's own engine object: read it at once, never keep or change it.
    """

    round_id: str
    game: str
    phase: str
    events: list[Any]
    log_length: int  # the round's log after the call
    window_closes_at: datetime | None
    finished_at: datetime | None  # settled or voided
    expecting: Expecting
    cards: tuple[Card, ...]  # dealt, in shoe order
    hidden: frozenset[Card]  # dealt cards the public may not see yet
    header: dict[str, Any]  # the public state's round fields
    views: dict[str, dict[str, Any]] = field(default_factory=dict)  # "public" and "dealer"
    engine: Any = None
    verify: str = checks.OFF  # the round's shoe + camera cross-check
    verify_window_ms: int = 0
    checks: tuple[checks.OpenCheck, ...] = ()  # its checks not yet settled (pending, or waiting for an operator)
    result_pause_ms: int | None = None  # how long its result stays up (the table's; None: the controller's own)

    @property
    def public(self) -> dict[str, Any]:
        return self.header | self.views["public"] | _held(self.phase)


def stored_round(session: Session, round_id: str) -> Round:
    """The round, or ``NotFoundError`` naming it."""
    round_ = session.get(Round, round_id)
    if round_ is None:
        raise NotFoundError(f"round {round_id!r} does not exist")
    return round_


def advanced(
    session: Session, round_: Round, engine: Any, port: Game[Any, Any], view: dict[str, Any] | None = None
) -> None:
    """Note an engine this transaction holds at the round's log length: the cache gets it after the commit."""
    session.info.setdefault(ADVANCED, {})[round_.id] = (round_.log_length, engine, port, view)


def stored_result(port: Game[Any, Any], engine: Any) -> str:
    """What a settled round keeps for its readers: the game's own result, and each player's net in money (``nets``:
    what a player's history shows, whatever the game's result calls it)."""
    return json.dumps((port.result(engine) or {}) | {"nets": port.nets(engine)})


def result_nets(result: Any) -> dict[str, int]:
    """Each player's net in money from a stored result (``nets``; a Pok Deng round stored before it: ``players``)."""
    if not isinstance(result, dict):
        return {}
    nets: dict[str, int] = result.get("nets") or result.get("players") or {}
    return nets


def round_id_of(table_id: str, number: int) -> str:
    return f"{table_id}-{number}"


def table_of_round(round_id: str) -> str:
    """The table of a round id (``round_id_of``'s inverse: table ids may hold dashes, numbers do not)."""
    return round_id.rsplit("-", 1)[0]


def state_header(round_: Round) -> dict[str, Any]:
    """What the public state says of a round besides its engine's view (the controller publishes the same)."""
    return {
        "v": 1,
        "round_id": round_.id,
        "table_id": round_.table_id,
        "number": round_.number,
        "opened_at": aware(round_.opened_at).isoformat(),
        "betting_closes_at": aware(round_.betting_closes_at).isoformat(),
        "window_closes_at": aware(round_.window_closes_at).isoformat() if round_.window_closes_at else None,
        "video_ref": round_.video_ref,
    } | _shuffle(round_)


def as_seen(round_: Round, view: dict[str, Any]) -> dict[str, Any]:
    """A view of the round's engine under the round's own fields: what every reader of a round is given."""
    return state_header(round_) | view | _held(round_.phase)


def _held(phase: str) -> dict[str, Any]:
    """A round its cross-check holds says so, whatever its engine's phase: its result is not final yet."""
    return {"phase": checks.VERIFYING} if phase == checks.VERIFYING else {}


def _shuffle(round_: Round) -> dict[str, Any]:
    """A room dealt online: the commitment while the round runs, and the deck and salt once it is over."""
    if round_.shuffle_commitment is None:
        return {}
    if round_.settled_at is None and round_.voided_at is None:
        return {"shuffle": {"commitment": round_.shuffle_commitment}}
    deck = (round_.shuffle_deck or "").split(",")
    return {"shuffle": {"commitment": round_.shuffle_commitment, "deck": deck, "salt": round_.shuffle_salt}}
