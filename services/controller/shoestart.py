"""The burn at a new shoe, as a table's controller keeps it, for a game that burns one (baccarat, Dragon Tiger): the
new shoe's first card is turned face up and as many cards as it says are burned face down; only then does a round
take a card. Every card the shoe reads until the burn is done is a burn — a shoe on the line dialect cannot mark one
so — and the dealer console says what to burn. A restarted controller finds where the burn stands in the journal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.bus.messages import ShoeCard
from services.cards import Card
from services.controller.parts import Parts

FIRST = -1  # the burn waits for the shoe's first card, to be turned face up


class ShoeStart(Parts):
    burn_left: int | None  # cards still to burn at this shoe: None, no burn under way; FIRST, its first card
    burn_of: int  # how many the first card said to burn

    def _shoe_opened(self) -> None:
        """A new shoe is loaded: its burn, if the table's game burns one, comes before any round's card."""
        self.burn_left = FIRST if self.service.burn_rule(self.table_id) is not None else None
        self.burn_of = 0

    def _burn_at_start(self, message: ShoeCard, card: Card) -> bool:
        """Take ``card`` as the new shoe's burn if one is under way (True); False: no burn is, the card is a round's."""
        if self.burn_left is None:
            return False
        if self.burn_left == FIRST:
            rule = self.service.burn_rule(self.table_id)
            count = rule(card) if rule is not None else 0
            reason = f"the new shoe's first card, turned face up: {count} to burn"
            left = count
        else:
            left = self.burn_left - 1
            reason = f"burned at the new shoe ({self.burn_of - left} of {self.burn_of})"
        if not self._journal(message, "burn", reason):
            return True  # journaled before (a message delivered again): counted then
        self.deck.record(card)
        self._count("burn_cards")
        if self.burn_left == FIRST:
            self.burn_of = left
        self.burn_left = left or None
        if self.burn_left is None:
            self._alert("burn_done", f"the new shoe's burn is done ({self.burn_of} after {card}): the deal may begin")
        self._publish()
        return True

    def _burn_wanted(self) -> dict[str, Any] | None:
        """What the console asks for while the burn is under way: the card, and what to say."""
        if self.burn_left is None:
            return None
        if self.burn_left == FIRST:
            text = "the burn: turn the new shoe's first card face up"
            return {"position": "burn", "index": 0, "face_up": True, "burn": True, "text": text}
        done = self.burn_of - self.burn_left
        text = f"the burn: {self.burn_left} more card(s) face down ({done} of {self.burn_of} burned)"
        return {"position": "burn", "index": done + 1, "face_up": False, "burn": True, "text": text}

    def _recover_burn(self, rows: Sequence[Any]) -> None:
        """Where the burn of the table's current shoe stands, from the journal: the rows since its last new shoe."""
        rule = self.service.burn_rule(self.table_id)
        last = max((index for index, row in enumerate(rows) if row.disposition == "deck"), default=None)
        self.burn_left, self.burn_of = None, 0
        if rule is None or last is None:
            return
        since = rows[last + 1 :]
        if any(row.disposition == "dealt" for row in since):
            return  # a round has taken a card from this shoe: its burn was done
        burned = [Card.from_code(row.card) for row in since if row.disposition == "burn" and row.card]
        if not burned:
            self.burn_left = FIRST
            return
        self.burn_of = rule(burned[0])
        self.burn_left = max(0, self.burn_of - (len(burned) - 1)) or None
