"""The rounds side of a game: its player actions, the end of its windows, what it stores at settlement.

A game's engine (``services.games.base.Game``) is pure; its ``Adapter`` is where the game meets
the database and the API: each ``Action`` is one player route (``POST /v1/rounds/{id}/{name}``)
with its request and answer schemas, and runs in the round service's transactions.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.games.base import Game, UnknownGameError, Window
from services.games.rooms import SEAT_STAKE, Freed, Leave, Short, Sit
from services.ledger import idempotency, void_holds
from services.ledger.holds import PendingHold, Resolution, pending_holds, resolve
from services.ledger.models import Hold, HoldResolution, HoldStatus
from services.rounds.errors import RoundError
from services.rounds.records import Applied, result_nets

if TYPE_CHECKING:
    from services.rounds.core import RoundCore
    from services.rounds.models import Round

# (service, player, round_id, body, idempotency key or None) -> the answer
Run = Callable[["RoundCore", str, str, Any, "str | None"], Any]
# the same, without blocking (an async endpoint awaits it): a future of the answer, or None where it would block
Soon = Callable[["RoundCore", str, str, Any, "str | None"], "Awaitable[Any] | None"]


class Strict(BaseModel):
    """A request body: unknown fields and loose types are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)


class SeatIn(Strict):
    """Take a seat at a room's round (games with seats share this body)."""

    seat: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,16}$")]


class SeatOut(BaseModel):
    round_id: str
    seat: str
    held: int


class AppliedOut(BaseModel):
    """What a command did: the round's phase after it and the names of the events it caused."""

    round_id: str
    phase: str
    events: list[str]


def applied_out(applied: Applied) -> AppliedOut:
    return AppliedOut(round_id=applied.round_id, phase=applied.phase, events=[type(e).__name__ for e in applied.events])


def take_seat(
    service: RoundCore, player: str, round_id: str, body: SeatIn, key: str | None, sit: Callable[[str, str], Any]
) -> SeatOut:
    """The shared ``sit`` action: the seat joins the round's log (``sit(player, seat)`` is the game's command)
    and the game's ``hold`` for it is taken from the wallet, together or not at all; idempotent by ``key``."""
    request = {"op": "sit", "round": round_id, "seat": body.seat}

    def work(session: Session) -> dict[str, Any]:
        stored = idempotency.begin(session, key or "", player, request)
        if stored is not None:
            return stored
        round_ = service.locked_round(session, round_id)
        engine = service.engine(session, round_)
        service.check_window(round_)
        port = service.game_of(session, round_)
        command = sit(player, body.seat)
        port.verify(engine, command)
        events = service.append(session, round_, engine, command, player)
        amount = port.seat_hold(engine)
        service.ledger(session, round_.table_id).hold(player, amount, round_id, SEAT_STAKE + body.seat)
        fund_seats(service, session, round_, engine, events)
        return idempotency.finish(session, key or "", {"round_id": round_id, "seat": body.seat, "held": amount})

    return SeatOut(**service.run(work))


def seat_action(summary: str, sit: Callable[[str, str], Any] = Sit) -> Action:
    """The ``sit`` action of a game with seats (``take_seat`` with the game's ``sit`` command)."""

    def run(service: RoundCore, player: str, round_id: str, body: SeatIn, key: str | None) -> SeatOut:
        return take_seat(service, player, round_id, body, key, sit)

    return Action("sit", SeatIn, SeatOut, run, summary, keyed=True)


class LeaveIn(Strict):
    pass


def leave_action(summary: str) -> Action:
    """The ``leave`` action of a room game: the player's ``Leave`` joins the log; a seat it frees before the deal gets
    its hold back in the same transaction (``command_freeing``)."""

    def run(service: RoundCore, player: str, round_id: str, _body: LeaveIn, _key: str | None) -> AppliedOut:
        return applied_out(command_freeing(service, round_id, Leave(player), player))

    return Action("leave", LeaveIn, AppliedOut, run, summary)


@dataclass(frozen=True)
class Action:
    """One thing a player does in a round of this game, as an API route."""

    name: str  # the route: POST /v1/rounds/{round_id}/{name}
    body: type[BaseModel]
    answer: type[BaseModel]
    run: Run
    summary: str
    keyed: bool = False  # moves money: needs an Idempotency-Key, and answers 201
    changes_state: bool = True  # the public state changed: tell the streams
    soon: Soon | None = None  # where the action can be answered without a thread of its own (a bet slip's batch)


