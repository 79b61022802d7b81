"""The deck's watch, as a table's controller keeps it: each deck reconciled when it ends (a deck not whole holds the
table until an operator acknowledges its report), and a deck too low for another round burned off before the next."""

from __future__ import annotations

from sqlalchemy.orm import Session

from services.bus.messages import ShoeNewDeck
from services.controller.parts import Parts
from services.games.base import FINISHED
from services.journal.models import ShoeJournal
from services.journal.table import HeldReport


class DeckWatch(Parts):
    cut: bool  # the shoe's cut card came out (``shoestart``): the cards behind it are not missing
    held: int | None  # the deck report that holds the table until an operator acknowledges
    held_why: str
    _low_deck_alerted: int  # the deck (by shuffle count) already reported as too low

    def _new_deck(self, message: ShoeNewDeck) -> bool:
        """The deck in the shoe ends: reconciled against the full deck (a report kept per deck, written with the new
        deck's journal row); a deck not whole holds the table until an operator acknowledges. Then the new deck
        (False: this message was taken before)."""
        count = self.deck.reconcile(cut=self.cut) if self.deck.touched else None
        written: list[int] = []

        def report(session: Session, entry: ShoeJournal) -> None:
            if count is not None:
                live = self.current.round_id if self.current and self._hidden() else None
                written.append(self.journal.report(session, entry, count, live, self.service.clock.now()))

        if not self._journal(message, "deck", also=report):
            return False  # journaled before (a message delivered again): its report too
        self.deck.shuffle()
        self._count("new_decks")
        if count is not None and written:
            self._count("decks_whole" if count.clean else "decks_not_whole")
            if not count.clean:
                self._hold(HeldReport(written[-1], count))
                self._alert("deck_mismatch", self.held_why)
        self._publish()
        return True

    def _hold(self, report: HeldReport | None) -> None:
        """The deck report that holds the table (None: none does)."""
        self.held, self.held_why = (report.id, report.text()) if report is not None else (None, "")

    def _hold_lifted(self) -> bool:
        """Whether operators have acknowledged every deck report that holds the table (read from the database); the
        next one still held, if any, is what the dealer is told about."""
        assert self.held is not None
        by = self.journal.acknowledged_by(self.held)
        if by is not None:
            self._alert("deck_acknowledged", f"deck report #{self.held} acknowledged by {by}")
        still = self.journal.held()
        if still is not None:
            if still.id != self.held:
                self._hold(still)
                self._publish()
            return False
        self._alert("deck_acknowledged", "every deck report acknowledged: rounds resume")
        self._hold(None)
        self._publish()
        return True

    def _ask_for_burns(self) -> bool:
        """Whether the deck is too low for another round; if so the dealer is asked (once per deck) to run the rest
        of it through the shoe as burns, then load a new deck — the cards that come before the new deck are burns."""
        if self.deck.can_deal(self.most_cards()):
            return False
        if self._low_deck_alerted != self.deck.shuffles:  # once per deck
            self._low_deck_alerted = self.deck.shuffles
            self._alert(
                "deck_low",
                f"{self.deck.remaining} cards left: run them through the shoe as burns, then load a new deck",
            )
            self._publish()
        return True

    def _low_deck_said(self) -> bool:
        """The dealer was asked to burn the rest of this deck (the ask is due once the last result has been read)."""
        return self._low_deck_alerted == self.deck.shuffles

    def _burning(self) -> bool:
        """The dealer was asked to burn the rest of this deck, and no round is being played."""
        finished = self.current is None or self.current.phase in FINISHED
        return finished and self._low_deck_said()
