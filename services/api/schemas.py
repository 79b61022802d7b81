"""Request and response bodies of the API (separate on purpose: requests are strict)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Amount = Annotated[int, Field(gt=0, le=10**15, description="minor units")]
Seat = Literal["A", "B", "C"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class BetIn(Strict):
    side: Literal["player", "banker"]
    seat: Seat
    stake: Amount


class BetSlipIn(Strict):
    bets: Annotated[list[BetIn], Field(min_length=1, max_length=3)]


class InsuranceIn(Strict):
    amount: Amount


class DecisionIn(Strict):
    seat: Seat
    choice: Literal["draw", "stand"]


class ThresholdIn(Strict):
    threshold: Annotated[int, Field(ge=1, le=5)]


class MoneyIn(Strict):
    amount: Amount


class PlayerIn(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    role: Literal["player", "dealer", "operator"] = "player"


class TableIn(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,48}$")]
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "THB"
    settings: dict[str, Any] = Field(default_factory=dict)


class OpenRoundIn(Strict):
    video_ref: Annotated[str, Field(max_length=128)] = ""


class CardIn(Strict):
    card: Annotated[str, Field(min_length=2, max_length=2, description="rank + suit, e.g. 'TD'")]


class TimeoutIn(Strict):
    seat: Seat


class VoidIn(Strict):
    reason: Annotated[str, Field(min_length=1, max_length=500)]


class RecalculateIn(Strict):
    cards: Annotated[
        dict[Annotated[str, Field(pattern=r"^(0|[1-9][0-9]?)$")], Annotated[str, Field(min_length=2, max_length=2)]],
        Field(min_length=1, description="index of the dealt card (0-based, shoe order) → corrected card code"),
    ]
    video_ref: Annotated[str, Field(min_length=1, max_length=128)]


class ErrorOut(BaseModel):
    code: str
    message: str


class WagerOut(BaseModel):
    wager_id: str
    side: str
    seat: str
    stake: int


class SlipOut(BaseModel):
    round_id: str
    wagers: list[WagerOut]
    balance: int


class InsuranceOut(BaseModel):
    round_id: str
    insurance: int
    balance: int


class WalletOut(BaseModel):
    player: str
    currency: str
    balance: int
    held: int
    debt: int


class StatementLineOut(BaseModel):
    transfer_id: int
    at: datetime
    kind: str
    amount: int
    round_id: str | None
    wager_id: str | None
    memo: str


class IdentityOut(BaseModel):
    id: str
    role: str
    threshold: int


class TokenOut(BaseModel):
    id: str
    role: str
    token: str


class AppliedOut(BaseModel):
    round_id: str
    phase: str
    events: list[str]
