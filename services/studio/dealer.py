"""A simulated dealer: watches the dealer console and deals what it asks for through the simulated shoe.

It is what a human dealer does at the table: read the console's next position, pull a card from
the shoe (the pty simulator, so the card goes through the real serial driver and shoe daemon),
and, when the console says the deck is low, run the rest of it through the shoe as burns (so the controller
can reconcile the whole deck) and load a new one. A shoe of several decks (baccarat's eight) has a cut card about a
deck from its end: it comes out through the shoe, and when the console says the shoe is over the dealer loads a new
one (the cards behind the cut card are not dealt); a new shoe's burn is dealt as the console asks for it.

Its shoe is a physical one: the cards not yet dealt stay in it when the software restarts. They are kept
(``PhysicalShoe``) in the run directory, owner-only and replaced atomically after each card, with the console's
requests it dealt for and the low-deck request it last answered, so a dealer restarted on the same run directory
carries on with the same deck — the one the controller, rebuilt from its journal, has seen part of. Without a kept
shoe that matches (a first start, a file that is not this table's or not readable) it loads a new deck, announced
through the shoe: the controller reconciles the deck it had (a deck not whole is held for an operator).
"""

from __future__ import annotations

import json
import logging
import os
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.codes import DECK
from hardware.sim import VirtualShoe, shuffled_deck
from services.bus import topics
from services.bus.client import Subscriber

log = logging.getLogger("studio.dealer")
REDEAL_S = 15.0  # a console still asking for a card dealt this long ago never got it: deal another
KEEP_DEALT = 32  # the console's requests remembered as dealt (more than a round's)
Request = tuple[str, str, int]  # (round, position, index) of a card the console asks for


class ShoeFileError(ValueError):
    """A kept shoe that cannot be used (not this table's, not readable as one)."""

    code = "bad_shoe_file"


@dataclass(frozen=True)
class PhysicalShoe:
    """What the dealer's shoe holds, as kept between runs of the software."""

    table: str
    cards: tuple[str, ...]  # not dealt yet; the last is the next out
    dealt: tuple[Request, ...] = ()  # the console's requests a card went out for (the newest last)
    answered: str = ""  # when the low-deck request the dealer last answered was made (its alert's ``at``)
    decks: int = 1  # the decks the shoe is filled with
    cut_at: int = 0  # the cut card comes out when this many cards are left (0: no cut card, a one-deck shoe)

    def text(self) -> str:
        body = {"v": 1, "table": self.table, "cards": list(self.cards), "dealt": list(self.dealt)}
        return json.dumps(body | {"answered": self.answered, "decks": self.decks, "cut_at": self.cut_at})

    @classmethod
    def parse(cls, text: str, table: str, where: str, decks: int = 1) -> PhysicalShoe:
        """The kept shoe of ``table`` (filled with ``decks`` decks) in ``text`` (read from ``where``);
        ``ShoeFileError`` saying why it is not."""
        try:
            body = json.loads(text)
        except ValueError:
            raise ShoeFileError(f"{where}: not a kept shoe (not JSON)") from None
        if not isinstance(body, dict) or body.get("v") != 1:
            raise ShoeFileError(f"{where}: not a kept shoe (version {body.get('v') if isinstance(body, dict) else ''})")
        if body.get("table") != table:
            raise ShoeFileError(f"{where}: the shoe of table {body.get('table')!r}, not of {table}")
        if body.get("decks", 1) != decks:
            raise ShoeFileError(f"{where}: a shoe of {body.get('decks', 1)} deck(s), not of {decks}")
        cards, dealt, answered = body.get("cards"), body.get("dealt"), body.get("answered")
        if not isinstance(cards, list) or not all(card in DECK for card in cards) or _over(cards, decks):
            raise ShoeFileError(f"{where}: its cards are not cards of {decks} deck(s)")
        if not isinstance(dealt, list) or not all(_request(item) for item in dealt) or not isinstance(answered, str):
            raise ShoeFileError(f"{where}: its requests are not (round, position, index) triples")
        cut_at = body.get("cut_at", 0)
        if type(cut_at) is not int or cut_at < 0:
            raise ShoeFileError(f"{where}: its cut card is not a count of cards, got {cut_at!r}")
        requests = tuple((str(r), str(p), int(i)) for r, p, i in dealt)
        return cls(table, tuple(cards), requests, answered, decks, cut_at)


def _over(cards: list[str], decks: int) -> bool:
    """Whether any card is there more often than ``decks`` decks hold it."""
    return any(count > decks for count in Counter(cards).values())


