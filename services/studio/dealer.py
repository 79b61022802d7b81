"""A simulated dealer: watches the dealer console and deals what it asks for through the simulated shoe.

It is what a human dealer does at the table: read the console's next position, pull a card from
the shoe (the pty simulator, so the card goes through the real serial driver and shoe daemon),
and, when the console says the deck is low, run the rest of it through the shoe as burns (so the controller
can reconcile the whole deck) and load a new one.
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any

from hardware.sim import VirtualShoe, shuffled_deck
from services.bus import topics
from services.bus.client import Subscriber


class SimulatedDealer:
    def __init__(self, url: str, table: str, shoe: VirtualShoe, seed: int = 0, pace: float = 0.15) -> None:
        self.table = table
        self.shoe = shoe
        self.pace = pace  # seconds between noticing a request and dealing (a human is not instant)
        self.rng = random.Random(seed)
        self.cards = shuffled_deck(self.rng.randrange(1 << 30))
        self.console = Subscriber(url, [topics.round_dealer(table)])
        self._dealt: set[tuple[str, str, int]] = set()
        self._reloaded_for: str = ""

    def run(self, stop: threading.Event) -> None:
        self.console.wait_subscribed()
        while not stop.wait(0.02):
            view = self._latest()
            if view:
                self._act(view, stop)
        self.console.close()

    def _latest(self) -> dict[str, Any]:
        messages = self.console.messages
        return json.loads(messages[-1].payload) if messages else {}

    def _act(self, view: dict[str, Any], stop: threading.Event) -> None:
        wanted = view.get("next_card")
        if wanted:
            key = (str(view.get("round_id")), str(wanted["position"]), int(wanted["index"]))
            if key not in self._dealt and self.cards and not stop.wait(self.pace):
                self._dealt.add(key)
                self.shoe.deal(self.cards.pop())
            return
        low = [alert for alert in view.get("alerts", []) if alert["kind"] == "deck_low"]
        if low and low[-1]["at"] != self._reloaded_for:
            self._reloaded_for = low[-1]["at"]
            while self.cards:  # the rest of the deck through the shoe as burns: the controller counts every card
                self.shoe.deal(self.cards.pop(), burn=True)
            self.cards = shuffled_deck(self.rng.randrange(1 << 30))
            self.shoe.new_deck()
