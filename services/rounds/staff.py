"""Who may do what among the staff, and the staff log that records it.

Roles: a ``dealer`` runs the tables an operator or admin assigned to them (open a round, close its windows); an
``operator`` runs every table, funds players and decides money after settlement with a second operator (four eyes);
an ``admin`` manages staff accounts and tokens and nothing else — an admin can neither propose nor approve a money
action. Nobody else makes staff: an operator creates players only, and reissues no token but their own. The first
admin comes from the database's own tools (``studio players add ID --role admin``).

Four eyes on who may use four eyes: whoever issues a token can act as its holder, so a token issued to someone else —
an operator's or an admin's, new or reissued, or anyone's reissued (a dealer's, a player's) — does nothing at all until
a second, confirmed admin (not the one who issued it) confirms it. One admin alone can therefore make no operator who
moves money, borrow no real operator, dealer or player, and make no second admin to vouch for them. New dealer and
player accounts act at once: they hold nothing yet (a dealer runs only the tables given to them, and deals no card).

The staff log (``StaffEvent``) is append-only: every staff account made, every token reissued, every table given to a
dealer or taken away, and every action a staff member was refused, with who, from where and why.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from services.db.unit_of_work import run_transaction
from services.rounds.clock import Clock, SystemClock, aware
from services.rounds.errors import ForbiddenError, RoundError
from services.rounds.models import StaffEvent

STAFF: Final = ("dealer", "operator", "admin")
CONFIRMED_ROLES: Final = ("operator", "admin")  # whose tokens, even new, need a second admin's word
ACTIONS: Final = (
    "account_created", "token_reissued", "account_confirmed", "table_assigned", "table_unassigned", "table_created",
    "table_changed", "refused",
)  # fmt: skip
LOG_LIMIT: Final = 500  # events one read returns at most


class AdminOnlyError(ForbiddenError):
    """Staff accounts and other people's tokens are an admin's to manage."""

    code = "admin_only"


class UnconfirmedError(ForbiddenError):
    """An operator's token an admin issued, not yet confirmed by a second admin: it decides no money."""

    code = "unconfirmed"


class NotYourTableError(ForbiddenError):
    """A dealer acted at a table that is not assigned to them."""

    code = "not_your_table"


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts, as which role, and from where (a client address, or ``cli@HOST`` for the database's own tools)."""

    id: str
    role: str
    address: str = ""
    confirmed: bool = True  # False: a token an admin issued that no second admin confirmed (it manages no staff)

    @classmethod
    def command_line(cls) -> Actor:
        """Whoever runs a ``studio`` command with the database's URL: they hold every key, so they are the root of
        trust — recorded as such."""
        return cls(f"cli@{socket.gethostname()}"[:64], "cli", "localhost")


def a(word: str) -> str:
    """``word`` with its indefinite article ("an admin", "a dealer")."""
    return f"{'an' if word[:1] in 'aeiou' else 'a'} {word}"


def vouched(actor: Actor) -> None:
    """Raise ``UnconfirmedError`` if ``actor`` acts on a token an admin issued and no second admin confirmed: such a
    token manages no staff (else one admin could make a second to vouch for it)."""
    if not actor.confirmed:
        raise UnconfirmedError(f"{actor.id}'s token was issued by an admin and no second admin confirmed it")


def may_create(actor: Actor, role: str) -> None:
    """Raise unless ``actor`` may create an account of ``role``: an admin any; an operator a player's only."""
    if actor.role in ("admin", "cli") or (actor.role == "operator" and role == "player"):
        return
    if actor.role == "operator":
        raise AdminOnlyError(f"{actor.id} is an operator: only an admin creates {a(role)}'s account")
    raise AdminOnlyError(f"{actor.id} is {a(actor.role)}: only an admin or an operator creates accounts")


def may_confirm(actor: Actor, account: str, role: str, issued_by: str, confirmed_by: str | None) -> None:
    """Raise unless ``actor`` may confirm ``account``'s token: an admin (or the database's tools) other than whoever
    issued it, for a token not yet confirmed (the actor's own confirmation is checked apart)."""
    if actor.role not in ("admin", "cli"):
        raise AdminOnlyError(f"{actor.id} is {a(actor.role)}: a second admin confirms a token an admin issued")
    if confirmed_by is not None:
        raise RoundError(f"{account}'s token is confirmed already (by {confirmed_by})")
    if actor.id == issued_by:
        raise AdminOnlyError(f"{actor.id} issued {account}'s token: a second admin confirms it")


def may_reissue(actor: Actor, account: str) -> None:
    """Raise unless ``actor`` may replace ``account``'s token: their own, or anyone's for an admin."""
    if actor.id == account or actor.role in ("admin", "cli"):
        return
    raise AdminOnlyError(f"{actor.id} may reissue only their own token: an admin reissues {account}'s")


def may_assign(actor: Actor) -> None:
    """Raise unless ``actor`` may give a dealer a table or take it away (operators run the floor; admins staff it)."""
    if actor.role not in ("operator", "admin", "cli"):
        raise ForbiddenError(f"{actor.id} is {a(actor.role)}: an operator or an admin assigns dealers to tables")


class StaffLog:
    def __init__(self, sessions: sessionmaker[Session], clock: Clock | None = None) -> None:
        self.sessions = sessions
        self.clock = clock or SystemClock()

    def record(self, session: Session, actor: Actor, action: str, subject: str = "", detail: str = "") -> None:
        """Add an event in the caller's transaction (a change and its record commit together, or neither). What a
        caller sent (ids in a path, an address) is kept printable: no line breaks or control characters."""
        if action not in ACTIONS:
            raise RoundError(f"unknown staff log action {action!r}: expected one of {', '.join(ACTIONS)}")
        session.add(
            StaffEvent(
                at=self.clock.now(), actor=printable(actor.id, 64), actor_role=actor.role[:16], action=action,
                subject=printable(subject, 64), detail=printable(detail, 2000), address=printable(actor.address, 128),
            )
        )  # fmt: skip

    def refused(self, actor: Actor, subject: str, detail: str) -> None:
        """Record a refusal in a transaction of its own (the refused work was rolled back)."""
        run_transaction(self.sessions, lambda session: self.record(session, actor, "refused", subject, detail))

    def events(self, limit: int = 100, subject: str | None = None, before: int | None = None) -> list[dict[str, Any]]:
        """The newest events first (``before``: older than that event's id; ``subject``: about that account)."""
        query = select(StaffEvent).order_by(StaffEvent.id.desc()).limit(max(1, min(limit, LOG_LIMIT)))
        if subject is not None:
            query = query.where(StaffEvent.subject == subject)
        if before is not None:
            query = query.where(StaffEvent.id < before)
        with self.sessions() as session:
            return [_event(row) for row in session.scalars(query)]


def printable(text: str, most: int) -> str:
    """``text`` cut to ``most`` characters, control characters (a line break in a crafted path) shown as ``?``."""
    cut = text[:most]
    return "".join(char if char.isprintable() else "?" for char in cut)


def _event(row: StaffEvent) -> dict[str, Any]:
    at: datetime = aware(row.at)
    return {
        "id": row.id, "at": at.isoformat(), "actor": row.actor, "actor_role": row.actor_role, "action": row.action,
        "subject": row.subject, "detail": row.detail, "address": row.address,
    }  # fmt: skip
