"""The people at a simulated table: its dealer, who deals what the console asks for through the table's shoe, and its
overhead camera, the shoe's witness. Each reacts to what its screen shows after a human delay; their slips and the
camera's misses are the seed's."""

from __future__ import annotations

import random
from functools import partial
from typing import TYPE_CHECKING, Any

from services.cards import Card
from services.games.base import FINISHED
from services.rounds.checks import PENDING

if TYPE_CHECKING:
    from services.sim.world import Simulation

STALE_MS = 30_000  # a console still asking for a card this long after it was dealt: the dealer scans it again


def deck(rng: random.Random, decks: int = 1) -> list[Card]:
    cards = [Card.from_code(rank + suit) for rank in "23456789TJQKA" for suit in "SHDC"] * decks
    rng.shuffle(cards)
    return cards


class Dealer:
    """Deals what the console asks for, one card per request, through the table's shoe; loads a new deck when
    the console says it is low. Its slips (the table's faults) are the seed's: misreads, burns, a card from
    another shoe, a card dealt early or one too many, a card scanned twice, a new deck in mid-round."""

    def __init__(self, sim: Simulation, table: str) -> None:
        self.sim, self.table, self.rng = sim, table, random.Random(sim.rng.random())
        self.decks = sim.api.decks(table)
        self.cards = deck(self.rng, self.decks)
        self.cut_at = self._cut_at()
        if self.decks > 1:  # a shoe of several decks is loaded through the shoe, announced: its burn comes first
            sim.later(self.rng.uniform(10, 100), f"{table} dealer loads the first shoe", self.new_deck, table)
        self.out: list[Card] = []  # cards of the current deck already out of the shoe
        self.view: dict[str, Any] = {}
        self.dealt: dict[tuple[str, str, int], tuple[Card, frozenset[str]]] = {}  # request -> (card, refusals then)
        self._reloaded_for = ""
        self._pending: set[tuple[str, str, int]] = set()

    def on_view(self, view: dict[str, Any]) -> None:
        self.view = view
        alerts = view.get("alerts", [])
        low = [alert for alert in alerts if alert["kind"] == "deck_low"]
        if low and low[-1]["at"] != self._reloaded_for:
            self._reloaded_for = low[-1]["at"]
            self.sim.later(self.rng.uniform(500, 2_000), f"{self.table} dealer runs out the deck and loads a new one",
                           self._run_out, self.table)  # fmt: skip
        ended = [alert for alert in alerts if alert["kind"] == "shoe_end"]
        if ended and ended[-1]["at"] != self._reloaded_for:  # the cut card's shoe is over: a new shoe, the rest unseen
            self._reloaded_for = ended[-1]["at"]
            self.sim.later(self.rng.uniform(500, 2_000), f"{self.table} dealer loads a new shoe", self.new_deck,
                           self.table)  # fmt: skip
        if view.get("held"):
            self.sim.operator.deck_held(self.table)  # the dealer calls the pit boss
        wanted = view.get("next_card")
        if wanted:
            key = (str(view.get("round_id")), str(wanted["position"]), int(wanted["index"]))
            again = key in self.dealt and bool(self._refusals(key) - self.dealt[key][1])
            if key not in self._pending and (key not in self.dealt or again):
                self._pending.add(key)
                self.sim.later(self.rng.uniform(150, 700), f"{self.table} dealer deals {key[1]}{key[2]}",
                               lambda: self._deal(key), self.table)  # fmt: skip
            return
        phase = view.get("phase")
        if phase == "betting" and self.sim.fault("early", 0.02):
            self.sim.later(self.rng.uniform(100, 2_000), f"{self.table} dealer deals before betting closed",
                           self._stray, self.table)  # fmt: skip
        elif phase in FINISHED and self.sim.fault("extra", 0.03):
            self.sim.later(self.rng.uniform(100, 800), f"{self.table} dealer deals one card too many",
                           self._stray, self.table)  # fmt: skip

    def _deal(self, key: tuple[str, str, int]) -> None:
        self._pending.discard(key)
        if not self._wants(key):
            return  # the console moved on meanwhile
        sim, shoe = self.sim, self.sim.shoes[self.table]
        reloaded = sim.fault("deck", 0.01)
        if reloaded:
            self.new_deck()
        # a shoe that burns takes the card after a new shoe as its burn: the request it was meant for stays open
        void = reloaded and self.decks > 1
        if sim.fault("burn", 0.03):
            sim.send_card(self.table, shoe.card(self._pull(), burn=True))
        if sim.fault("foreign", 0.02):
            sim.send_card(self.table, sim.foreign_card(self.table, deck(self.rng)[0]))  # not of this deck
        if self.out and sim.fault("rescan", 0.02):
            sim.send_card(self.table, shoe.card(self.rng.choice(self.out)))  # a card scanned a second time
        if len(self.cards) == self.cut_at:  # the cut card comes out before the card behind it
            self.cut_at = 0
            sim.send_card(self.table, shoe.cut_card())
        card = self._pull()
        burn = key[1] == "burn"  # the new shoe's burn, as the console asks for it
        if not void:
            self.dealt[key] = (card, frozenset())
            self.dealt[key] = (card, self._refusals(key))
        if sim.fault("misread", 0.03):  # the shoe could not read it: the dealer scans it again
            sim.send_alarm(self.table, shoe.misread())
            sim.later(self.rng.uniform(500, 1_500), f"{self.table} dealer re-scans {card}",
                      lambda: sim.send_card(self.table, shoe.card(card, burn)), self.table)  # fmt: skip
        else:
            sim.send_card(self.table, shoe.card(card, burn))
        if not void:
            self._watch(key, card)

    def _wants(self, key: tuple[str, str, int]) -> bool:
        """Whether the console asks for ``key``'s card now."""
        wanted: dict[str, Any] | None = self.view.get("next_card")
        return wanted is not None and (str(self.view.get("round_id")), wanted["position"], wanted["index"]) == key

    def _watch(self, key: tuple[str, str, int], card: Card) -> None:
        """A console still asking for a dealt card long after: the dealer scans the card again (as the studio's
        procedure says; the scan may never have reached the controller)."""

        def check() -> None:
            if self._wants(key) and self.dealt[key][0] == card and not self._refusals(key) - self.dealt[key][1]:
                self.sim.count("dealer_rescans")
                self.sim.send_card(self.table, self.sim.shoes[self.table].card(card))
                self._watch(key, card)

        self.sim.later(STALE_MS, f"{self.table} dealer checks {key[1]}{key[2]} was taken", check, self.table)

    def _refusals(self, key: tuple[str, str, int]) -> frozenset[str]:
        """The refusals on the console (by when they were raised) that may be of the card dealt for ``key`` (one
        the dealer must replace: a card of a new deck that this round already has; the console does not name a
        face-down one). A refusal not among those seen when the card was dealt is new: the console keeps only its
        latest alerts, so they are told apart by time, not counted."""
        card = str(self.dealt[key][0])
        return frozenset(
            str(alert["at"])
            for alert in self.view.get("alerts", [])
            if alert["kind"] == "refused_card"
            and (alert.get("card") == card or alert["message"].startswith("a face-down card"))
        )

    def _stray(self) -> None:
        self.sim.send_card(self.table, self.sim.shoes[self.table].card(self._pull()))

    def _pull(self) -> Card:
        if not self.cards:
            self.new_deck()
        card = self.cards.pop()
        self.out.append(card)
        return card

    def _run_out(self) -> None:
        """The rest of the deck through the shoe as burns (so every card is counted), then a new deck."""
        shoe = self.sim.shoes[self.table]
        while self.cards:
            self.sim.send_card(self.table, shoe.card(self._pull(), burn=True))
        self.new_deck()

    def new_deck(self) -> None:
        """A new deck (or shoe) loaded and announced through the shoe; its burn, if any, is asked for afresh."""
        self.cards, self.out = deck(self.rng, self.decks), []
        self.dealt = {key: dealt for key, dealt in self.dealt.items() if key[1] != "burn"}
        self.cut_at = self._cut_at()
        self.sim.send_card(self.table, self.sim.shoes[self.table].new_deck())

    def _cut_at(self) -> int:
        """Where the cut card goes: about a deck from the end of a shoe of several (a one-deck shoe has none)."""
        return self.rng.randint(52, 70) if self.decks > 1 else 0


