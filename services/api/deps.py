"""Dependencies: the services behind the API, and who is calling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.api.consoles import RECHECK_S, ViewRelay
from services.api.fanout import Hub, Poller
from services.ledger.wallets import WalletService
from services.rounds.errors import AuthError, ForbiddenError
from services.rounds.players import Identity, PlayerService
from services.rounds.service import RoundService, table_of_round
from services.rounds.staff import STAFF, Actor, UnconfirmedError, a


def _no_notice(_round_id: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class Services:
    rounds: RoundService
    wallets: WalletService
    players: PlayerService
    notify: Callable[[str], None] = _no_notice  # tell the round controller a round changed (``…/round/commands``)
    relay: ViewRelay | None = None  # the controllers' round views from the broker (None: no broker)
    states: Hub = field(default_factory=Hub)  # the public round state per table, fanned out to its streams
    poller: Poller | None = None  # without a broker: reads each watched table's state from the database
    # private seat views, "table/seat/player"; a player's own view, "table/player"
    seats: Hub = field(default_factory=lambda: Hub(heartbeat_s=RECHECK_S, name="seat"))
    seat_poller: Poller | None = None  # reads each watched private view from the database
    yours: Hub = field(default_factory=lambda: Hub(heartbeat_s=RECHECK_S, name="yours"))
    yours_poller: Poller | None = None

    def hubs(self) -> tuple[Hub, ...]:
        """Every stream source of this process: the public state, the private views, the dealer consoles'."""
        consoles = () if self.relay is None else (self.relay.dealer,)
        return (self.states, self.seats, self.yours, *consoles)

    def changed(self, round_id: str) -> None:
        """A player changed ``round_id`` through this process: its table's private views are read again now."""
        table = table_of_round(round_id)
        for poller in (self.seat_poller, self.yours_poller):
            if poller is not None:
                poller.wake(table + "/")


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def get_services(request: Request) -> Services:  # async, as every dependency on the bet path: no thread hop
    return services_of(request)


bearer = HTTPBearer(auto_error=False, description="the bearer token given when the account was created")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
# A stream's parameters: how many frames before it ends, and the last frame a reconnecting client had.
Changes = Annotated[int, Query(ge=1, le=100_000)]
LastEventId = Annotated[str | None, Header(alias="Last-Event-ID", max_length=64)]


class StreamArgs:
    """What every stream takes: the login (checked again while it is open), ``changes`` (the stream ends after
    that many frames) and ``Last-Event-ID`` (a reconnecting client gets what it missed)."""

    def __init__(self, credentials: Credentials, changes: Changes = 100_000, last_event_id: LastEventId = None) -> None:
        self.token = credentials.credentials if credentials else ""
        self.changes = changes
        self.last_event_id = last_event_id


Stream = Annotated[StreamArgs, Depends()]


async def current_identity(
    services: Annotated[Services, Depends(get_services)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Identity:
    """The caller (``holder``)."""
    if credentials is None:
        raise AuthError("missing bearer token (Authorization: Bearer <token>)")
    return await holder(services.players, credentials.credentials)


async def holder(players: PlayerService, token: str) -> Identity:
    """Who holds the token: from the process's recent logins on the event loop, else looked up in a worker thread."""
    known = players.known(token)
    return known if known is not None else await run_in_threadpool(players.authenticate, token)


def role(*allowed: str, unconfirmed: bool = False) -> object:
    """The caller, with one of the ``allowed`` roles; a token issued by someone else and not yet confirmed by a second
    admin does nothing (``staff``), unless ``unconfirmed`` (replacing one's own token)."""

    async def check(identity: Annotated[Identity, Depends(current_identity)]) -> Identity:
        if identity.role not in allowed:
            raise ForbiddenError(f"{identity.id} is {a(identity.role)}; this needs the role {' or '.join(allowed)}")
        if not identity.confirmed and not unconfirmed:
            raise UnconfirmedError(
                f"{identity.id}'s token was issued by {identity.issued_by} and no second admin confirmed it: it does "
                "nothing until one does"
            )
        return identity

    return Depends(check)


def actor_of(identity: Identity, request: Request) -> Actor:
    """Who acts through this request, and from where (for the staff log and proposals)."""
    return Actor(identity.id, identity.role, request.client.host if request.client else "unknown", identity.confirmed)


ServicesDep = Annotated[Services, Depends(get_services)]
CurrentPlayer = Annotated[Identity, role("player")]
CurrentOperator = Annotated[Identity, role("operator")]
CurrentStaff = Annotated[Identity, role("dealer", "operator")]
CurrentManager = Annotated[Identity, role("operator", "admin")]  # who makes players, or assigns dealers
CurrentAdmin = Annotated[Identity, role("admin")]
AnyStaff = Annotated[Identity, role(*STAFF, unconfirmed=True)]  # who may replace their own token


def table_staff(identity: CurrentStaff, services: ServicesDep, request: Request) -> Identity:
    """A dealer assigned to the table of the route (``table_id``, or the table of ``round_id``), or an operator."""
    params = request.path_params
    table = params["table_id"] if "table_id" in params else table_of_round(params["round_id"])
    services.players.check_runs_table(identity, table)
    return identity


TableStaff = Annotated[Identity, Depends(table_staff)]
IdempotencyKey = Annotated[
    str,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=128,
        description="unique per money-moving request; a retry with the same key returns the first result",
    ),
]
