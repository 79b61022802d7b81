"""Request and response bodies of the API (separate on purpose: requests are strict)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from services.rounds.adapters import AppliedOut, Strict
from services.rounds.display import RESULT_PAUSE_MS

Amount = Annotated[int, Field(gt=0, le=10**15, description="minor units")]


class ThresholdIn(Strict):
    threshold: Annotated[int, Field(ge=1, le=5)]


class MoneyIn(Strict):
    amount: Amount


class PlayerIn(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    role: Annotated[
        Literal["player", "dealer", "operator", "admin"],
        Field(description="a player's account (an operator or an admin makes it), or a staff account (an admin's)"),
    ] = "player"


VIDEO_URL_TEMPLATE = (
    "where operators watch a moment of the table's video: an http(s) URL with any of {table}, {round}, {video_tc}, "
    "{video_ref}, e.g. https://recorder.local/{table}?tc={video_tc} ('' for none)"
)


RETURN_OVERRIDE = (
    "run the table even though its settings let a bet the house takes return 100 % or more (refused otherwise)"
)


OVERLAY_DELAY = "the overlay holds every change back this long, to match the viewers' stream latency (ms)"
LANGUAGE = "the table's language on its overlay: English, Vietnamese or Thai"
PAUSE_LOW, PAUSE_HIGH = RESULT_PAUSE_MS
RESULT_PAUSE = (
    "how long a round's result and payouts stay up before the next round opens, from the table's next round (ms; "
    "unset: the controller's own setting, 7 s by default; null in a change sets it back to that)"
)
WALLET = (
    "whose books hold the players' money, fixed for the table's life: internal (the studio's ledger) or operator "
    "(the operator's wallet over HTTP, the studio's ledger its mirror; Pok Deng tables)"
)


VERIFY = (
    "the shoe + camera cross-check: off; warn (a card the overhead camera does not see as the shoe read it alerts the "
    "dealer); hold (and the round's settlement waits for an operator's word on it); from the next round"
)
VERIFY_WINDOW = "how long the overhead camera has to see a card once it is shown, milliseconds"
MANUAL_CARDS = (
    "whether a card the shoe cannot read may be entered by hand: an operator proposes it, a second operator approves "
    "(POST /v1/operator/proposals, action card); face-up cards only"
)


class TableIn(Strict):
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,48}$")]
    game: Annotated[str, Field(pattern=r"^[a-z0-9_]{1,16}$", description="the game dealt at the table")] = "pokdeng"
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] = "THB"
    settings: dict[str, Any] = Field(default_factory=dict)
    video_url_template: Annotated[str, Field(max_length=500, description=VIDEO_URL_TEMPLATE)] = ""
    allow_return_over_100: Annotated[bool, Field(description=RETURN_OVERRIDE)] = False
    overlay_delay_ms: Annotated[int, Field(ge=0, le=30_000, description=OVERLAY_DELAY)] = 0
    language: Annotated[Literal["en", "vi", "th"], Field(description=LANGUAGE)] = "en"
    result_pause_ms: Annotated[int | None, Field(ge=PAUSE_LOW, le=PAUSE_HIGH, description=RESULT_PAUSE)] = None
    wallet: Annotated[Literal["internal", "operator"], Field(description=WALLET)] = "internal"
    verify: Annotated[Literal["off", "warn", "hold"], Field(description=VERIFY)] = "off"
    verify_window_ms: Annotated[int, Field(ge=500, le=30_000, description=VERIFY_WINDOW)] = 3000
    manual_cards: Annotated[bool, Field(description=MANUAL_CARDS)] = False


class TableChangeIn(Strict):
    """What to change (what is left out stays): the settings apply from the table's next round."""

    video_url_template: Annotated[str | None, Field(max_length=500, description=VIDEO_URL_TEMPLATE)] = None
    settings: Annotated[dict[str, Any] | None, Field(description="the game's settings, whole")] = None
    allow_return_over_100: Annotated[bool | None, Field(description=RETURN_OVERRIDE)] = None
    overlay_delay_ms: Annotated[int | None, Field(ge=0, le=30_000, description=OVERLAY_DELAY)] = None
    language: Annotated[Literal["en", "vi", "th"] | None, Field(description=LANGUAGE)] = None
    result_pause_ms: Annotated[int | None, Field(ge=PAUSE_LOW, le=PAUSE_HIGH, description=RESULT_PAUSE)] = None
    verify: Annotated[Literal["off", "warn", "hold"] | None, Field(description=VERIFY)] = None
    verify_window_ms: Annotated[int | None, Field(ge=500, le=30_000, description=VERIFY_WINDOW)] = None
    manual_cards: Annotated[bool | None, Field(description=MANUAL_CARDS)] = None


