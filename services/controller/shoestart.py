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
CUT, CUT_BETWEEN, CUT_AGAIN = "cut", "cut_between", "cut_again"  # the journal's dispositions of a cut card
NOTICES = frozenset({"burn_done", "cut_card", "shoe_end"})  # console alerts that say what comes next, not a fault


class ShoeStart(Parts):
    burn_left: int | None  # cards still to burn at this shoe: None, no burn under way; FIRST, its first card
    burn_of: int  # how many the first card said to burn
    cut: bool  # the cut card came out of this shoe
    cut_round: str | None  # the shoe's last round, once known (None: the next to open after ``cut_after``)
    cut_after: str | None  # the cut card came between rounds: the round that had ended then (None: no round yet)
    _shoe_end_said: bool  # the console was told to load a new shoe

    def _shoe_opened(self) -> None:
        """A new shoe is loaded: its burn, if the table's game burns one, comes before any round's card."""
        self.burn_left = FIRST if self.service.burn_rule(self.table_id) is not None else None
        self.burn_of = 0
        self.cut, self.cut_round, self.cut_after, self._shoe_end_said = False, None, None, False

    def _cut_card(self, message: ShoeCutCard) -> None:
        """The cut card came out: the coup being dealt (or, between coups, the next) is the shoe's last. A cut card
        reported again (a frame sent twice) is journaled and changes nothing."""
        current = self.current
        dealing = current is not None and current.phase not in FINISHED
        disposition = CUT_AGAIN if self.cut else CUT if dealing else CUT_BETWEEN
        reason = "the cut card reported again" if self.cut else "the cut card: the shoe's last round"
        if not self._journal(message, disposition, reason) or self.cut:
            return  # journaled before (a message delivered again), or the shoe's cut card had come out already
        self._cut(dealing, current.round_id if current is not None else None)
        self._alert("cut_card", "the cut card came out: this is the shoe's last round; then load a new shoe")
        self._publish()

    def _cut(self, dealing: bool, round_id: str | None) -> None:
        """The shoe's cut card is out: the round being dealt is its last, or (between rounds) the next to open."""
        self.cut, self.cut_round, self.cut_after = True, round_id if dealing else None, None if dealing else round_id

    def _shoe_over(self) -> bool:
        """The shoe's last round is over (its cut card came out): no round opens until a new shoe is loaded. Asked
        between rounds: a round other than the one that had ended at the cut card is the last one, ended."""
        current = self.current
        if not self.cut:
            return False
        if self.cut_round is None:
            if current is None or current.round_id == self.cut_after:
                return False  # the shoe's last round has not opened yet
            self.cut_round = current.round_id  # opened after the cut card (by the controller, or an operator)
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
        cut = [row for row in since if row.disposition in (CUT, CUT_BETWEEN)]
        self.cut, self.cut_round, self.cut_after = False, None, None
        if cut:
            self._cut(cut[0].disposition == CUT, cut[0].round_id)
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
