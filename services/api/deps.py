"""Dependencies: the services behind the API, and who is calling."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from services.api.consoles import RECHECK_S, ViewRelay
from services.api.fanout import Hub, Poller
from services.ledger.wallets import WalletService
from services.rounds.errors import AuthError, ForbiddenError
from services.rounds.players import Identity, PlayerService
from services.rounds.service import RoundService


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
    seats: Hub = field(default_factory=lambda: Hub(heartbeat_s=RECHECK_S))  # private seat views, "table/seat/player"
    seat_poller: Poller | None = None  # reads each watched private view from the database


def get_services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


bearer = HTTPBearer(auto_error=False, description="the bearer token given when the account was created")


def current_identity(
    services: Annotated[Services, Depends(get_services)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Identity:
    if credentials is None:
        raise AuthError("missing bearer token (Authorization: Bearer <token>)")
    return services.players.authenticate(credentials.credentials)


def role(*allowed: str) -> object:
    def check(identity: Annotated[Identity, Depends(current_identity)]) -> Identity:
        if identity.role not in allowed:
            raise ForbiddenError(f"{identity.id} is a {identity.role}; this needs the role {' or '.join(allowed)}")
        return identity

    return Depends(check)


ServicesDep = Annotated[Services, Depends(get_services)]
CurrentPlayer = Annotated[Identity, role("player")]
CurrentOperator = Annotated[Identity, role("operator")]
CurrentStaff = Annotated[Identity, role("dealer", "operator")]
IdempotencyKey = Annotated[
    str,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=128,
        description="unique per money-moving request; a retry with the same key returns the first result",
    ),
]
