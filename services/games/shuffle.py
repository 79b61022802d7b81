"""A committed server shuffle: the deck order is fixed and its hash published before the deal.

For rooms dealt online (no studio shoe), the server shuffles a full deck with the operating
system's randomness and a fresh 32-byte salt, and publishes the *commitment* before the first card:
the SHA-256 (hex) of the deck order as comma-separated card codes, a colon, and the salt in hex —
``"AS,7D,…,QC:3f9a…"``. After the hand it publishes the deck and the salt; anyone can then recompute
the hash (``studio verify``) and see that the deal was fixed before anyone acted, and not changed.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import re
import secrets
from dataclasses import dataclass

from services.cards import FULL_DECK, Card
from services.cards.errors import CardError
from services.games.base import GameError

SALT_BYTES = 32
HEX_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class ShuffleError(GameError):
    """A published shuffle that does not check out; the message says which part."""

    code = "shuffle_mismatch"


@dataclass(frozen=True, slots=True)
class Shuffle:
    deck: tuple[Card, ...]  # in dealing order
    salt: str  # 64 hex digits

    @classmethod
    def new(cls) -> Shuffle:
        """A full deck shuffled with the operating system's randomness, and a fresh salt."""
        deck = list(FULL_DECK)
        random.SystemRandom().shuffle(deck)
        return cls(tuple(deck), secrets.token_hex(SALT_BYTES))

    @classmethod
    def drawn(cls, rng: random.Random) -> Shuffle:
        """A shuffle from ``rng`` — for a simulation that must replay from its seed, never for a table."""
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        return cls(tuple(deck), f"{rng.getrandbits(SALT_BYTES * 8):0{SALT_BYTES * 2}x}")

    def preimage(self) -> str:
        return ",".join(str(card) for card in self.deck) + ":" + self.salt

    def commitment(self) -> str:
        """What is published before the deal."""
        return hashlib.sha256(self.preimage().encode("ascii")).hexdigest()

    def revealed(self) -> dict[str, object]:
        """What is published after the hand: enough for anyone to check the commitment."""
        return {"commitment": self.commitment(), "deck": [str(card) for card in self.deck], "salt": self.salt}


def verify(commitment: object, deck: object, salt: object) -> Shuffle:
    """The shuffle, if ``deck`` and ``salt`` hash to ``commitment`` and the deck is one whole deck; else
    ``ShuffleError`` naming what is wrong."""
    if not isinstance(commitment, str) or not HEX_DIGEST.match(commitment.lower()):
        raise ShuffleError(f"commitment: expected 64 hex digits (a SHA-256), got {commitment!r}")
    if not isinstance(salt, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", salt):
        raise ShuffleError(f"salt: expected 64 hex digits ({SALT_BYTES} bytes), got {salt!r}")
    cards = _deck(deck)
    shuffle = Shuffle(cards, salt)
    if not hmac.compare_digest(shuffle.commitment(), commitment.lower()):
        raise ShuffleError(
            f"the deck and salt hash to {shuffle.commitment()}, not to the published commitment {commitment.lower()}"
        )
    return shuffle


def _deck(deck: object) -> tuple[Card, ...]:
    if not isinstance(deck, list) or not all(isinstance(code, str) for code in deck):
        raise ShuffleError("deck: expected a list of 52 card codes in dealing order")
    try:
        cards = tuple(Card.from_code(code) for code in deck)
    except CardError as error:
        raise ShuffleError(f"deck: {error}") from None
    if len(cards) != len(FULL_DECK) or len(set(cards)) != len(cards):
        missing = sorted(str(card) for card in set(FULL_DECK) - set(cards))
        raise ShuffleError(f"deck: expected each of the 52 cards once, got {len(cards)} (missing: {missing[:5]})")
    return cards
