"""Every refusal of a staff member's action is said (the 403 answer) and journaled: the staff log keeps who tried
what, where and from where, and the process's log has a line of it."""

from __future__ import annotations

import logging

from fastapi import Request
from sqlalchemy.exc import SQLAlchemyError

from services.api.deps import actor_of, services_of
from services.rounds.errors import AuthError
from services.rounds.staff import STAFF, printable

log = logging.getLogger("studio.api.refusals")
SUBJECTS = ("round_id", "table_id", "player_id", "dealer_id", "proposal_id", "report_id")  # what was tried on


def staff_route(path: str) -> bool:
    """The staff's routes (the operator tools, a table's dealer console): whoever is refused there is journaled."""
    return path.startswith("/v1/operator/") or path.endswith("/dealer/stream")


def journal(request: Request, code: str, message: str) -> None:
    """Record the refusal of an authenticated caller on a staff route, or of a staff member anywhere."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return
    services = services_of(request)
    try:
        identity = services.players.authenticate(token.strip())
    except AuthError:
        return
    path = request.url.path
    if identity.role not in STAFF and not staff_route(path):
        return  # a player refused in their own game (not their seat's decision, say): the answer says it
    actor = actor_of(identity, request)
    subject = next((str(request.path_params[key]) for key in SUBJECTS if key in request.path_params), "")
    detail = printable(f"{request.method} {path}: {code}: {message}", 2000)  # a crafted id forges no log line
    log.warning("refused %s (%s) from %s: %s", actor.id, actor.role, actor.address, detail)
    try:
        services.players.log.refused(actor, subject, detail)
    except SQLAlchemyError as error:  # the refusal still stands and is said; the line above keeps it
        log.error("could not journal the refusal of %s: %s", actor.id, " ".join(str(error).split())[:200])