class Camera:
    """A table's overhead camera, the shoe's witness: it sees each card the console says is being checked, a moment
    later — or, by the seed (its own random numbers), misses it, sees another card, or sees it after its window."""

    def __init__(self, sim: Simulation, table: str) -> None:
        self.sim, self.table = sim, table
        self.rng = random.Random(f"camera:{sim.settings.seed}:{table}")
        self.round_id = ""
        self.seen: set[int] = set()  # positions of the current round the camera has looked at

    def on_view(self, view: dict[str, Any]) -> None:
        round_id = str(view.get("round_id"))
        if round_id != self.round_id:
            self.round_id, self.seen = round_id, set()
        for check in view.get("checks", []):
            position = int(check["position"])
            if check["status"] != PENDING or position in self.seen:
                continue
            self.seen.add(position)
            roll = self.rng.random()
            if roll < 0.03:
                self.sim.count("camera_missed")
                continue
            code = str(check["card"])
            if roll < 0.06:
                self.sim.count("camera_misread")
                code = self.rng.choice([str(card) for card in deck(self.rng) if str(card) != code])
            late = roll > 0.98
            delay = self.rng.uniform(4_000, 6_000) if late else self.rng.uniform(100, 1_500)
            self.sim.later(delay, f"{self.table} camera sees {code}{' late' if late else ''}",
                           partial(self._see, code), self.table)  # fmt: skip

    def _see(self, code: str) -> None:
        self.sim.send_sighting(self.table, self.sim.cameras[self.table].card(Card.from_code(code)))
