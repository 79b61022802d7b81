"""The seamless-wallet protocol: the studio asks an operator's wallet to move a player's money; the operator keeps it.

Each call is a signed JSON ``POST`` to ``{base}/{kind}`` — ``debit`` when a bet is accepted, ``credit`` at
settlement, ``rollback`` of an earlier debit on a void, and ``debit``/``credit`` adjustments on corrections:

    {"request_id": "…", "transaction_id": "…", "kind": "debit", "player": "ana", "amount": 300,
     "currency": "THB", "round_id": "T1-42", "original_transaction_id": null, "reason": "bet", "sent_at": "…"}

``request_id`` names the call and ``transaction_id`` the movement; a retry sends the very same body (same ids). A
``rollback`` names the debit it undoes in ``original_transaction_id``. The body is signed with HMAC-SHA256 over its
exact bytes and a shared secret (hex, in a header whose name is configurable, ``X-Studio-Signature`` by default);
the operator signs its answer the same way. The answer:

    {"status": "ok", "transaction_id": "…", "balance": 9700, "operator_reference": "…"}
    {"status": "refused", "transaction_id": "…", "code": "insufficient_funds", "message": "…"}

``ok`` and ``refused`` are final (the same ``transaction_id`` must get the same answer again). Anything else — a
timeout, a lost connection, a 5xx, an unsigned or wrongly signed or unreadable answer — leaves the outcome unknown,
and the studio asks again with the same ids until it gets a final answer: it never guesses.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.wallet.errors import WalletError

KINDS: Final = ("debit", "credit", "rollback")
SIGNATURE_HEADER: Final = "X-Studio-Signature"


class WalletCall(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    request_id: str = Field(min_length=1, max_length=64)
    transaction_id: str = Field(min_length=1, max_length=128)
    kind: Literal["debit", "credit", "rollback"]
    player: str = Field(min_length=1, max_length=64)
    amount: int = Field(ge=0, le=10**15)  # minor units (a rollback carries the amount it undoes)
    currency: str = Field(pattern=r"^[A-Z]{3}$")
    round_id: str = Field(min_length=1, max_length=64)
    original_transaction_id: str | None = Field(default=None, max_length=128)
    reason: str = Field(default="", max_length=200)
    sent_at: str

    def body(self) -> bytes:
        """The exact bytes sent (and signed), the same at every retry."""
        return json.dumps(self.model_dump(), separators=(",", ":"), sort_keys=True).encode()


class WalletAnswer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    status: Literal["ok", "refused"]
    transaction_id: str
    balance: int | None = None
    operator_reference: str = ""
    code: str = ""
    message: str = ""


def signature(body: bytes, secret: bytes) -> str:
    return hmac.digest(secret, body, "sha256").hex()  # (the one-call form: OpenSSL's, no Python object per call)


def signed_by(body: bytes, secret: bytes, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(signature(body, secret), given)


@dataclass(frozen=True)
class WalletConfig:
    """Where the operator's wallet answers and how the studio talks to it."""

    base_url: str
    secret: bytes
    signature_header: str = SIGNATURE_HEADER
    timeout_s: float = 2.0  # one attempt
    attempts: int = 5  # attempts in one go before the call is left to the outbox's later retries
    backoff_s: float = 0.2  # doubled after each failed attempt
    batch_credits: bool = True  # a round's credits as one request (``services.wallet.credits``) if the wallet takes it

    @property
    def in_flight_s(self) -> float:
        """How long one request may take to send a call: every attempt timing out, with the waits between them."""
        return self.timeout_s * self.attempts + self.backoff_s * float(2 ** (self.attempts - 1) - 1)

    def url(self, kind: str) -> str:
        return f"{self.base_url.rstrip('/')}/{kind}"


class WalletSettingsError(WalletError):
    """The studio's wallet settings (environment) are incomplete or malformed."""

    code = "wallet_settings"


def config_from(environment: Mapping[str, str]) -> WalletConfig | None:
    """The operator's wallet of ``STUDIO_WALLET_URL`` (http or https), signed with ``STUDIO_WALLET_SECRET`` (at
    least 16 characters) in the header ``STUDIO_WALLET_SIGNATURE_HEADER`` (default ``X-Studio-Signature``); None
    when no URL is set (every table keeps its money in the studio's ledger)."""
    url = environment.get("STUDIO_WALLET_URL", "").strip()
    if not url:
        return None
    if not url.startswith(("http://", "https://")):
        raise WalletSettingsError(f"STUDIO_WALLET_URL must be an http:// or https:// address, got {url!r}")
    secret = environment.get("STUDIO_WALLET_SECRET", "")
    if len(secret) < 16:
        raise WalletSettingsError("STUDIO_WALLET_SECRET must be set, at least 16 characters, with STUDIO_WALLET_URL")
    header = environment.get("STUDIO_WALLET_SIGNATURE_HEADER", SIGNATURE_HEADER).strip()
    if not header or not all(c.isalnum() or c == "-" for c in header):
        raise WalletSettingsError(f"STUDIO_WALLET_SIGNATURE_HEADER must be a header name, got {header!r}")
    batch = environment.get("STUDIO_WALLET_BATCH_CREDITS", "1").strip()
    if batch not in ("0", "1"):
        raise WalletSettingsError(f"STUDIO_WALLET_BATCH_CREDITS must be 1 (the default) or 0, got {batch!r}")
    return WalletConfig(url, secret.encode(), header, batch_credits=batch == "1")


def answer_from(body: bytes, headers: Any, config: WalletConfig) -> WalletAnswer | None:
    """The operator's final answer in a response, or None when it is not one the studio can trust (unsigned,
    wrongly signed, unreadable)."""
    if not signed_by(body, config.secret, headers.get(config.signature_header)):
        return None
    try:
        return WalletAnswer.model_validate_json(body)
    except ValueError:
        return None
