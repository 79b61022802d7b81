"""A card entered by hand: when the shoe cannot read a card (a reader failed mid-round, a camera that cannot read), an
operator proposes the card the round waits for and a second operator approves it; it is dealt then, and journaled as
a manual card with both names and the reason beside the shoe's own messages (``shoe_journal``, shoe ``manual``).

Only on a table whose settings allow it (``manual_cards``, off by default), and only a card dealt face up: a face-down
card entered by hand would be seen by people before its reveal, so such a round is voided instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from sqlalchemy.orm import Session

from services.cards import Card
from services.games.base import CardWanted
from services.journal.models import MANUAL_SHOE, ShoeJournal
from services.rounds.errors import RoundError
from services.rounds.models import GameTable, Round
from services.rounds.service import RoundService

MANUAL_SOURCE: Final = "manual"


class ManualCardRefusedError(RoundError):
    code = "manual_card_refused"


@dataclass(frozen=True, slots=True)
class ManualCard:
    card: Card
    position: str
    index: int
    text: str  # what the round waits for, as the dealer console says it ("seat A's first card")

    def details(self) -> dict[str, Any]:
        return {"card": str(self.card), "position": self.position, "index": self.index, "text": self.text}


def wanted(service: RoundService, session: Session, round_: Round, card: Card) -> ManualCard:
    """The card as the round's next, checked: the table allows cards by hand, the round waits for a card and deals it
    face up, and the round has not had this card yet; ``ManualCardRefusedError`` naming why otherwise."""
    table = session.get(GameTable, round_.table_id)
    if table is None or not table.manual_cards:
        raise ManualCardRefusedError(
            f"table {round_.table_id} does not take cards by hand (an operator allows it: manual_cards in the table's "
            "settings)",
            reason="no_cards_by_hand",
        )
    port = service.game_of(session, round_)
    with service.reading(session, round_) as engine:
        expecting, dealt = port.expecting(engine), tuple(port.cards(engine))
    if not isinstance(expecting, CardWanted):
        raise ManualCardRefusedError(
            f"round {round_.id} waits for no card (phase {round_.phase})", reason="no_card_wanted"
        )
    if not expecting.face_up:
        raise ManualCardRefusedError(
            f"round {round_.id} waits for {expecting.text}, dealt face down: entered by hand it would be seen before "
            "its reveal — void the round instead",
            reason="face_down_by_hand",
        )
    if card in dealt:
        message = f"card {card} is already dealt in round {round_.id}"
        raise ManualCardRefusedError(message, reason="already_dealt", params={"card": str(card)})
    return ManualCard(card, expecting.position, expecting.index, expecting.text)


def journal_entry(
    round_: Round, proposal_id: int, card: Card, proposer: str, approver: str, reason: str, now: datetime
) -> ShoeJournal:
    """The manual card's place in the table's journal: who entered it, who approved it, and why."""
    return ShoeJournal(
        table_id=round_.table_id, shoe_id=MANUAL_SHOE, boot_id=f"proposal-{proposal_id}", seq=1, kind="card",
        card=str(card), burn=False, disposition="dealt", round_id=round_.id, source=MANUAL_SOURCE,
        reason=f"entered by hand: proposed by {proposer}, approved by {approver}: {reason}"[:500], video_tc="",
        raw="", received_at=now,
    )  # fmt: skip
