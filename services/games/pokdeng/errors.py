"""Exceptions of the Pok Deng engine. All are ``GameError``s (so ``ValueError``s): they describe bad input."""

from services.games.base import GameError, GameSettingsError, NotExpectedError, NotYourMoveError


class PokDengError(GameError):
    """Base of every Pok Deng error."""


class SettingsError(PokDengError, GameSettingsError):
    """A table setting is unknown or out of range."""


class IllegalActionError(PokDengError, NotExpectedError):
    """The round is not waiting for this action now."""


class WagerError(PokDengError):
    """A wager that breaks the betting rules or the table limits."""

    code = "invalid_wager"


class InsuranceError(PokDengError):
    """An insurance purchase that is not offered or of a wrong amount."""

    code = "invalid_insurance"


class DecisionError(PokDengError, NotYourMoveError):
    """A draw/stand choice by someone who may not make it."""


class TranscriptError(PokDengError):
    """A round transcript that cannot be replayed."""

    code = "invalid_transcript"
