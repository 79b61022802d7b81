"""Exceptions of the Tiến Lên engine. All are ``GameError``s (so ``ValueError``s): they describe bad input."""

from services.games.base import GameError, GameSettingsError, NotAllowedError, NotExpectedError


class TienLenError(GameError):
    """Base of every Tiến Lên error."""


class SettingsError(TienLenError, GameSettingsError):
    """A room setting is unknown or out of range."""


class DealError(TienLenError):
    """Players or hands that cannot start a round (wrong count, duplicate or unknown cards)."""


class CombinationError(TienLenError):
    """Cards that form no Tiến Lên combination."""


class IllegalPlayError(TienLenError, NotExpectedError):
    """A play or pass the round does not allow now; the message names the player, the cards and the trick."""


class RoomEntryError(TienLenError, NotAllowedError):
    """A player whose experience points are below the room tier's minimum."""

    code = "room_tier_too_high"


class TranscriptError(TienLenError):
    """A replay transcript that cannot be read."""
