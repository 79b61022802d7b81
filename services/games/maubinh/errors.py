"""Exceptions of the Mậu Binh engine. All are ``ValueError``s: they describe bad input."""


class MauBinhError(ValueError):
    """Base of every Mậu Binh error."""


class SettingsError(MauBinhError):
    """A room setting is unknown or out of range."""


class HandError(MauBinhError):
    """Cards that cannot be a player's hand: wrong count per chi, a card twice, an unknown code."""


class TableError(MauBinhError):
    """A table that cannot be scored: wrong number of players, a card dealt twice, unreadable input."""