class Adapter:
    """The default: actions none, a window's end is the engine's own timeout command."""

    actions: tuple[Action, ...] = ()
    # the page its players play at: ``/{player_page}/{table_id}`` (the index page links each table there)
    player_page: ClassVar[str] = "room"
    # whether its tables may keep the players' money in the operator's wallet (``services.wallet.seamless``): a
    # game whose losses never exceed what was staked (a room settles players against each other beyond their holds)
    operator_wallet: ClassVar[bool] = False

    def __init__(self, game: Game[Any, Any]) -> None:
        self.game = game

    @property
    def game_name(self) -> str:
        return self.game.name

    def close(
        self, service: RoundCore, session: Session, round_: Round, engine: Any, window: Window, actor: str
    ) -> list[Any]:
        """End the open ``window``: append what its end means; returns the events."""
        return service.append(session, round_, engine, self.game.timeout(engine), actor)

    def opened(self, service: RoundCore, session: Session, round_: Round, engine: Any) -> None:
        """A round of the game was just opened (in this transaction): append what it starts with, if anything."""

    def settled(self, service: RoundCore, session: Session, round_: Round, engine: Any) -> None:
        """Write what the game keeps of a settled (or recalculated) round besides the ledger's postings."""

    def yours(self, service: RoundCore, session: Session, round_: Round, engine: Any, player: str) -> dict[str, Any]:
        """What of the round is ``player``'s own, for their private stream: here, the seats they hold."""
        return {"seats": sorted(seat for seat, holder in self.game.seats(engine).items() if holder == player)}

    def history(self, session: Session, round_: Round, player: str) -> dict[str, Any]:
        """What a player's history shows of their part in a round of this game, besides what every game shows (the
        round, its hands and outcomes, their net, corrections): here, the seats they held."""
        held = session.scalars(
            select(Hold.wager_id).where(Hold.round_id == round_.id, Hold.player == player).order_by(Hold.id)
        )
        seats = dict.fromkeys(wager.removeprefix(SEAT_STAKE) for wager in held if wager.startswith(SEAT_STAKE))
        return {"seats": list(seats)}

    def stakes(self, session: Session, round_: Round) -> list[dict[str, Any]]:
        """The round's stakes as its audit and the ops page list them — ``wager_id``, ``player``, ``side``, ``seat``,
        ``stake``, ``net`` (None until settled) — here, each seat's hold (what it holds now: a seat's hold may have
        grown or shrunk before the deal; a seat given up before it, what it held), with its holder's net in money."""
        voided = HoldResolution.status == str(HoldStatus.VOIDED)
        holds = session.execute(
            select(Hold.wager_id, Hold.player, Hold.amount, voided)
            .outerjoin(HoldResolution, HoldResolution.hold_id == Hold.id)
            .where(Hold.round_id == round_.id)
            .order_by(Hold.id)
        ).all()
        seats: dict[tuple[str, str], list[int]] = {}  # (wager, player) -> [live, largest]
        for wager, player, amount, void in holds:
            found = seats.setdefault((wager, player), [0, 0])
            found[0] += 0 if void else amount
            found[1] = max(found[1], amount)
        nets = result_nets(json.loads(round_.result)) if round_.result else None
        return [
            {"wager_id": wager, "player": player, "side": "seat", "seat": wager.removeprefix(SEAT_STAKE),
             "stake": live or largest, "net": None if nets is None else nets.get(player, 0)}
            for (wager, player), (live, largest) in seats.items()
        ]  # fmt: skip

    def page(self, settings: Any) -> dict[str, Any]:
        """What a player's page shows of the table's settings besides them (``GET /v1/tables/{id}``)."""
        return {}

    def returns(self, settings: Any) -> dict[str, Any] | None:
        """Each bet the house takes, with its expected return per unit staked for these settings —
        ``{name: {"rtp": R, "ci95": [LO, HI]}}`` — and what would bring them all under 1 (``fix``); None where the
        players play each other and the house takes no bet."""
        return None

    profile_settings: tuple[str, ...] = ()  # the player settings this game has (``PUT /v1/me/{name}``)

    def profile(self, service: RoundCore, player: str) -> dict[str, Any]:
        """What a player's ``/v1/me`` shows of their settings in this game."""
        return {}

    def set_profile(self, service: RoundCore, player: str, name: str, value: Any) -> None:
        raise NotImplementedError(name)  # only names in ``profile_settings`` reach here


class RoomAdapter(Adapter):
    """A room game's adapter: a seat given up before the deal (the engine's ``Freed`` event: the player left, or
    the ready check removed them) gets its hold back in the same transaction."""

    def close(
        self, service: RoundCore, session: Session, round_: Round, engine: Any, window: Window, actor: str
    ) -> list[Any]:
        events = super().close(service, session, round_, engine, window, actor)
        fund_seats(service, session, round_, engine, events)
        return events


