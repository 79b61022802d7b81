"""Exceptions of the Tiến Lên engine. All are ``ValueError``s: they describe bad input."""


class TienLenError(ValueError):
    """Base of every Tiến Lên error."""


class SettingsError(TienLenError):
    """A room setting is unknown or out of range."""


class DealError(TienLenError):
    """Players or hands that cannot start a round (wrong count, duplicate or unknown cards)."""


class CombinationError(TienLenError):
    """Cards that form no Tiến Lên combination."""


class IllegalPlayError(TienLenError):
    """A play or pass the round does not allow now; the message names the player, the cards and the trick."""


class RoomEntryError(TienLenError):
    """A player whose experience points are below the room tier's minimum."""


class TranscriptError(TienLenError):
    """A replay transcript that cannot be read."""
