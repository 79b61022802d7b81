"""Versioned JSON payloads of the MQTT topics, validated on both ends.

Every payload has ``v`` (the schema version) and ``type``. ``decode`` refuses anything else with
an error that says what was wrong; consumers log and count such messages and go on.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from hardware.codes import CODE_PATTERN
from services.bus.errors import BusError

VERSION: Literal[1] = 1


class MessageError(BusError, ValueError):
    """A payload that is not valid JSON or does not match its schema."""

    code = "bad_message"


MAX_CROP_BASE64 = 120_000  # ~90 KB of JPEG: a card's crop is a few KB


def jpeg_bytes(crop: str) -> bytes:
    """The JPEG a base64 ``crop`` holds (b"" if it is not base64 of a JPEG)."""
    try:
        data = base64.b64decode(crop, validate=True)
    except (binascii.Error, ValueError):
        return b""
    return data if data.startswith(b"\xff\xd8\xff") else b""


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    v: Literal[1] = VERSION


class Stamp(_Message):
    """Who read it, in which run, in what order, and when (wall clock and studio video timecode)."""

    shoe_id: str = Field(min_length=1, max_length=64)
    boot_id: str = Field(min_length=1, max_length=64)
    seq: int = Field(ge=1)
    ts: str  # ISO 8601 UTC
    video_tc: str  # HH:MM:SS:FF of the studio video clock
    deck: int = Field(ge=0)  # how many new decks this shoe has announced before this message
    # the first seq this run of the daemon stamped: a run that kept its outbox goes on counting, one that lost it
    # begins at 1 again — which a consumer must tell apart (None: a sender that does not say)
    boot_seq: int | None = Field(default=None, ge=1)
    key_id: str | None = Field(default=None, max_length=64)  # the shoe's signing key (services.shoe.signing)
    sig: str | None = Field(default=None, max_length=128)


class ShoeCard(Stamp):
    type: Literal["card"] = "card"
    card: str = Field(pattern=CODE_PATTERN)
    burn: bool = False
    source: Literal["serial", "camera", "sim"]
    confidence: float = Field(ge=0, le=1)
    raw: str = Field(max_length=256)
    # a camera's card: the card as read, a JPEG, base64 (the evidence the operator's tools show)
    crop: str | None = Field(default=None, max_length=MAX_CROP_BASE64)

    @field_validator("crop")
    @classmethod
    def _a_jpeg(cls, crop: str | None) -> str | None:
        if crop is not None and not jpeg_bytes(crop):
            raise ValueError("crop is not a base64 JPEG")
        return crop


class ShoeNewDeck(Stamp):
    type: Literal["new_deck"] = "new_deck"
    raw: str = Field(max_length=256)


class ShoeCutCard(Stamp):
    """The cut card came out of the shoe: the coup being dealt is the shoe's last."""

    type: Literal["cut_card"] = "cut_card"
    raw: str = Field(max_length=256)


ShoeMessage = ShoeCard | ShoeNewDeck | ShoeCutCard  # what a shoe sends on its cards topic
ShoeEvent = Annotated[ShoeMessage, Field(discriminator="type")]


class ShoeStatus(_Message):
    type: Literal["status"] = "status"
    shoe_id: str
    boot_id: str
    state: Literal["online", "offline"]
    device: Literal["connected", "disconnected", "unknown"] = "unknown"
    last_seq: int = Field(default=0, ge=0)  # the latest seq stamped: a consumer behind it has a gap to refill
    first_seq: int = Field(
        default=0, ge=0
    )  # where a consumer with nothing yet starts: the oldest it holds (0: unknown)
    ts: str

    @property
    def online(self) -> bool:
        """Online with its reader connected: it can read a card."""
        return self.state == "online" and self.device != "disconnected"


class ControllerStatus(_Message):
    """A controller process's retained liveness (``offline`` is its last will): the tables it writes."""

    type: Literal["controller_status"] = "controller_status"
    controller: str = Field(min_length=1, max_length=64)
    state: Literal["online", "offline"]
    tables: list[str]
    ts: str


class ShoeAlarm(_Message):
    type: Literal["alarm"] = "alarm"
    shoe_id: str
    boot_id: str
    kind: Literal["misread", "device_alarm", "device_warning", "reader_fault", "invalid_card"]
    after_seq: int | None = Field(default=None, ge=0)  # the last seq stamped before it (None: unknown)
    code: str = ""
    text: str = ""
    ts: str
    video_tc: str
    raw: str = Field(default="", max_length=256)
    key_id: str | None = Field(default=None, max_length=64)
    sig: str | None = Field(default=None, max_length=128)


class ResendRequest(_Message):
    type: Literal["resend"] = "resend"
    shoe_id: str
    from_seq: int = Field(ge=1)
    to_seq: int = Field(ge=1)


M = TypeVar("M", bound=_Message)


class NewDeckCommand(_Message):
    """The dealer loaded a freshly shuffled deck (for a shoe that cannot say so itself)."""

    type: Literal["new_deck"] = "new_deck"
    by: str = Field(min_length=1, max_length=64)  # who announced it: the dealer console, an operator


class RoundChanged(_Message):
    """``…/round/commands``: the API changed a round; its controller reads it again at once."""

    type: Literal["round_changed"] = "round_changed"
    round_id: str = Field(min_length=1, max_length=64)


class RoundView(BaseModel):
    """``…/round/state`` (retained): a table's current round as anyone may see it.

    The round's own fields, then its game's public view: open, since each game adds its own fields
    (Pok Deng its ``hands``; every game only what its engine lets the public see).
    """

    model_config = ConfigDict(frozen=True, extra="allow")
    v: Literal[1] = VERSION
    table_id: str = Field(min_length=1, max_length=64)
    round_id: str | None = Field(default=None, max_length=64)
    number: int | None = Field(default=None, ge=1)
    phase: str | None = Field(default=None, max_length=32)
    opened_at: str | None = None
    betting_closes_at: str | None = None
    window_closes_at: str | None = None
    video_ref: str | None = Field(default=None, max_length=128)
    waiting_for: str | None = None


class NextCard(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    position: str = Field(min_length=1, max_length=16)
    index: int = Field(ge=0)
    face_up: bool
    burn: bool = False  # the new shoe's burn (``position`` "burn"), not a round's card


class Alert(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: str = Field(min_length=1, max_length=32)
    message: str
    at: str | None = None
    card: str | None = Field(default=None, pattern=CODE_PATTERN)


class DealerView(RoundView):
    """``…/round/dealer`` (retained): the dealer console — what to deal next, the deck, alerts, pauses.

    A face-down card shows only as ``received``; ``controller`` is added by the API's relay.
    """

    next_card: NextCard | None = None
    deck_remaining: int | None = Field(default=None, ge=0)
    paused: str = ""
    alerts: list[Alert] = Field(default_factory=list)
    controller: Literal["online", "offline", "unknown"] | None = None


_SHOE_EVENT: TypeAdapter[ShoeMessage] = TypeAdapter(ShoeEvent)


def encode(message: _Message) -> bytes:
    return message.model_dump_json().encode()


def decode_shoe_event(payload: bytes) -> ShoeMessage:
    try:
        return _SHOE_EVENT.validate_json(payload)
    except ValidationError as error:
        raise MessageError(f"bad shoe event: {_describe(error)}") from None


def decode(kind: type[M], payload: bytes) -> M:
    try:
        return kind.model_validate_json(payload)
    except ValidationError as error:
        raise MessageError(f"bad {kind.__name__}: {_describe(error)}") from None


def _describe(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or 'payload'}: {item['msg']}" for item in error.errors()[:5]
    )
