"""A shoe's start and end, as a table's controller keeps them.

The start: for a game that burns (baccarat, Dragon Tiger), the new shoe's first card is turned face up and as many
cards as it says are burned face down; only then does a round take a card. Every card the shoe reads until the burn
is done is a burn — a shoe on the line dialect cannot mark one so — and the dealer console says what to burn. A new
shoe loaded while a round is being dealt (a slip) does not stop it: the round takes its cards from the new shoe, and
the burn comes once it is over.

The end: when the shoe reports its cut card, the coup being dealt (or, between coups, the next) is the shoe's last;
after it no round opens until a new shoe is loaded, and the cards behind the cut card are not missing when the shoe
is reconciled. A restarted controller finds where both stand in the journal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.bus.messages import ShoeCard, ShoeCutCard
from services.cards import Card
from services.controller.parts import Parts
from services.games.base import FINISHED

FIRST = -1  # the burn waits for the shoe's first card, to be turned face up
DURING = "the cut card: the round being dealt is the shoe's last"
BETWEEN = "the cut card, between rounds: the next round is the shoe's last"


class ShoeStart(Parts):
    burn_left: int | None  # cards still to burn at this shoe: None, no burn under way; FIRST, its first card
    burn_of: int  # how many the first card said to burn
    cut: bool  # the cut card came out of this shoe
    cut_round: str | None  # the shoe's last round (None: the next to open, the cut card came between rounds)
    _shoe_end_said: bool  # the console was told to load a new shoe

    def _shoe_opened(self) -> None:
        """A new shoe is loaded: its burn, if the table's game burns one, comes before any round's card."""
        self.burn_left = FIRST if self.service.burn_rule(self.table_id) is not None else None
        self.burn_of = 0
        self.cut, self.cut_round, self._shoe_end_said = False, None, False

    def _cut_card(self, message: ShoeCutCard) -> None:
        """The cut card came out: the coup being dealt (or, between coups, the next) is the shoe's last."""
        current = self.current
        dealing = current is not None and current.phase not in FINISHED
        if not self._journal(message, "cut", DURING if dealing else BETWEEN):
            return  # journaled before (a message delivered again)
        self.cut, self.cut_round = True, current.round_id if dealing and current is not None else None
        self._alert("cut_card", "the cut card came out: this is the shoe's last round; then load a new shoe")
        self._publish()

    def _round_opened(self, round_id: str) -> None:
        """A round opened: after a cut card that came between rounds, it is the shoe's last."""
        if self.cut and self.cut_round is None:
            self.cut_round = round_id

    def _shoe_over(self) -> bool:
        """The shoe's last round is over (its cut card came out): no round opens until a new shoe is loaded."""
        if not self.cut or self.cut_round is None:
            return False
        if not self._shoe_end_said:
            self._shoe_end_said = True
            self._alert("shoe_end", "the shoe is over (its cut card came out): load a new shoe")
            self._publish()
        return True

    def _burning_now(self) -> bool:
        """A burn is due, and no round is being dealt (a round with cards dealt finishes first)."""
        current = self.current
        dealing = current is not None and current.phase not in FINISHED and bool(current.cards)
        return self.burn_left is not None and not dealing

    def _burn_at_start(self, message: ShoeCard, card: Card) -> bool:
        """Take ``card`` as the new shoe's burn if one is under way (True); False: no burn is, the card is a round's."""
        if self.burn_left is None or not self._burning_now():
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
        if self.burn_left is None or not self._burning_now():
            return None
        if self.burn_left == FIRST:
            text = "the burn: turn the new shoe's first card face up"
            return {"position": "burn", "index": 0, "face_up": True, "burn": True, "text": text}
        done = self.burn_of - self.burn_left
        text = f"the burn: {self.burn_left} more card(s) face down ({done} of {self.burn_of} burned)"
        return {"position": "burn", "index": done + 1, "face_up": False, "burn": True, "text": text}

    def _recover_shoe(self, rows: Sequence[Any]) -> None:
        """Where the table's current shoe stands, from the journal (the rows since its last new shoe): its burn, and
        its cut card."""
        rule = self.service.burn_rule(self.table_id)
        last = max((index for index, row in enumerate(rows) if row.disposition == "deck"), default=None)
        since = rows[last + 1 :] if last is not None else rows
        self.burn_left, self.burn_of, self._shoe_end_said = None, 0, False
        cut = [row for row in since if row.disposition == "cut"]
        self.cut = bool(cut)
        self.cut_round = cut[0].round_id if cut and cut[0].reason == DURING else None
        if cut and cut[0].reason == BETWEEN:  # the next round to open after it was the last
            later = [row.round_id for row in since[since.index(cut[0]) + 1 :] if row.round_id != cut[0].round_id]
            self.cut_round = later[0] if later else None
        if rule is None or last is None:
            return
        before = {row.round_id for row in rows[:last] if row.disposition == "dealt"}  # a round dealt across the change
        if any(row.disposition == "dealt" and row.round_id not in before for row in since):
            return  # a round has taken its first card from this shoe: its burn was done
        burned = [Card.from_code(row.card) for row in since if row.disposition == "burn" and row.card]
        if not burned:
            self.burn_left = FIRST
            return
        self.burn_of = rule(burned[0])
        self.burn_left = max(0, self.burn_of - (len(burned) - 1)) or None
