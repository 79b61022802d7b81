"""Players, dealers, operators and admins: accounts, bearer-token authentication, dealers' tables.

Tokens are random and shown once; only their SHA-256 is stored, so a database leak reveals none. Who may make or
change which account is ``services.rounds.staff``'s rule; every change to a staff account is in its staff log.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from services.db.unit_of_work import read_row, run_transaction
from services.rounds.clock import Clock, SystemClock, aware
from services.rounds.errors import AuthError, NotFoundError, RoundError
from services.rounds.models import GameTable, Player, TableDealer
from services.rounds.staff import (
    CONFIRMED_ROLES,
    STAFF,
    Actor,
    NotYourTableError,
    StaffLog,
    a,
    may_assign,
    may_confirm,
    may_create,
    may_reissue,
    vouched,
)

ROLES = ("player", "dealer", "operator", "admin")
ID_PATTERN = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
AUTH_TTL_S = 5.0  # how long a successful authentication is reused: the delay before a revocation takes effect
AUTH_CACHE = 10_000  # tokens remembered at most; the cache is emptied when full
BY_TOKEN = select(Player.id, Player.role, Player.confirmed_by, Player.token_issued_by).where(
    Player.token_hash == bindparam("token_hash")
)


@dataclass(frozen=True, slots=True)
class Identity:
    id: str
    role: str
    issued_by: str = ""  # who issued the token: when not confirmed, it does nothing of its role (see staff)
    confirmed: bool = True


def new_token() -> str:
    """A bearer token. The prefix names it in logs and secret scanners, and keeps it from ever starting with '-'
    (a token that did could not follow ``--token`` on a command line)."""
    return f"studio_{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class PlayerService:
    def __init__(self, sessions: sessionmaker[Session], clock: Clock | None = None) -> None:
        self.sessions = sessions
        self.clock = clock or SystemClock()  # the rounds' clock: an account's age is compared with proposals'
        self.log = StaffLog(sessions, self.clock)
        self._known: dict[str, tuple[float, Identity]] = {}  # token hash -> (valid until, identity)

    def register(self, player_id: str, role: str = "player", by: Actor | None = None) -> str:
        """Create the account and return its bearer token (the only time it is shown). ``by``: who asks — checked
        (``staff.may_create``) and, for a staff account, recorded in the staff log; None: the database's own tools."""
        if not ID_PATTERN.match(player_id):
            raise RoundError(f"invalid id {player_id!r}: use 1–64 letters, digits, '_', '.' or '-'")
        if role not in ROLES:
            raise RoundError(f"invalid role {role!r}: expected one of {', '.join(ROLES)}")
        actor = by or Actor.command_line()
        vouched(actor)
        may_create(actor, role)
        token = new_token()

        def work(session: Session) -> None:
            taken = session.scalar(select(Player.id).where(func.lower(Player.id) == player_id.lower()))
            if taken is not None:  # "OP2" beside "op2" would read as the same person in every log
                raise RoundError(
                    f"id {player_id!r} is already registered" + (f" (as {taken!r})" if taken != player_id else "")
                )
            confirmed = actor.id if role not in CONFIRMED_ROLES else _confirmed(actor)  # a new player holds nothing
            session.add(
                Player(
                    id=player_id, role=role, token_hash=token_hash(token), created_at=self.clock.now(),
                    token_issued_by=actor.id, confirmed_by=confirmed,
                )
            )  # fmt: skip
            session.flush()
            if role in STAFF:
                self.log.record(session, actor, "account_created", player_id, role)

        try:
            run_transaction(self.sessions, work)
        except IntegrityError:
            raise RoundError(f"id {player_id!r} is already registered") from None
        return token

    def wallet_holder(self, player_id: str) -> None:
        """Raise unless ``player_id`` is a player's account (only players hold wallets)."""
        with self.sessions() as session:
            role = session.scalar(select(Player.role).where(Player.id == player_id))
        if role is None:
            raise NotFoundError(f"player {player_id!r} does not exist")
        if role != "player":
            raise RoundError(f"{player_id!r} is {a(role)}'s account, which holds no wallet")

    def revoke(self, player_id: str, by: Actor | None = None) -> str:
        """Replace the account's token: the old one stops working (here at once, elsewhere within ``AUTH_TTL_S``).
        ``by``: who asks (their own, or an admin; None: the database's own tools), recorded in the staff log."""
        actor = by or Actor.command_line()
        may_reissue(actor, player_id)
        if actor.id != player_id:
            vouched(actor)
        token = new_token()

        def work(session: Session) -> None:
            player = session.get(Player, player_id, with_for_update=True)
            if player is None:
                raise NotFoundError(f"player {player_id!r} does not exist")
            player.token_hash = token_hash(token)
            if actor.id != player_id:  # whoever issues a token can act as its holder: an operator's needs confirming
                player.token_issued_by, player.confirmed_by = actor.id, _confirmed(actor)
            if player.role in STAFF or actor.id != player_id:
                self.log.record(session, actor, "token_reissued", player_id, player.role)

        run_transaction(self.sessions, work)
        self._forget(player_id)
        return token

    def _forget(self, account: str) -> None:
        """Drop the account's remembered authentications: its next request reads the database."""
        for digest, (_, identity) in list(self._known.items()):
            if identity.id == account:
                self._known.pop(digest, None)

    def confirm(self, account: str, by: Actor | None = None) -> dict[str, Any]:
        """A second admin's word on an operator's or an admin's token an admin issued: from now on it acts."""
        actor = by or Actor.command_line()
        vouched(actor)

        def work(session: Session) -> dict[str, Any]:
            player = session.get(Player, account, with_for_update=True)
            if player is None:
                raise NotFoundError(f"account {account!r} does not exist")
            may_confirm(actor, account, player.role, player.token_issued_by, player.confirmed_by)
            player.confirmed_by = actor.id
            self.log.record(session, actor, "account_confirmed", account, player.token_issued_by)
            return _staff_row(player)

        confirmed = run_transaction(self.sessions, work)
        self._forget(account)  # here at once; elsewhere within AUTH_TTL_S
        return confirmed

    def staff(self) -> list[dict[str, Any]]:
        """Every staff account, and any account whose token waits for a second admin: role, when made, who issued its
        token and who confirmed it."""
        with self.sessions() as session:
            query = select(Player).where(Player.role.in_(STAFF) | Player.confirmed_by.is_(None)).order_by(Player.id)
            rows = session.scalars(query).all()
            return [_staff_row(player) for player in rows]

    # ---- dealers and their tables -------------------------------------------------------

    def assign(self, table_id: str, dealer_id: str, by: Actor | None = None) -> list[str]:
        """Give ``dealer_id`` the table (its console and round controls); returns the table's dealers."""
        actor = by or Actor.command_line()
        may_assign(actor)
        vouched(actor)

        def work(session: Session) -> None:
            if session.get(GameTable, table_id) is None:
                raise NotFoundError(f"table {table_id!r} does not exist")
            role = session.scalar(select(Player.role).where(Player.id == dealer_id))
            if role is None:
                raise NotFoundError(f"dealer {dealer_id!r} does not exist")
            if role != "dealer":
                raise RoundError(f"{dealer_id!r} is {a(role)}'s account: only dealers are assigned to tables")
            if session.get(TableDealer, (table_id, dealer_id)) is None:
                session.add(TableDealer(table_id=table_id, dealer=dealer_id, assigned_at=self.clock.now()))
                self.log.record(session, actor, "table_assigned", dealer_id, table_id)

        run_transaction(self.sessions, work)
        return self.dealers(table_id)

    def unassign(self, table_id: str, dealer_id: str, by: Actor | None = None) -> list[str]:
        """Take the table away from the dealer: their open console stream ends within seconds."""
        actor = by or Actor.command_line()
        may_assign(actor)
        vouched(actor)

        def work(session: Session) -> None:
            assigned = (TableDealer.table_id == table_id) & (TableDealer.dealer == dealer_id)
            if session.execute(delete(TableDealer).where(assigned)).rowcount:  # type: ignore[attr-defined]
                self.log.record(session, actor, "table_unassigned", dealer_id, table_id)

        run_transaction(self.sessions, work)
        return self.dealers(table_id)

    def dealers(self, table_id: str) -> list[str]:
        with self.sessions() as session:
            if session.get(GameTable, table_id) is None:
                raise NotFoundError(f"table {table_id!r} does not exist")
            return list(
                session.scalars(
                    select(TableDealer.dealer).where(TableDealer.table_id == table_id).order_by(TableDealer.dealer)
                )
            )

    def runs_table(self, identity: Identity, table_id: str) -> bool:
        """Operators run every table; a dealer only those assigned to them."""
        if identity.role == "operator":
            return True
        if identity.role != "dealer":
            return False
        with self.sessions() as session:
            return session.get(TableDealer, (table_id, identity.id)) is not None

    def check_runs_table(self, identity: Identity, table_id: str) -> None:
        """Raise ``NotYourTableError`` unless ``identity`` runs the table."""
        if not self.runs_table(identity, table_id):
            raise NotYourTableError(
                f"{identity.id} is not assigned to table {table_id}: an operator or an admin assigns dealers to tables"
                if identity.role == "dealer"
                else f"{identity.id} is {a(identity.role)}: a table is run by its dealers and the operators"
            )

    def known(self, token: str) -> Identity | None:
        """Who holds the token, if this process authenticated it in the last ``AUTH_TTL_S`` (no database: an async
        caller asks here first)."""
        known = self._known.get(token_hash(token))
        return known[1] if known is not None and known[0] > time.monotonic() else None

    def authenticate(self, token: str) -> Identity:
        """Who holds the token. Every request asks, so a success is reused for ``AUTH_TTL_S`` seconds.

        Revocation delay: a token deleted (or a role changed) in the database still authenticates,
        as before, for up to ``AUTH_TTL_S`` (5 s) in each process that saw it. Unknown tokens are
        never cached: they are looked up every time.
        """
        known = self.known(token)
        if known is not None:
            return known
        digest = token_hash(token)
        now = time.monotonic()
        row = read_row(self.sessions, BY_TOKEN, {"token_hash": digest})
        if row is None:
            self._known.pop(digest, None)
            raise AuthError("unknown or revoked bearer token")
        identity = Identity(row.id, row.role, row.token_issued_by, row.confirmed_by is not None)
        if len(self._known) >= AUTH_CACHE:
            self._known.clear()
        self._known[digest] = (now + AUTH_TTL_S, identity)
        return identity


def _confirmed(actor: Actor) -> str | None:
    """A token the database's own tools issue is confirmed by them (they hold every key); an admin's is not yet."""
    return actor.id if actor.role == "cli" else None


def _staff_row(player: Player) -> dict[str, Any]:
    return {
        "id": player.id, "role": player.role, "created_at": aware(player.created_at).isoformat(),
        "token_issued_by": player.token_issued_by, "confirmed_by": player.confirmed_by,
        "awaiting_confirmation": player.confirmed_by is None,
    }  # fmt: skip
