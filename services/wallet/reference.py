"""A reference operator's wallet: a real HTTP server (FastAPI under uvicorn) speaking the seamless protocol — what an
operator integrating the studio builds on their side, here to test and measure the studio against, and to make
misbehave.

It keeps balances, applies each ``transaction_id`` once (a repeat gets the first answer again, as the protocol
requires), refuses a debit beyond the balance or of a blocked player, rolls back only debits it applied, checks
every body's signature and signs its answers. Faults, each for the next N calls: ``slow`` (apply, then answer after
the client has given up), ``error`` (answer 500 before applying), ``lose`` (apply, then answer 500: the answer is
lost), ``unsigned`` (apply, answer without a signature), ``twice`` (answer a repeat with a second, different answer: the
studio keeps the first). It takes a round's credits as one request (``POST /credits``) unless ``batch_credits`` is off
(404, as a wallet without the endpoint answers), and can leave the last ``leave_out`` calls of such a batch unanswered.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, Response

from services.wallet.protocol import KINDS, SIGNATURE_HEADER, WalletCall, signature, signed_by

SECRET = b"shared-secret-for-tests"


@dataclass
class OperatorWallet:
    balances: dict[str, int] = field(default_factory=dict)
    blocked: set[str] = field(default_factory=set)
    faults: Counter[str] = field(default_factory=Counter)
    applied: dict[str, dict[str, Any]] = field(default_factory=dict)  # transaction id -> its answer
    debits: dict[str, WalletCall] = field(default_factory=dict)  # applied debits, by transaction id
    received: Counter[str] = field(default_factory=Counter)  # requests per transaction id
    applications: Counter[str] = field(default_factory=Counter)  # times each transaction changed a balance
    slow_s: float = 1.0
    secret: bytes = SECRET
    opening_balance: int = 0  # what a player the wallet has not met yet holds
    batch_credits: bool = True  # takes a round's credits as one request (``POST /credits``); else 404 there
    batches: int = 0  # batch requests it answered
    leave_out: int = 0  # answers a batch leaves out (the last N calls: their outcome stays unknown to the studio)

    def app(self) -> FastAPI:
        app = FastAPI()

        if self.batch_credits:

            @app.post("/credits")
            async def credits(request: Request) -> Response:
                """A round's credits in one request (``services.wallet.credits``): each applied as alone."""
                body = await request.body()
                if not signed_by(body, self.secret, request.headers.get(SIGNATURE_HEADER)):
                    return Response(status_code=401)
                calls = [WalletCall.model_validate(each) for each in json.loads(body)["calls"]]
                if any(each.kind != "credit" for each in calls):
                    return Response(status_code=422)
                self.batches += 1
                for each in calls:
                    self.received[each.transaction_id] += 1
                if self._fault("error"):
                    return Response(status_code=500)
                answers = [self._apply(each) for each in calls]  # each applied; the last ``leave_out`` not said
                answers = answers[: max(0, len(answers) - self.leave_out)]
                return await self._answered(_json({"answers": answers}))

        @app.post("/{kind}")
        async def call(kind: str, request: Request) -> Response:
            if kind not in KINDS:
                return Response(status_code=404)
            body = await request.body()
            if not signed_by(body, self.secret, request.headers.get(SIGNATURE_HEADER)):
                return Response(status_code=401)
            wallet_call = WalletCall.model_validate_json(body)
            assert wallet_call.kind == kind
            self.received[wallet_call.transaction_id] += 1
            if self._fault("error"):
                return Response(status_code=500)
            return await self._answered(_json(self._apply(wallet_call)))

        return app

    async def _answered(self, payload: bytes) -> Response:
        """The answer as the faults have it: late, lost, or unsigned."""
        if self._fault("slow"):
            await asyncio.sleep(self.slow_s)
        if self._fault("lose"):
            return Response(status_code=500)
        headers = {} if self._fault("unsigned") else {SIGNATURE_HEADER: signature(payload, self.secret)}
        return Response(payload, media_type="application/json", headers=headers)

    def _fault(self, name: str) -> bool:
        if self.faults[name] > 0:
            self.faults[name] -= 1
            return True
        return False

    def _apply(self, call: WalletCall) -> dict[str, Any]:
        again = self.applied.get(call.transaction_id)
        if again is not None:  # a repeat: the first answer — or, misbehaving, a second, different one
            return refused(call.transaction_id, "duplicate", "seen before") if self._fault("twice") else again
        answer = self._answer(call)
        self.applied[call.transaction_id] = answer
        return answer

    def _answer(self, call: WalletCall) -> dict[str, Any]:
        player, tid = call.player, call.transaction_id
        balance = self.balances.get(player, self.opening_balance)
        if call.kind == "debit":
            if player in self.blocked:
                return refused(tid, "player_blocked", f"{player} is blocked")
            if call.amount > balance:
                return refused(tid, "insufficient_funds", f"{player} has {balance}, {call.amount} asked")
            self.balances[player] = balance - call.amount
            self.debits[tid] = call
        elif call.kind == "credit":
            self.balances[player] = balance + call.amount
        else:
            original = self.debits.pop(call.original_transaction_id or "", None)
            if original is None:
                return refused(tid, "unknown_transaction", "no such debit to roll back")
            self.balances[player] = balance + original.amount
        self.applications[tid] += 1
        return {"status": "ok", "transaction_id": tid, "balance": self.balances[player],
                "operator_reference": uuid.uuid4().hex}  # fmt: skip


def refused(transaction_id: str, code: str, message: str) -> dict[str, Any]:
    return {"status": "refused", "transaction_id": transaction_id, "code": code, "message": message}


def _json(answer: dict[str, Any]) -> bytes:
    return json.dumps(answer).encode()


@contextmanager
def serving(wallet: OperatorWallet, port: int = 0, http: str = "auto") -> Iterator[str]:
    """The wallet under uvicorn in a thread, on ``port`` (0: a free one), with uvicorn's HTTP parser ``http``; yields
    its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
        port = int(probe.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(wallet.app(), host="127.0.0.1", port=port, log_level="warning", http=http))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the reference operator's wallet did not start on port {port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def app_from_environment() -> FastAPI:
    """``uvicorn --factory services.wallet.reference:app_from_environment``: a wallet that opens every player with
    ``REFERENCE_WALLET_OPENING`` minor units, signing with ``REFERENCE_WALLET_SECRET``."""
    opening = int(os.environ.get("REFERENCE_WALLET_OPENING", "0"))
    return OperatorWallet(secret=os.environ.get("REFERENCE_WALLET_SECRET", "").encode() or SECRET,
                          opening_balance=opening).app()  # fmt: skip
