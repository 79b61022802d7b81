"""Idempotency keys: a retry of a money-moving request returns the first result.

The key row is inserted before the work, inside the same transaction. A concurrent request with
the same key blocks on the key's unique index until the first commits, then finds the stored
response; if it ever sees the key without one, it reruns (``RetryTransactionError``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from services.db.sql import insert_ignoring_conflicts
from services.db.unit_of_work import RetryTransactionError
from services.ledger.errors import IdempotencyConflictError
from services.ledger.models import IdempotencyKey, utcnow

MAX_KEY_LENGTH = 128


def fingerprint(request: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def begin(session: Session, key: str, actor: str, request: dict[str, Any]) -> dict[str, Any] | None:
    """The stored response for a retry, or None after claiming the key for this request.

    One ``INSERT … ON CONFLICT DO NOTHING``: on PostgreSQL a concurrent first use of the key waits
    there for the other transaction and, once it commits, finds its row; SQLite serializes writers.
    """
    if not key or len(key) > MAX_KEY_LENGTH:
        raise IdempotencyConflictError(f"idempotency key must be 1–{MAX_KEY_LENGTH} characters, got {len(key)}")
    digest = fingerprint(request)
    claimed = session.scalar(
        insert_ignoring_conflicts(session, IdempotencyKey)
        .values(key=key, actor=actor, request_hash=digest, response="", created_at=utcnow())
        .returning(IdempotencyKey.key)
    )
    if claimed is not None:
        return None
    row = session.execute(
        select(IdempotencyKey.actor, IdempotencyKey.request_hash, IdempotencyKey.response).where(
            IdempotencyKey.key == key
        )
    ).first()
    if row is None or not row.response:
        raise RetryTransactionError(f"idempotency key {key!r} is being used concurrently")
    if row.actor != actor or row.request_hash != digest:
        raise IdempotencyConflictError(
            f"idempotency key {key!r} was already used for a different request; use a new key"
        )
    stored: dict[str, Any] = json.loads(row.response)
    return stored


def finish(session: Session, key: str, response: dict[str, Any]) -> dict[str, Any]:
    session.execute(update(IdempotencyKey).where(IdempotencyKey.key == key).values(response=json.dumps(response)))
    return response
