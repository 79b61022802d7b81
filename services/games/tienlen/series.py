"""Who leads a round, across the rounds of one table.

A **starting round** — the table's first, one after an instant win, or one after the previous winner
left — is led by the holder of 3♠ (or of the lowest card dealt). Otherwise the previous winner
leads, unless a player was *cóng* (played no card) in the last two rounds in a row: that player
leads, and of two such players the one nearest the previous winner in order of play. Losing to an
instant win is not *cóng*.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from services.games.tienlen.events import RoundResult


@dataclass(frozen=True, slots=True)
class NextRound:
    starting_round: bool
    leader: str | None  # None in a starting round: the deal names the leader


@dataclass(slots=True)
class Series:
    """The memory a table keeps between rounds."""

    previous_winner: str | None = None
    after_instant_win: bool = False
    cong_streak: dict[str, int] = field(default_factory=dict)

    def record(self, players: Sequence[str], result: RoundResult) -> None:
        self.previous_winner = result.winner
        self.after_instant_win = result.instant_win is not None
        if result.instant_win is None:
            self.cong_streak = {
                player: self.cong_streak.get(player, 0) + 1 if player in result.cong else 0 for player in players
            }

    def next_round(self, players: Sequence[str]) -> NextRound:
        """How the next round with ``players`` (in order of play) starts."""
        winner = self.previous_winner
        if winner is None or winner not in players or self.after_instant_win:
            return NextRound(starting_round=True, leader=None)
        start = players.index(winner)
        for step in range(1, len(players)):
            player = players[(start + step) % len(players)]
            if self.cong_streak.get(player, 0) >= 2:
                return NextRound(starting_round=False, leader=player)
        return NextRound(starting_round=False, leader=winner)
