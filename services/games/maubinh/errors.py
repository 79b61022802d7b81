"""Exceptions of the Mậu Binh engine. All are ``GameError``s (so ``ValueError``s): they describe bad input."""

from services.games.base import GameError, GameSettingsError


class MauBinhError(GameError):
    """Base of every Mậu Binh error."""


class SettingsError(MauBinhError, GameSettingsError):
    """A room setting is unknown or out of range."""


class HandError(MauBinhError):
    """Cards that cannot be a player's hand: wrong count per chi, a card twice, an unknown code."""


class TableError(MauBinhError):
    """A table that cannot be scored: wrong number of players, a card dealt twice, unreadable input."""
