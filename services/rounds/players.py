"""Players, dealers and operators: registration and bearer-token authentication.

Tokens are random and shown once; only their SHA-256 is stored, so a database leak reveals none.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from services.db.unit_of_work import run_transaction
from services.rounds.errors import AuthError, RoundError
from services.rounds.models import Player

ROLES = ("player", "dealer", "operator")
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True, slots=True)
class Identity:
    id: str
    role: str


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class PlayerService:
    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions

    def register(self, player_id: str, role: str = "player") -> str:
        """Create the account and return its bearer token (the only time it is shown)."""
        if not ID_PATTERN.match(player_id):
            raise RoundError(f"invalid id {player_id!r}: use 1–64 letters, digits, '_', '.' or '-'")
        if role not in ROLES:
            raise RoundError(f"invalid role {role!r}: expected one of {', '.join(ROLES)}")
        token = secrets.token_urlsafe(32)

        def work(session: Session) -> None:
            session.add(Player(id=player_id, role=role, token_hash=token_hash(token)))
            session.flush()

        try:
            run_transaction(self.sessions, work)
        except IntegrityError:
            raise RoundError(f"id {player_id!r} is already registered") from None
        return token

    def authenticate(self, token: str) -> Identity:
        with self.sessions() as session:
            row = session.execute(select(Player.id, Player.role).where(Player.token_hash == token_hash(token))).first()
        if row is None:
            raise AuthError("unknown or revoked bearer token")
        return Identity(row.id, row.role)
