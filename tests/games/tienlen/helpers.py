"""Deals for the Tiến Lên tests: hands named in part, the rest filled from the unused cards."""

from __future__ import annotations

from collections.abc import Sequence

from services.games.tienlen import TienLenRound, TienLenSettings
from services.games.tienlen.cards import parse

NO_INSTANT_WINS = TienLenSettings(instant_wins=())


def c(text: str) -> tuple[int, ...]:
    """Strengths of space-separated codes: ``c("3S 4S")``."""
    return parse(text.split())


def deal(players: Sequence[str], **partial: str) -> dict[str, tuple[int, ...]]:
    """Each player's named cards, topped up to 13 with the highest unused cards (undealt ones stay low)."""
    named = {player: c(partial.get(player, "")) for player in players}
    used = {card for cards in named.values() for card in cards}
    spare = [card for card in range(51, -1, -1) if card not in used]
    hands = {}
    for player in players:
        need = 13 - len(named[player])
        hands[player], spare = named[player] + tuple(spare[:need]), spare[need:]
    return hands


def round_of(
    players: Sequence[str] = ("p1", "p2", "p3", "p4"),
    *,
    leader: str | None = "p1",
    settings: TienLenSettings = NO_INSTANT_WINS,
    **partial: str,
) -> TienLenRound:
    """A round with the named cards; ``leader=None`` makes it a starting round."""
    return TienLenRound(
        players, deal(players, **partial), starting_round=leader is None, leader=leader, settings=settings
    )