def command_freeing(service: RoundCore, round_id: str, command: Any, actor: str) -> Applied:
    """Append ``command`` (a player's), releasing the hold of any seat it frees and fitting the others' holds."""

    def work(session: Session) -> Applied:
        round_ = service.locked_round(session, round_id)
        engine = service.engine(session, round_)
        events = service.append(session, round_, engine, command, actor)
        fund_seats(service, session, round_, engine, events)
        return service.applied(session, round_, events, engine)

    return service.run(work)


def release_freed(service: RoundCore, session: Session, round_: Round, events: list[Any]) -> None:
    """Give back the hold of every seat the events say was freed before the deal."""
    ledger = service.ledger(session, round_.table_id)
    for event in events:
        if isinstance(event, Freed):
            void_holds(ledger, round_.id, SEAT_STAKE + event.seat)


def fund_seats(service: RoundCore, session: Session, round_: Round, engine: Any, events: list[Any]) -> None:
    """Before the deal, keep every seat's hold at what the game asks now (``seat_hold``: Mậu Binh's grows with the
    players seated). A seat holding more gets the rest back; a seat holding less is topped up from its wallet, or,
    where the wallet cannot cover it, its player is out before the deal (``Short``) and the rest are fitted again.
    Freed seats in ``events`` (and in what this appends) get their holds back first."""
    port = service.game_of(session, round_)
    ledger = service.ledger(session, round_.table_id)
    while True:
        release_freed(service, session, round_, events)
        if port.phase(engine) != "seating":
            return
        required = port.seat_hold(engine)
        held: dict[str, list[PendingHold]] = {}
        for hold in pending_holds(ledger, round_.id):
            held.setdefault(hold.wager_id, []).append(hold)
        short = []
        for seat, player in sorted(port.seats(engine).items(), key=lambda item: item[1]):  # wallets in name order
            holds = held.get(SEAT_STAKE + seat, [])
            have = sum(hold.amount for hold in holds)
            if have > required:
                resolve(ledger, round_.id, [Resolution(hold, HoldStatus.VOIDED) for hold in holds], SEAT_STAKE + seat)
                ledger.hold(player, required, round_.id, SEAT_STAKE + seat)
            elif have < required:
                wallet, locked = service.accounts.lock_player(session, ledger, player)
                if locked[wallet].balance < required - have:
                    short.append(seat)
                else:
                    ledger.place_holds(player, round_.id, [(SEAT_STAKE + seat, required - have)], locked)
        if not short:
            return
        events = []
        for seat in short:
            events += service.append(session, round_, engine, Short(seat), "controller")


class CatalogError(RoundError):
    """The studio's games do not fit together (found at start, never while playing)."""

    code = "catalog"


@dataclass(frozen=True)
class Catalog:
    """The games a studio runs, each with its adapter: built once by the composition root (``services.catalog``)
    and handed to the services, which look a table's game up here and nowhere else."""

    adapters: Mapping[str, Adapter]

    @classmethod
    def of(cls, *entries: Game[Any, Any] | Adapter) -> Catalog:
        """A catalog of these games (a game given without an adapter gets the default one); one entry per name."""
        found: dict[str, Adapter] = {}
        for entry in entries:
            each = entry if isinstance(entry, Adapter) else Adapter(entry)
            if each.game_name in found:
                raise CatalogError(f"game {each.game_name!r} is named twice in the catalog")
            if each.game.house_banked and type(each).returns is Adapter.returns:
                raise CatalogError(
                    f"game {each.game_name!r} is banked by the house: its adapter must say what its bets return "
                    "(Adapter.returns), for the table guard"
                )
            found[each.game_name] = each
        return cls(MappingProxyType(dict(sorted(found.items()))))

    def adding(self, *entries: Game[Any, Any] | Adapter) -> Catalog:
        """This catalog and these games besides (a plug-in's, a test's)."""
        return Catalog.of(*self.adapters.values(), *entries)

    def adapter(self, game: str) -> Adapter:
        found = self.adapters.get(game)
        if found is None:
            raise UnknownGameError(f"unknown game {game!r} (known: {', '.join(self.adapters)})")
        return found

    def game(self, name: str) -> Game[Any, Any]:
        return self.adapter(name).game

    def names(self) -> list[str]:
        return list(self.adapters)

    def every(self) -> list[Adapter]:
        return list(self.adapters.values())