def _request(item: Any) -> bool:
    return (
        isinstance(item, list) and len(item) == 3 and isinstance(item[0], str) and isinstance(item[1], str)
        and type(item[2]) is int
    )  # fmt: skip


def keep(path: Path, shoe: PhysicalShoe) -> None:
    """Write ``shoe`` to ``path``, owner-only, replacing what was there at once (a stop mid-write leaves the last
    whole copy)."""
    staged = path.with_name(f"{path.name}.new")
    descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as file:
        os.fchmod(file.fileno(), 0o600)  # a leftover staged file may have been made looser
        file.write(shoe.text())
        file.flush()
        os.fsync(file.fileno())
    os.replace(staged, path)


def kept(path: Path, table: str, decks: int = 1) -> PhysicalShoe | None:
    """The shoe of ``decks`` decks kept at ``path`` for ``table``; None (said in the log when there is a file) if there
    is none that matches."""
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        log.warning("%s: cannot read the kept shoe (%s): a new deck", path, error)
        return None
    try:
        return PhysicalShoe.parse(text, table, str(path), decks)
    except ShoeFileError as error:
        log.warning("%s: a new deck", error)
        return None


class SimulatedDealer:
    def __init__(
        self,
        url: str,
        table: str,
        shoe: VirtualShoe,
        seed: int = 0,
        pace: float = 0.15,
        kept_at: Path | None = None,
        decks: int = 1,
    ) -> None:
        """``kept_at``: where the shoe's cards are kept across restarts (None: nowhere, a new deck every start);
        ``decks``: how many decks the table's shoe is filled with."""
        self.table = table
        self.decks = decks
        self.shoe = shoe
        self.pace = pace  # seconds between noticing a request and dealing (a human is not instant)
        self.rng = random.Random(seed)
        self.kept_at = kept_at
        found = kept(kept_at, table, decks) if kept_at is not None else None
        self._load_first = found is None or not found.cards  # none kept, or run out before a new deck was loaded
        self.cards = list(found.cards) if found is not None else []
        now = time.monotonic()
        self._dealt: dict[Request, float] = {request: now for request in found.dealt} if found is not None else {}
        self._reloaded_for = found.answered if found is not None else ""
        self.cut_at = found.cut_at if found is not None else 0
        self.console = Subscriber(url, [topics.round_dealer(table)])

    def run(self, stop: threading.Event) -> None:
        if self._load_first:
            self._load()
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
            request = (str(view.get("round_id")), str(wanted["position"]), int(wanted["index"]))
            dealt_at = self._dealt.get(request)
            if dealt_at is not None and time.monotonic() - dealt_at < REDEAL_S:
                return  # dealt: the console has not caught up yet
            if self.cards and not stop.wait(self.pace):
                self._dealt[request] = time.monotonic()
                if len(self.cards) == self.cut_at:  # the cut card comes out before the card behind it
                    self.shoe.cut_card()
                    self.cut_at = 0
                self.shoe.deal(self.cards.pop(), burn=bool(wanted.get("burn")))  # the new shoe's burn, as asked
                self._keep()
            return
        ended = [alert for alert in view.get("alerts", []) if alert["kind"] == "shoe_end"]
        if ended and ended[-1]["at"] != self._reloaded_for:  # the cut card's shoe is over: the rest is not dealt
            self._reloaded_for = ended[-1]["at"]
            self._load()
            return
        low = [alert for alert in view.get("alerts", []) if alert["kind"] == "deck_low"]
        if low and low[-1]["at"] != self._reloaded_for:
            self._reloaded_for = low[-1]["at"]
            while self.cards:  # the rest of the deck through the shoe as burns: the controller counts every card
                self.shoe.deal(self.cards.pop(), burn=True)
                self._keep()
            self._load()

    def _load(self) -> None:
        """A new deck in the shoe, announced through it (the controller reconciles the deck before)."""
        self.cards = shuffled_deck(self.rng.randrange(1 << 30), self.decks)
        # a shoe of several decks gets a cut card about a deck from its end (a one-deck shoe runs to its last card)
        self.cut_at = self.rng.randint(52, 70) if self.decks > 1 else 0
        self.shoe.new_deck()
        self._keep()

    def _keep(self) -> None:
        if self.kept_at is None:
            return
        if len(self._dealt) > KEEP_DEALT:
            self._dealt = dict(list(self._dealt.items())[-KEEP_DEALT:])
        shoe = PhysicalShoe(
            self.table, tuple(self.cards), tuple(self._dealt), self._reloaded_for, self.decks, self.cut_at
        )
        keep(self.kept_at, shoe)
