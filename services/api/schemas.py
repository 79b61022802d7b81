"""Request and response bodies of the API (separate on purpose: requests are strict)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.rounds.adapters import AppliedOut, Strict

Amount = Annotated[int, Field(gt=0, le=10**15, description="minor units")]


class ThresholdIn(Strict):
    threshold: Annotated[int, Field(ge=1, le=5)]


class MoneyIn(Strict):
    amount: Amount


class PlayerIn(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    role: Literal["player", "dealer", "operator"] = "player"


class TableIn(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,48}$")]
    game: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,16}$", description="the game dealt at the table")] = "pokdeng"
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "THB"
    settings: dict[str, Any] = Field(default_factory=dict)


class OpenRoundIn(Strict):
    video_ref: Annotated[str, Field(max_length=128)] = ""


class CardIn(Strict):
    card: Annotated[str, Field(min_length=2, max_length=2, description="rank + suit, e.g. 'TD'")]


class TimeoutIn(Strict):
    seat: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{0,16}$", description="whose window (empty: any)")] = ""


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
    """Who is calling, and their settings in each game (Pok Deng: ``threshold``)."""

    model_config = ConfigDict(extra="allow")

    id: str
    role: str


class DealersOut(BaseModel):
    table_id: str
    dealers: list[str]


class TokenOut(BaseModel):
    id: str
    role: str
    token: str


__all__ = ["AppliedOut", "Strict"]