class OpenRoundIn(Strict):
    video_ref: Annotated[str, Field(max_length=128)] = ""


class TimeoutIn(Strict):
    seat: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{0,16}$", description="whose window (empty: any)")] = ""


class VoidIn(Strict):
    reason: Annotated[str, Field(min_length=1, max_length=500)]


CardIndex = Annotated[str, Field(pattern=r"^(0|[1-9][0-9]?)$")]  # a dealt card's place, 0-based, in shoe order
CardCode = Annotated[str, Field(min_length=2, max_length=2)]
CardFixes = Annotated[
    dict[CardIndex, CardCode],
    Field(min_length=1, description="index of the dealt card (0-based, shoe order) → corrected card code"),
]


class RecalculateIn(Strict):
    cards: CardFixes
    video_ref: Annotated[str, Field(min_length=1, max_length=128)]


class ProposalIn(Strict):
    """For a second operator: a correction (``cards`` and ``video_ref``) or a void (``reason``) of a settled round, or
    a card the shoe could not read entered by hand as a live round's next (``card`` and ``reason``)."""

    round_id: Annotated[str, Field(min_length=1, max_length=64)]
    action: Literal["void", "correct", "card"]
    reason: Annotated[str, Field(max_length=500)] = ""
    cards: Annotated[dict[CardIndex, CardCode], Field(default_factory=dict)]
    video_ref: Annotated[str, Field(max_length=128)] = ""
    card: Annotated[str, Field(max_length=2, description="action card: rank + suit, e.g. 'TD'")] = ""


class PreviewIn(Strict):
    cards: CardFixes


class ConfirmReadIn(Strict):
    """An operator's word on a card the overhead camera did not confirm (``verify``)."""

    read: Annotated[Literal["shoe", "camera"], Field(description="whose read of the card is right")]
    reason: Annotated[str, Field(min_length=1, max_length=500, description="what the video shows")]


class AcknowledgeIn(Strict):
    note: Annotated[str, Field(min_length=1, max_length=1000, description="what the count of the deck found")]


class RejectIn(Strict):
    reason: Annotated[str, Field(min_length=1, max_length=500)]


class ErrorOut(BaseModel):
    """A refusal: ``code`` (stable, one per kind), ``message`` (English, for logs and people integrating); where the
    refusal has one, ``reason`` (finer than the code: ``does_not_beat``, ``seat_taken``…) and its ``params`` (card
    codes, seats, numbers), from which a page writes the sentence in its reader's language."""

    code: str
    message: str
    reason: str | None = None
    params: dict[str, Any] | None = None


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


class StaffOut(BaseModel):
    """A staff account: an operator whose token an admin issued decides no money until a second admin confirms it."""

    id: str
    role: str
    created_at: datetime
    token_issued_by: str
    confirmed_by: str | None
    awaiting_confirmation: bool


class StaffEventOut(BaseModel):
    """One line of the staff log: an account made, a token reissued, a table given or taken, an action refused."""

    id: int
    at: datetime
    actor: str
    actor_role: str
    action: str
    subject: str
    detail: str
    address: str


__all__ = ["AppliedOut", "Strict"]
