"""Idempotency keys: a retry of a money-moving request returns the first result.

The key row is inserted before the work, inside the same transaction. A concurrent request with
the same key blocks on the key's unique index until the first commits, then finds the stored
response; if it ever sees the key without one, it reruns (``RetryTransactionError``).

The statements are prebuilt (once per dialect) and run on the session's connection: every
money-moving request runs them, so they build no SQL and skip the ORM.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, bindparam, delete, select, update
from sqlalchemy.orm import Session

from services.db.sql import PerDialect, Raw, execute, insert_ignoring_conflicts_in
from services.db.unit_of_work import RetryTransactionError
from services.ledger.errors import IdempotencyConflictError
from services.ledger.models import IdempotencyKey, utcnow

MAX_KEY_LENGTH = 128
KEYS = cast(Table, IdempotencyKey.__table__)
CLAIM = PerDialect(
    lambda dialect: (
        insert_ignoring_conflicts_in(dialect, KEYS)
        .values(key=bindparam("key"), actor=bindparam("actor"), request_hash=bindparam("request_hash"), response="")
        .values(created_at=bindparam("created_at"))
        .returning(KEYS.c.key)
    )
)
STORED = select(KEYS.c.actor, KEYS.c.request_hash, KEYS.c.response).where(KEYS.c.key == bindparam("key"))
FINISH = update(KEYS).where(KEYS.c.key == bindparam("b_key")).values(response=bindparam("b_response"))
CLAIM_MANY = Raw(
    "INSERT INTO idempotency_keys (key, actor, request_hash, response, created_at) "
    "SELECT c.key, c.actor, c.hash, '', :now "
    "FROM unnest(CAST(:keys AS text[]), CAST(:actors AS text[]), CAST(:hashes AS text[])) AS c(key, actor, hash) "
    "ON CONFLICT DO NOTHING RETURNING key"
)
FINISH_MANY = Raw(
    "UPDATE idempotency_keys SET response = f.response "
    "FROM unnest(CAST(:keys AS text[]), CAST(:responses AS text[])) AS f(key, response) "
    "WHERE idempotency_keys.key = f.key"
)
STORED_MANY = select(KEYS.c.key, KEYS.c.actor, KEYS.c.request_hash, KEYS.c.response).where(
    KEYS.c.key.in_(bindparam("keys", expanding=True))
)
STORED_ANY = Raw(  # PostgreSQL: the keys as one array
    "SELECT key, actor, request_hash, response FROM idempotency_keys WHERE key = ANY(CAST(:keys AS text[]))"
)
RELEASE = delete(KEYS).where(KEYS.c.key.in_(bindparam("keys", expanding=True)))


def fingerprint(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def begin(session: Session, key: str, actor: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """The stored response for a retry, or None after claiming the key for this request.

    One ``INSERT … ON CONFLICT DO NOTHING``: on PostgreSQL a concurrent first use of the key waits
    there for the other transaction and, once it commits, finds its row; SQLite serializes writers.
    """
    check_key(key)
    digest = fingerprint(request)
    connection = session.connection()
    claim = {"key": key, "actor": actor, "request_hash": digest, "created_at": utcnow()}
    if connection.execute(CLAIM(connection), claim).scalar() is not None:
        return None
    found = _finished(session, key, actor, digest)
    if found is None:
        raise RetryTransactionError(f"idempotency key {key!r} is being used concurrently")
    return found


def claim_many(session: Session, claims: Sequence[tuple[str, str, dict[str, Any]]]) -> set[str]:
    """``begin`` for many requests at once, each ``(key, actor, request)`` with a key of its own: one statement. The
    keys it claimed; any other was used before, and ``stored`` says for what (or refuses it)."""
    for key, _, _ in claims:
        check_key(key)
    if not claims:
        return set()
    now = utcnow()
    connection = session.connection()
    if connection.dialect.name == "postgresql":  # one statement fed three arrays, in key order (as any other)
        ordered = sorted(claims, key=lambda claim: claim[0])
        keys, actors, hashes = [key for key, _, _ in ordered], [actor for _, actor, _ in ordered], [
            fingerprint(request) for _, _, request in ordered]  # fmt: skip
        claimed = execute(connection, CLAIM_MANY, {"keys": keys, "actors": actors, "hashes": hashes, "now": now})
        return {row.key for row in claimed}
    rows = [{"key": key, "actor": actor, "request_hash": fingerprint(request), "created_at": now}
            for key, actor, request in claims]  # fmt: skip
    return set(connection.scalars(CLAIM(connection), rows))


def release(session: Session, keys: Sequence[str]) -> None:
    """Give back keys this transaction claimed for requests it then refused (a retry may use them again)."""
    if keys:
        session.connection().execute(RELEASE, {"keys": list(keys)})


def finish_many(session: Session, answers: Sequence[tuple[str, dict[str, Any]]]) -> None:
    """``finish`` for many claimed keys at once, each ``(key, response)``."""
    if not answers:
        return
    connection = session.connection()
    if connection.dialect.name == "postgresql":  # one statement fed two arrays, not one per key
        keys, responses = [key for key, _ in answers], [json.dumps(response) for _, response in answers]
        execute(connection, FINISH_MANY, {"keys": keys, "responses": responses})
        return
    connection.execute(FINISH, [{"b_key": key, "b_response": json.dumps(response)} for key, response in answers])


def stored(session: Session, key: str, actor: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """What ``begin`` would return for a finished request, without claiming the key: the stored response, or None
    (never used, or still in progress). A key used for another request is refused as ``begin`` refuses it."""
    check_key(key)
    return _finished(session, key, actor, fingerprint(request))


def stored_many(
    session: Session, asked: Sequence[tuple[str, str, dict[str, Any]]]
) -> list[dict[str, Any] | IdempotencyConflictError | None]:
    """``stored`` for many requests at once, each ``(key, actor, request)``: one statement. For each, in order: the
    stored response, None (never used, or in progress), or the refusal ``stored`` raises (a key used for another
    request, or not a key at all)."""
    found: list[dict[str, Any] | IdempotencyConflictError | None] = [None] * len(asked)
    valid = []
    for n, (key, _, _) in enumerate(asked):
        try:
            check_key(key)
        except IdempotencyConflictError as refusal:
            found[n] = refusal
        else:
            valid.append(n)
    if not valid:
        return found
    connection = session.connection()
    statement = STORED_ANY if connection.dialect.name == "postgresql" else STORED_MANY
    rows = {row.key: row for row in execute(connection, statement, {"keys": [asked[n][0] for n in valid]})}
    for n in valid:
        key, actor, request = asked[n]
        row = rows.get(key)
        if row is not None and row.response:
            try:
                found[n] = _answered(key, actor, fingerprint(request), row)
            except IdempotencyConflictError as refusal:
                found[n] = refusal
    return found


def check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_LENGTH:
        raise IdempotencyConflictError(f"idempotency key must be 1–{MAX_KEY_LENGTH} characters, got {len(key)}")


def _finished(session: Session, key: str, actor: str, digest: str) -> dict[str, Any] | None:
    """The key's stored response (None: no row, or no response yet); refused if it was another request's."""
    row = session.connection().execute(STORED, {"key": key}).first()
    return None if row is None or not row.response else _answered(key, actor, digest, row)


def _answered(key: str, actor: str, digest: str, row: Any) -> dict[str, Any]:
    """A finished request's stored response, if the key was used for this one."""
    if row.actor != actor or row.request_hash != digest:
        raise IdempotencyConflictError(
            f"idempotency key {key!r} was already used for a different request; use a new key"
        )
    response: dict[str, Any] = json.loads(row.response)
    return response


def finish(session: Session, key: str, response: dict[str, Any]) -> dict[str, Any]:
    session.connection().execute(FINISH, {"b_key": key, "b_response": json.dumps(response)})
    return response
